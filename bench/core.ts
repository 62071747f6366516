/**
 * Core benchmarks (issue: core engine). Prints, measured in this run:
 * - node ids per second vs raw SHA-256 over the same canonical bytes (target ≥ 50% of raw);
 * - full validation of a generated 100,000-node AgentState (target ≤ 1.5 s);
 * - strict replay of 100,000 log entries (target ≤ 1 s).
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { canonicalJson } from '../src/core/canonical.js';
import {
  type AgentState,
  appendNodes,
  createGraph,
  exportAgentState,
  type GraphState,
  validateAgentState,
} from '../src/core/graph/index.js';
import { sha256Hex } from '../src/core/hash.js';
import { type NodeIdentityInput, nodeId, nodeIdentityText } from '../src/core/identity.js';
import { type LogEntry, replay } from '../src/core/log/index.js';
import {
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  planCreateThread,
  planDispatch,
  planRecordUsage,
  planStartRun,
  type ThreadState,
} from '../src/core/thread/index.js';
import { fmt, measure, printTable, type Row } from './harness.js';

const NODE_COUNT = 100_000;
const ENTRY_COUNT = 100_000;

/** A deterministic pseudo-random source so every run measures the same data. */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const KINDS = ['inference', 'tool_call', 'tool_result', 'answer', 'verification'] as const;

function text(rand: () => number, words: number): string {
  const vocabulary = [
    'agent',
    'file',
    'read',
    'config',
    'plan',
    'result',
    'tool',
    'call',
    'user',
    'goal',
    'check',
    'write',
  ];
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(vocabulary[Math.floor(rand() * vocabulary.length)]!);
  return out.join(' ');
}

function identityInputs(count: number): NodeIdentityInput[] {
  const rand = lcg(1);
  const inputs: NodeIdentityInput[] = [];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const parents = ids.length === 0 ? [] : [ids[Math.floor(rand() * ids.length)]!];
    const input: NodeIdentityInput = {
      kind: KINDS[i % KINDS.length]!,
      parents,
      payload: { text: text(rand, 30), step: i, ok: rand() > 0.5, tags: ['a', 'b'] },
    };
    if (i % 10 === 0) input.resourceKey = `resource:file:src/file-${i % 100}.ts`;
    inputs.push(input);
    ids.push(nodeId(input));
  }
  return inputs;
}

function benchIds(rows: Row[]): void {
  // Payloads as a server receives them: parsed JSON, keys in the writer's order.
  const inputs = JSON.parse(JSON.stringify(identityInputs(NODE_COUNT))) as NodeIdentityInput[];
  const texts = inputs.map(nodeIdentityText);
  let sink = 0;
  const oneShot = measure(NODE_COUNT, () => {
    for (const t of texts) sink += sha256Hex(t).length;
  });
  const streaming = measure(NODE_COUNT, () => {
    for (const t of texts) sink += createHash('sha256').update(t, 'utf8').digest('hex').length;
  });
  const ids = measure(NODE_COUNT, () => {
    for (const input of inputs) sink += nodeId(input).length;
  });
  if (sink === 0) throw new Error('unreachable');
  const vsStreaming = ids.opsPerSec / streaming.opsPerSec;
  const vsOneShot = ids.opsPerSec / oneShot.opsPerSec;
  rows.push({
    measure: 'raw SHA-256, createHash().update().digest()',
    value: `${fmt(streaming.opsPerSec)} /s`,
    target: 'baseline',
    verdict: '',
  });
  rows.push({
    measure: 'raw SHA-256, one-shot crypto.hash()',
    value: `${fmt(oneShot.opsPerSec)} /s`,
    target: 'baseline',
    verdict: '',
  });
  rows.push({
    measure: 'nodeId (canonicalise + one-shot hash)',
    value: `${fmt(ids.opsPerSec)} /s`,
    target: '',
    verdict: '',
  });
  rows.push({
    measure: 'nodeId vs createHash baseline',
    value: `${fmt(vsStreaming * 100, 1)}%`,
    target: '≥ 50%',
    verdict: vsStreaming >= 0.5 ? 'ok' : 'MISSED',
  });
  rows.push({
    measure: 'nodeId vs one-shot baseline',
    value: `${fmt(vsOneShot * 100, 1)}%`,
    target: '(context)',
    verdict: '',
  });
}

function buildState(count: number): AgentState {
  const created = createGraph();
  if (!created.ok) throw new Error(created.error.message);
  let graph: GraphState = created.value;
  const rand = lcg(2);
  for (let i = 0; i < count; i++) {
    const draft = {
      kind: i === 0 ? ('system' as const) : KINDS[i % KINDS.length]!,
      payload: { text: text(rand, 30), step: i },
      ...(i % 10 === 0 ? { resourceKey: `resource:file:src/file-${i % 100}.ts` } : {}),
    };
    const appended = appendNodes(graph, [draft], '2026-01-01T00:00:00.000Z');
    if (!appended.ok) throw new Error(appended.error.message);
    graph = appended.value.graph;
  }
  // What a server receives: parsed JSON text.
  return JSON.parse(JSON.stringify(exportAgentState(graph))) as AgentState;
}

function benchValidation(rows: Row[]): void {
  const state = buildState(NODE_COUNT);
  const timing = measure(
    1,
    () => {
      const result = validateAgentState(state);
      if (!result.ok) throw new Error(result.error.message);
    },
    3,
  );
  rows.push({
    measure: `validateAgentState, ${fmt(NODE_COUNT)} nodes`,
    value: `${fmt(timing.ms)} ms`,
    target: '≤ 1,500 ms',
    verdict: timing.ms <= 1500 ? 'ok' : 'MISSED',
  });
}

export function buildLogForProfile(count: number): LogEntry[] {
  return buildLog(count);
}

function buildLog(count: number): LogEntry[] {
  const machine = createThreadMachine();
  let state: ThreadState = machine.initial;
  const entries: LogEntry[] = [];
  const rand = lcg(3);
  let clock = Date.parse('2026-01-01T00:00:00.000Z');
  let runId: string | undefined;
  const commit = (
    plan:
      | ReturnType<typeof planAppendNodes>
      | ReturnType<typeof planCreateThread>
      | ReturnType<typeof planStartRun>
      | ReturnType<typeof planDispatch>
      | ReturnType<typeof planRecordUsage>,
    now: string,
  ) => {
    if (!plan.ok) throw new Error(plan.error.message);
    const committed = commitEvent(state, plan.value, {
      id: `entry-${entries.length}`,
      recordedAt: now,
    });
    if (!committed.ok) throw new Error(committed.error.message);
    state = committed.value.state;
    entries.push(committed.value.entry);
  };
  commit(planCreateThread('bench-thread', {}), new Date(clock).toISOString());
  while (entries.length < count) {
    clock += 1000;
    const now = new Date(clock).toISOString();
    const i = entries.length;
    if (i % 500 === 1) {
      runId = `run-${i}`;
      commit(planStartRun(state, { runId, goal: text(rand, 8), maxIterations: 1000 }, now), now);
    } else if (runId !== undefined && i % 50 === 0) {
      commit(
        planDispatch(
          state,
          {
            runId,
            action: {
              id: `action-${i}`,
              type: 'update_memory',
              payload: { updates: { [`fact_${i % 7}`]: text(rand, 6) } },
            },
          },
          now,
        ),
        now,
      );
    } else if (runId !== undefined && i % 25 === 0) {
      commit(
        planRecordUsage(state, {
          runId,
          model: 'gpt-4o-mini',
          inputTokens: 800,
          outputTokens: 120,
        }),
        now,
      );
    } else {
      const node = {
        kind: KINDS[i % KINDS.length]!,
        payload: { text: text(rand, 30), step: i },
        ...(i % 10 === 0 ? { resourceKey: `resource:file:src/file-${i % 100}.ts` } : {}),
        ...(runId === undefined ? {} : { runId }),
      };
      commit(planAppendNodes(state, [node], now), now);
    }
  }
  return entries;
}

function benchReplay(rows: Row[]): void {
  const start = performance.now();
  // What a store hands back: each entry's stored canonical text, and the entry parsed from it.
  const texts = buildLog(ENTRY_COUNT).map((entry) => canonicalJson(entry));
  const entries = texts.map((text) => JSON.parse(text) as LogEntry);
  const buildMs = performance.now() - start;
  const cases = [
    { label: '', texts: true, trustRecordedIds: true, target: '≤ 1,000 ms' },
    { label: ', ids recomputed', texts: true, trustRecordedIds: false, target: '(context)' },
    { label: ', entries re-serialised', texts: false, trustRecordedIds: true, target: '(context)' },
  ];
  for (const c of cases) {
    const machine = createThreadMachine({ trustRecordedIds: c.trustRecordedIds });
    const options = c.texts ? { verify: 'strict' as const, texts } : { verify: 'strict' as const };
    const timing = measure(
      1,
      () => {
        const result = replay(machine, entries, options);
        if (!result.ok) throw new Error(result.error.message);
      },
      3,
    );
    const primary = c.target.startsWith('≤');
    rows.push({
      measure: `strict replay, ${fmt(ENTRY_COUNT)} entries${c.label}`,
      value: `${fmt(timing.ms)} ms`,
      target: c.target,
      verdict: primary ? (timing.ms <= 1000 ? 'ok' : 'MISSED') : '',
    });
  }
  rows.push({
    measure: '(building that log through commitEvent)',
    value: `${fmt(buildMs)} ms`,
    target: '',
    verdict: '',
  });
}

export async function runCoreBench(): Promise<void> {
  const rows: Row[] = [];
  benchIds(rows);
  benchValidation(rows);
  benchReplay(rows);
  printTable('core', rows);
}
