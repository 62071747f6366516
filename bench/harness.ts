/** Small timing helpers shared by the benchmarks. Figures are printed, never asserted. */
import { performance } from 'node:perf_hooks';

export interface Timing {
  /** Total milliseconds. */
  ms: number;
  /** Operations per second. */
  opsPerSec: number;
}

/** Runs `fn` once for warm-up, then `rounds` times, and returns the fastest round. */
export function measure(ops: number, fn: () => void, rounds = 5): Timing {
  fn();
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    fn();
    best = Math.min(best, performance.now() - start);
  }
  return { ms: best, opsPerSec: (ops / best) * 1000 };
}

/** Per-call latencies in milliseconds for `count` calls of `fn`. */
export function latencies(count: number, fn: (i: number) => void): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    fn(i);
    out.push(performance.now() - start);
  }
  return out;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)]!;
}

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export interface Row {
  measure: string;
  value: string;
  target: string;
  verdict: 'ok' | 'MISSED' | '';
}

export function printTable(title: string, rows: Row[]): void {
  const widths = [
    Math.max(7, ...rows.map((r) => r.measure.length)),
    Math.max(5, ...rows.map((r) => r.value.length)),
    Math.max(6, ...rows.map((r) => r.target.length)),
  ];
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 6)).join(' | ')} |`;
  console.log(`\n${title}\n`);
  console.log(line(['measure', 'value', 'target', 'result']));
  console.log(line(widths.map((w) => '-'.repeat(w)).concat('------')));
  for (const row of rows) console.log(line([row.measure, row.value, row.target, row.verdict]));
  console.log('');
}
