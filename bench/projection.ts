/**
 * `npm run bench -- projection` (issue 5). For generated 1,000 / 10,000 / 100,000-node threads,
 * measured in this run:
 * - load: a fresh engine reading the thread from a SQLite file (`getState`, best of 3) — the
 *   cost of merely loading the thread;
 * - cold: the first projection of that freshly loaded state (no memoised node facts);
 * - p50 after append: one node appended, then a projection — the steady state of an agent that
 *   compiles before every model call (targets p50 ≤ 25 ms at 10,000, ≤ 250 ms at 100,000);
 * - p50 repeat: the same state projected again with another query;
 * - the ratio of the after-append p50 to the load time, and how each figure grows per 10× nodes
 *   (10× is linear).
 * Wall-clock figures; CPU time of the process is printed beside the p50s, since shared machines
 * make wall time noisy.
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

interface Figures {
  nodes: number;
  loadMs: number;
  coldMs: number;
  appendP50: number;
  appendCpuP50: number;
  repeatP50: number;
  repeatCpuP50: number;
  promptTokens: number;
}

export async function runProjectionBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'weft-bench-projection-'));
  try {
    const figures: Figures[] = [];
    for (const nodes of SIZES) figures.push(await measureSize(root, nodes));
    print(figures);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function measureSize(root: string, nodes: number): Promise<Figures> {
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

  const rounds = nodes >= 100_000 ? 15 : 40;
  let current = loaded!;
  const append = timed(rounds, (i) => {
    const next = appendNodes(
      current,
      [{ kind: 'inference', payload: { text: `bench step ${i} deploy retry` } }],
      '2026-03-01T00:00:00.000Z',
    );
    if (!next.ok) throw new Error(next.error.message);
    current = next.value.graph;
    return () => compile(current, QUERIES[i % QUERIES.length]!);
  });
  const repeat = timed(rounds, (i) => () => compile(current, QUERIES[(i + 1) % QUERIES.length]!));
  const result = compileProjection(current, { query: QUERIES[0]! });
  return {
    nodes,
    loadMs,
    coldMs,
    appendP50: percentile(append.wall, 50),
    appendCpuP50: percentile(append.cpu, 50),
    repeatP50: percentile(repeat.wall, 50),
    repeatCpuP50: percentile(repeat.cpu, 50),
    promptTokens: result.ok ? result.value.tokenEstimate : -1,
  };
}

function compile(graph: GraphState, query: string): void {
  const result = compileProjection(graph, { query });
  if (!result.ok) throw new Error(result.error.message);
}

/** `prepare(i)` runs untimed and returns the timed step. Wall and CPU milliseconds per step. */
function timed(
  rounds: number,
  prepare: (i: number) => () => void,
): { wall: number[]; cpu: number[] } {
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
  for (const f of figures) {
    const n = fmt(f.nodes);
    const target = TARGETS[f.nodes];
    rows.push(
      {
        measure: `${n} nodes: load from SQLite (best of 3)`,
        value: `${fmt(f.loadMs, 1)} ms`,
        target: '',
        verdict: '',
      },
      {
        measure: `${n} nodes: first projection after load`,
        value: `${fmt(f.coldMs, 1)} ms`,
        target: '',
        verdict: '',
      },
      {
        measure: `${n} nodes: projection after an append, p50`,
        value: `${fmt(f.appendP50, 2)} ms (cpu ${fmt(f.appendCpuP50, 2)} ms)`,
        target: target === undefined ? '' : `≤ ${target} ms`,
        verdict: target === undefined ? '' : f.appendP50 <= target ? 'ok' : 'MISSED',
      },
      {
        measure: `${n} nodes: same state again, p50`,
        value: `${fmt(f.repeatP50, 2)} ms (cpu ${fmt(f.repeatCpuP50, 2)} ms)`,
        target: '',
        verdict: '',
      },
      {
        measure: `${n} nodes: after-append p50 / load`,
        value: `${fmt((100 * f.appendP50) / f.loadMs, 2)} %`,
        target: '',
        verdict: '',
      },
      {
        measure: `${n} nodes: prompt tokens (default input)`,
        value: fmt(f.promptTokens),
        target: '',
        verdict: '',
      },
    );
  }
  for (let i = 1; i < figures.length; i++) {
    const a = figures[i - 1]!;
    const b = figures[i]!;
    const growth = b.appendP50 / a.appendP50;
    const nodes = b.nodes / a.nodes;
    rows.push({
      measure: `growth ${fmt(a.nodes)} → ${fmt(b.nodes)} (after-append p50 / cold / load)`,
      value: `${fmt(growth, 1)}× / ${fmt(b.coldMs / a.coldMs, 1)}× / ${fmt(b.loadMs / a.loadMs, 1)}×`,
      target: `≤ ${fmt(nodes * 1.5, 0)}× (linear ${fmt(nodes)}× + noise)`,
      verdict: growth <= nodes * 1.5 ? 'ok' : 'MISSED',
    });
  }
  printTable('Projection compiler (chars tokenizer, default input)', rows);
}
