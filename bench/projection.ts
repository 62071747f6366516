/**
 * `npm run bench -- projection`. For generated 1,000 / 10,000 / 100,000-node threads,
 * measured in this run:
 * - load: a fresh engine reading the thread from a SQLite file (`getState`, best of 3) — the
 *   cost of merely loading the thread;
 * - cold: the first projection of that freshly loaded state (no memoised node facts);
 * - after append: one node appended, then a projection — the steady state of an agent that
 *   compiles before every model call (targets p50 ≤ 25 ms at 10,000, ≤ 250 ms at 100,000);
 * - repeat: the same state projected again with another query;
 * - the ratio of the after-append p50 to the load time, and how the cost grows per 10× nodes.
 *
 * Linearity verdict: growth per 10× nodes ≤ 15× (linear, 10×, plus half again for noise). A shared
 * machine only ever adds time, and adds more of it to longer steps (a 40 ms step is preempted where
 * a 4 ms one is not), so the after-append steps run in TRIALS trials that interleave the three
 * sizes, each trial's median per size is taken, and the verdict uses each size's best trial
 * median. The pooled p50s, the worst trial's growth and the growth of CPU time are printed beside
 * it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { appendNodes, exportAgentState, type GraphState } from '../src/core/graph/index.js';
import { compileProjection } from '../src/core/projection/index.js';
import { createEngine, openEngine } from '../src/engine/index.js';
import { generateThread } from '../test/projection/generate.js';
import { fmt, percentile, printTable, type Row } from './harness.js';

const SIZES = [1_000, 10_000, 100_000];
const TARGETS: Record<number, number> = { 10000: 25, 100000: 250 };
const QUERIES = ['deploy schema', 'retry cache', 'config read file', 'token budget'];
/** Growth per 10× nodes the verdict accepts: linear plus half again. */
const LINEAR_SLACK = 1.5;
const TRIALS = 7;
const WARMUP = 10;
const roundsPerTrial = (nodes: number): number => (nodes >= 100_000 ? 5 : 15);

interface Loaded {
  nodes: number;
  loadMs: number;
  coldMs: number;
  graph: GraphState;
}

interface Samples {
  wall: number[];
  cpu: number[];
}

interface Figures {
  nodes: number;
  loadMs: number;
  coldMs: number;
  append: Samples;
  /** Per trial: median wall and CPU ms of the after-append steps. */
  trialWall: number[];
  trialCpu: number[];
  repeat: Samples;
  promptTokens: number;
}

export async function runProjectionBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'weft-bench-projection-'));
  try {
    const loaded: Loaded[] = [];
    for (const nodes of SIZES) loaded.push(await loadSize(root, nodes));
    print(measure(loaded));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function loadSize(root: string, nodes: number): Promise<Loaded> {
  const { graph } = generateThread({ seed: 1, nodes });
  const url = `file:${join(root, `projection-${nodes}.db`)}`;
  const writer = await openEngine(url);
  const threadId = `bench-${nodes}`;
  const imported = await writer.importState({ threadId, state: exportAgentState(graph) });
  if (!imported.ok) throw new Error(imported.error.message);
  await writer.close();

  let loadMs = Number.POSITIVE_INFINITY;
  let coldMs = Number.POSITIVE_INFINITY;
  let loaded: GraphState | undefined;
  for (let round = 0; round < 3; round++) {
    const reader = createEngine({ databaseUrl: url });
    const start = performance.now();
    const state = await reader.getState(threadId);
    loadMs = Math.min(loadMs, performance.now() - start);
    await reader.close();
    if (!state.ok) throw new Error(state.error.message);
    const t = performance.now();
    compile(state.value.graph, QUERIES[0]!);
    coldMs = Math.min(coldMs, performance.now() - t);
    loaded = state.value.graph;
  }
  return { nodes, loadMs, coldMs, graph: loaded! };
}

/** The after-append and repeat steps of every size, trials interleaving the sizes. */
function measure(loaded: Loaded[]): Figures[] {
  const current = loaded.map((l) => l.graph);
  let step = 0;
  const appendStep = (i: number): (() => void) => {
    const next = appendNodes(
      current[i]!,
      [{ kind: 'inference', payload: { text: `bench step ${step} deploy retry` } }],
      '2026-03-01T00:00:00.000Z',
    );
    if (!next.ok) throw new Error(next.error.message);
    current[i] = next.value.graph;
    const query = QUERIES[step++ % QUERIES.length]!;
    return () => compile(current[i]!, query);
  };
  const figures: Figures[] = loaded.map((l) => ({
    nodes: l.nodes,
    loadMs: l.loadMs,
    coldMs: l.coldMs,
    append: { wall: [], cpu: [] },
    trialWall: [],
    trialCpu: [],
    repeat: { wall: [], cpu: [] },
    promptTokens: -1,
  }));
  for (let i = 0; i < loaded.length; i++) timed(WARMUP, () => appendStep(i));
  for (let trial = 0; trial < TRIALS; trial++) {
    loaded.forEach((l, i) => {
      const f = figures[i]!;
      const samples = timed(roundsPerTrial(l.nodes), () => appendStep(i));
      f.append.wall.push(...samples.wall);
      f.append.cpu.push(...samples.cpu);
      f.trialWall.push(percentile(samples.wall, 50));
      f.trialCpu.push(percentile(samples.cpu, 50));
      const again = timed(
        roundsPerTrial(l.nodes),
        (r) => () => compile(current[i]!, QUERIES[(trial + r + 1) % QUERIES.length]!),
      );
      f.repeat.wall.push(...again.wall);
      f.repeat.cpu.push(...again.cpu);
    });
  }
  figures.forEach((f, i) => {
    const result = compileProjection(current[i]!, { query: QUERIES[0]! });
    f.promptTokens = result.ok ? result.value.tokenEstimate : -1;
  });
  return figures;
}
function compile(graph: GraphState, query: string): void {
  const result = compileProjection(graph, { query });
  if (!result.ok) throw new Error(result.error.message);
}

/** `prepare(i)` runs untimed and returns the timed step. Wall and CPU milliseconds per step. */
function timed(rounds: number, prepare: (i: number) => () => void): Samples {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const step = prepare(i);
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    step();
    wall.push(performance.now() - start);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
  }
  return { wall, cpu };
}

function print(figures: Figures[]): void {
  const rows: Row[] = [];
  const row = (measure: string, value: string, target = '', verdict: Row['verdict'] = '') =>
    rows.push({ measure, value, target, verdict });
  for (const f of figures) {
    const n = fmt(f.nodes);
    const target = TARGETS[f.nodes];
    const p50 = percentile(f.append.wall, 50);
    row(`${n} nodes: load from SQLite (best of 3)`, `${fmt(f.loadMs, 1)} ms`);
    row(`${n} nodes: first projection after load`, `${fmt(f.coldMs, 1)} ms`);
    row(
      `${n} nodes: projection after an append, p50 of ${f.append.wall.length}`,
      `${fmt(p50, 2)} ms (cpu ${fmt(percentile(f.append.cpu, 50), 2)} ms)`,
      target === undefined ? '' : `≤ ${target} ms`,
      target === undefined ? '' : p50 <= target ? 'ok' : 'MISSED',
    );
    row(
      `${n} nodes: after an append, best / worst of ${TRIALS} trial medians`,
      `${fmt(Math.min(...f.trialWall), 2)} / ${fmt(Math.max(...f.trialWall), 2)} ms`,
    );
    row(
      `${n} nodes: same state again, p50`,
      `${fmt(percentile(f.repeat.wall, 50), 2)} ms (cpu ${fmt(percentile(f.repeat.cpu, 50), 2)} ms)`,
    );
    row(`${n} nodes: after-append p50 / load`, `${fmt((100 * p50) / f.loadMs, 2)} %`);
    row(`${n} nodes: prompt tokens (default input)`, fmt(f.promptTokens));
  }
  for (let i = 1; i < figures.length; i++) {
    const a = figures[i - 1]!;
    const b = figures[i]!;
    const limit = (b.nodes / a.nodes) * LINEAR_SLACK;
    const growth = Math.min(...b.trialWall) / Math.min(...a.trialWall);
    const worst = Math.max(...b.trialWall.map((ms, t) => ms / a.trialWall[t]!));
    const cpu = Math.min(...b.trialCpu) / Math.min(...a.trialCpu);
    const pooled = percentile(b.append.wall, 50) / percentile(a.append.wall, 50);
    const span = `${fmt(a.nodes)} → ${fmt(b.nodes)}`;
    row(
      `growth ${span}: after-append (best trial medians)`,
      `${fmt(growth, 1)}× (cpu ${fmt(cpu, 1)}×, pooled p50 ${fmt(pooled, 1)}×, worst trial ${fmt(worst, 1)}×)`,
      `≤ ${fmt(limit, 0)}× (linear ${fmt(b.nodes / a.nodes)}× + half)`,
      growth <= limit ? 'ok' : 'MISSED',
    );
    row(
      `growth ${span}: first projection / load`,
      `${fmt(b.coldMs / a.coldMs, 1)}× / ${fmt(b.loadMs / a.loadMs, 1)}×`,
    );
  }
  printTable('Projection compiler (chars tokenizer, default input)', rows);
}
