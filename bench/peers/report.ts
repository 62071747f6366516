/** Figures, the growth fit and the printed tables of the peer benchmark. */
import { fmt } from '../harness.js';
import { type Backend, NO_STORAGE, ON_WEFT_SAVER } from './side.js';

/** A figure that was measured, extrapolated from the measured growth, or not taken. */
export type Figure = { value: number; extrapolated?: boolean } | undefined;

/** Time spent writing a span of turns: wall clock, and the process's CPU time (all its threads). */
export interface SpanTime {
  wallMs: number;
  cpuMs: number;
}

/**
 * Write time per turn over two spans of `span` turns of one turn-by-turn run: the second (the
 * first is the warm-up) and the last (both in the same run, so the machine's load weighs on both
 * alike).
 */
export interface PerTurn {
  span: number;
  first: SpanTime;
  last: SpanTime;
}

export interface SideResult {
  system: 'Weft' | 'LangGraph' | typeof ON_WEFT_SAVER | typeof NO_STORAGE;
  backend: Backend;
  turns: number;
  /** How the history was written: turn by turn, or compacted into two invokes (LangGraph). */
  history: 'turns' | 'compacted';
  writeMs: Figure;
  bytes: Figure;
  latestMs: Figure;
  coldLatestMs: Figure;
  timeTravelMs: Figure;
  forkMs: Figure;
  perTurn?: PerTurn;
}

/** Cumulative write time and database bytes after `n` turns, sampled during a turn-by-turn run. */
export interface GrowthSample {
  n: number;
  ms: number;
  bytes: number;
}

/** Least-squares fit of y = a·n² + b·n + c. */
export function fitQuadratic(
  points: ReadonlyArray<readonly [number, number]>,
): (n: number) => number {
  // Normal equations for the basis (n², n, 1).
  const s = [0, 0, 0, 0, 0];
  const t = [0, 0, 0];
  for (const [n, y] of points) {
    let p = 1;
    for (let k = 0; k <= 4; k++) {
      s[k]! += p;
      if (k <= 2) t[k]! += p * y;
      p *= n;
    }
  }
  // Solve [[s4 s3 s2][s3 s2 s1][s2 s1 s0]] · [a b c] = [t2 t1 t0] (Cramer's rule).
  const m = [
    [s[4]!, s[3]!, s[2]!],
    [s[3]!, s[2]!, s[1]!],
    [s[2]!, s[1]!, s[0]!],
  ];
  const rhs = [t[2]!, t[1]!, t[0]!];
  const det = (x: number[][]) =>
    x[0]![0]! * (x[1]![1]! * x[2]![2]! - x[1]![2]! * x[2]![1]!) -
    x[0]![1]! * (x[1]![0]! * x[2]![2]! - x[1]![2]! * x[2]![0]!) +
    x[0]![2]! * (x[1]![0]! * x[2]![1]! - x[1]![1]! * x[2]![0]!);
  const d = det(m);
  if (d === 0) throw new Error('cannot fit the growth: too few distinct samples');
  const coef = [0, 1, 2].map(
    (col) => det(m.map((row, i) => row.map((v, j) => (j === col ? rhs[i]! : v)))) / d,
  );
  const [a, b, c] = coef as [number, number, number];
  return (n) => a * n * n + b * n + c;
}

export const formatMs = (ms: number): string =>
  ms < 1
    ? `${fmt(ms, 2)} ms`
    : ms < 1000
      ? `${fmt(ms, ms < 10 ? 1 : 0)} ms`
      : ms < 600_000
        ? `${fmt(ms / 1000, 1)} s`
        : `${fmt(ms / 60_000, 0)} min`;

export const formatBytes = (bytes: number): string =>
  bytes < 1024 * 1024
    ? `${fmt(bytes / 1024, 1)} KB`
    : bytes < 1024 ** 3
      ? `${fmt(bytes / 1024 ** 2, 1)} MB`
      : `${fmt(bytes / 1024 ** 3, 1)} GB`;

const show = (figure: Figure, format: (n: number) => string): string =>
  figure === undefined ? '—' : `${figure.extrapolated ? '≈' : ''}${format(figure.value)}`;

function ratio(weft: Figure, peer: Figure): string {
  if (weft === undefined || peer === undefined || peer.value === 0) return '—';
  const r = weft.value / peer.value;
  const mark = weft.extrapolated || peer.extrapolated ? '≈' : '';
  return `${mark}${r >= 10 ? fmt(r, 0) : r >= 0.1 ? fmt(r, 2) : r >= 0.001 ? fmt(r, 3) : r.toExponential(1)}×`;
}

const MEASURES: Array<{
  label: string;
  pick: (r: SideResult) => Figure;
  format: (n: number) => string;
}> = [
  { label: 'write all turns', pick: (r) => r.writeMs, format: formatMs },
  { label: 'database bytes', pick: (r) => r.bytes, format: formatBytes },
  {
    label: 'bytes per turn',
    pick: (r) =>
      r.bytes === undefined ? undefined : { ...r.bytes, value: r.bytes.value / r.turns },
    format: formatBytes,
  },
  { label: 'read latest (writer)', pick: (r) => r.latestMs, format: formatMs },
  { label: 'read latest (fresh client)', pick: (r) => r.coldLatestMs, format: formatMs },
  { label: 'state at middle turn', pick: (r) => r.timeTravelMs, format: formatMs },
  { label: 'fork at middle turn', pick: (r) => r.forkMs, format: formatMs },
];

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The comparison: one row per size, backend and measure; ratios below 1 mean Weft is smaller/faster. */
export function comparisonTable(results: readonly SideResult[]): string {
  const rows: string[][] = [];
  const keys = [...new Set(results.map((r) => `${r.turns}|${r.backend}`))];
  for (const key of keys) {
    const [turns, backend] = key.split('|') as [string, Backend];
    const weft = results.find((r) => r.system === 'Weft' && `${r.turns}|${r.backend}` === key);
    const peer = results.find((r) => r.system === 'LangGraph' && `${r.turns}|${r.backend}` === key);
    const onWeft = results.find(
      (r) => r.system === ON_WEFT_SAVER && `${r.turns}|${r.backend}` === key,
    );
    for (const m of MEASURES) {
      const w = weft === undefined ? undefined : m.pick(weft);
      const p = peer === undefined ? undefined : m.pick(peer);
      const o = onWeft === undefined ? undefined : m.pick(onWeft);
      rows.push([
        fmt(Number(turns)),
        backend,
        m.label,
        show(w, m.format),
        show(p, m.format),
        ratio(w, p),
        show(o, m.format),
        ratio(o, p),
      ]);
    }
  }
  return table(
    [
      'turns',
      'backend',
      'measure',
      'Weft',
      'LangGraph',
      'Weft/LangGraph',
      ON_WEFT_SAVER,
      'on WeftSaver/LangGraph',
    ],
    rows,
  );
}

/** Bytes per turn as N grows, per system and backend, next to the workload's own payload bytes. */
export function growthTable(
  results: readonly SideResult[],
  payloadPerTurn: Map<number, number>,
): string {
  const columns = [...new Set(results.map((r) => `${r.system} ${r.backend}`))];
  const sizes = [...new Set(results.map((r) => r.turns))].sort((a, b) => a - b);
  const rows = sizes.map((n) => [
    fmt(n),
    formatBytes(payloadPerTurn.get(n) ?? 0),
    ...columns.map((c) => {
      const r = results.find((x) => x.turns === n && `${x.system} ${x.backend}` === c);
      return r?.bytes === undefined
        ? '—'
        : show({ ...r.bytes, value: r.bytes.value / n }, formatBytes);
    }),
  ]);
  return table(['turns', 'payload/turn', ...columns], rows);
}

const spans = (span: number, turns: number) =>
  `${fmt(span + 1)}–${fmt(2 * span)} / ${fmt(turns - span + 1)}–${fmt(turns)}`;

const growthRatio = (first: number, last: number) => (first > 0 ? `${fmt(last / first, 2)}×` : '—');

/**
 * Write time per turn at the start and at the end of each turn-by-turn run, wall and CPU, with
 * last/first; and, where the run without storage was taken at the same size, the CPU per turn
 * WeftSaver adds above it (LangGraph's own work per turn being what that run costs).
 */
export function perTurnTable(results: readonly SideResult[]): string {
  const rows: string[][] = [];
  const perTurn = (ms: number, span: number) => formatMs(ms / span);
  for (const r of results) {
    const p = r.perTurn;
    if (p === undefined) continue;
    rows.push([
      fmt(r.turns),
      r.system === NO_STORAGE ? '—' : r.backend,
      r.system,
      spans(p.span, r.turns),
      `${perTurn(p.first.wallMs, p.span)} → ${perTurn(p.last.wallMs, p.span)}`,
      growthRatio(p.first.wallMs, p.last.wallMs),
      `${perTurn(p.first.cpuMs, p.span)} → ${perTurn(p.last.cpuMs, p.span)}`,
      growthRatio(p.first.cpuMs, p.last.cpuMs),
    ]);
  }
  for (const r of results) {
    const floor = results.find((f) => f.system === NO_STORAGE && f.turns === r.turns)?.perTurn;
    const p = r.perTurn;
    if (r.system !== ON_WEFT_SAVER || p === undefined || floor?.span !== p.span) continue;
    const first = p.first.cpuMs - floor.first.cpuMs;
    const last = p.last.cpuMs - floor.last.cpuMs;
    rows.push([
      fmt(r.turns),
      r.backend,
      `WeftSaver's own (${ON_WEFT_SAVER} − ${NO_STORAGE})`,
      spans(p.span, r.turns),
      '',
      '',
      `${perTurn(first, p.span)} → ${perTurn(last, p.span)}`,
      growthRatio(first, last),
    ]);
  }
  return table(
    [
      'turns',
      'backend',
      'system',
      'turns compared',
      'wall per turn',
      'last/first',
      'CPU per turn',
      'last/first',
    ],
    rows,
  );
}
