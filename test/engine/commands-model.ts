/**
 * Generated command sequences for the engine's property tests: abstract commands whose
 * references ("the 3rd thread", "some run") are resolved against what exists when they run, so
 * every sequence is executable and most commands succeed; the rest fail with typed errors,
 * which must write nothing.
 */
import fc from 'fast-check';
import type { JsonObject, JsonValue } from '../../src/core/json.js';
import type { NodeInput } from '../../src/core/thread/index.js';
import type { Engine } from '../../src/engine/index.js';

type NodeSpec = {
  kind: 'system' | 'inference' | 'tool_call' | 'tool_result' | 'answer' | 'resource';
  v: number;
  resourceKey: string | undefined;
  advance: boolean | undefined;
  taint: boolean;
  usage: boolean;
  withRun: boolean;
  parentPick: number | undefined;
};

export type Command =
  | { t: 'create'; meta: number }
  | { t: 'import'; th: number }
  | { t: 'append'; th: number; nodes: NodeSpec[]; expected: 'none' | 'fresh' | 'stale' }
  | { t: 'remember'; th: number; type: string; key: string; v: number; withRun: boolean }
  | { t: 'fork'; th: number; upTo: number }
  | { t: 'start'; th: number; goal: string; budget: number | undefined }
  | { t: 'dispatch'; run: number; action: JsonObject; expected: 'none' | 'fresh' | 'stale' }
  | { t: 'resolve'; run: number; decision: string }
  | { t: 'cancel'; run: number; rollback: boolean }
  | { t: 'usage'; run: number; model: string; tokens: number; cost: number | undefined }
  | { t: 'importRun'; th: number; run: number };

const pick = fc.nat({ max: 20 });
const nodeSpec: fc.Arbitrary<NodeSpec> = fc.record({
  kind: fc.constantFrom('system', 'inference', 'tool_call', 'tool_result', 'answer', 'resource'),
  v: fc.nat({ max: 3 }),
  resourceKey: fc.option(fc.constantFrom('doc:a', 'doc:b'), { nil: undefined }),
  advance: fc.option(fc.boolean(), { nil: undefined }),
  taint: fc.boolean(),
  usage: fc.boolean(),
  withRun: fc.boolean(),
  parentPick: fc.option(pick, { nil: undefined }),
});
const expectation = fc.constantFrom('none', 'none', 'fresh', 'stale') as fc.Arbitrary<
  'none' | 'fresh' | 'stale'
>;
const memoryKey = fc.constantFrom('a', 'b', 'c');
const action: fc.Arbitrary<JsonObject> = fc.oneof(
  fc
    .record({ k: memoryKey, v: fc.nat({ max: 3 }) })
    .map(({ k, v }) => ({ type: 'update_memory', payload: { updates: { [k]: v } } })),
  fc
    .constantFrom('completed', 'failed', 'running', 'cancelled')
    .map((status) => ({ type: 'set_status', payload: { status } })),
  fc.constant({ type: 'request_human_input', payload: { pending_approval: { q: 'ok?' } } }),
  fc.constant({ type: 'goto_node', payload: { node_id: 'step-1' } }),
  fc.constant({
    type: 'update_memory',
    payload: { updates: { c: 1 } },
    compensation: { type: 'undo', payload: { k: 'c' } },
  }),
);

export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ t: fc.constant('create'), meta: fc.nat({ max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('import'), th: pick }) },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('append'),
      th: pick,
      nodes: fc.array(nodeSpec, { minLength: 1, maxLength: 3 }),
      expected: expectation,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('remember'),
      th: pick,
      type: fc.constantFrom('memory', 'preference', 'Not Allowed'),
      key: memoryKey,
      v: fc.nat({ max: 2 }),
      withRun: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('fork'), th: pick, upTo: fc.nat({ max: 8 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('start'),
      th: pick,
      goal: fc.constantFrom('summarise', 'plan'),
      budget: fc.option(fc.constantFrom(100, 1000), { nil: undefined }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ t: fc.constant('dispatch'), run: pick, action, expected: expectation }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('resolve'),
      run: pick,
      decision: fc.constantFrom('approve', 'reject'),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('dispatch'),
      run: pick,
      action: fc.constant({ type: 'request_human_input', payload: { timeout_ms: 60_000 } }),
      expected: fc.constant('none'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('cancel'), run: pick, rollback: fc.boolean() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('usage'),
      run: pick,
      model: fc.constantFrom('gpt-4o', 'claude'),
      tokens: fc.nat({ max: 400 }),
      cost: fc.option(fc.constantFrom(0.01, 0.5), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('importRun'), th: pick, run: pick }) },
);

/** A sequence starts with a thread so that later commands have something to refer to. */
export const sequenceArb = (maxLength: number) =>
  fc
    .array(commandArb, { minLength: 1, maxLength: maxLength - 1 })
    .map((rest): Command[] => [{ t: 'create', meta: 0 }, ...rest]);

/** Runs `commands`, resolving picks against what exists; returns the threads touched. */
export async function execute(engine: Engine, commands: readonly Command[]) {
  const threads: string[] = [];
  const runs: Array<{ threadId: string; runId: string }> = [];
  const nodes = new Map<string, string[]>();
  const outcomes: string[] = [];
  const at = <T>(list: readonly T[], i: number): T | undefined =>
    list.length === 0 ? undefined : list[i % list.length];
  const length = async (threadId: string) => {
    const state = await engine.getState(threadId);
    return state.ok ? state.value.length : 0;
  };
  const index = async (threadId: string, kind: 'none' | 'fresh' | 'stale') =>
    kind === 'none' ? {} : { expectedIndex: (await length(threadId)) - (kind === 'stale' ? 1 : 0) };

  for (const command of commands) {
    let result: { ok: boolean; error?: { code: string } } = { ok: false };
    switch (command.t) {
      case 'create': {
        const r = await engine.createThread({ metadata: { n: command.meta } });
        if (r.ok) threads.push(r.value.threadId);
        result = r;
        break;
      }
      case 'import': {
        const source = at(threads, command.th);
        if (source === undefined) break;
        const state = await engine.stateAt(source);
        if (!state.ok) break;
        const r = await engine.importState({ state: state.value.agentState });
        if (r.ok) threads.push(r.value.threadId);
        result = r;
        break;
      }
      case 'append': {
        const threadId = at(threads, command.th)!;
        const known = nodes.get(threadId) ?? [];
        const inputs: NodeInput[] = command.nodes.map((spec) => {
          const node: NodeInput = { kind: spec.kind, payload: { v: spec.v } as JsonValue };
          if (spec.resourceKey !== undefined) node.resourceKey = spec.resourceKey;
          if (spec.advance !== undefined) node.advance = spec.advance;
          if (spec.taint) node.taint = { source: 'mcp_tool', toolName: 'search' };
          if (spec.usage) node.usage = { model: 'gpt-4o', inputTokens: 10, outputTokens: 5 };
          const run = spec.withRun ? runs.find((r) => r.threadId === threadId) : undefined;
          if (run !== undefined) node.runId = run.runId;
          const parent = spec.parentPick === undefined ? undefined : at(known, spec.parentPick);
          if (parent !== undefined) node.parents = [parent];
          return node;
        });
        const r = await engine.appendNodes({
          threadId,
          nodes: inputs,
          ...(await index(threadId, command.expected)),
        });
        if (r.ok) nodes.set(threadId, [...known, ...r.value.nodes.map((n) => n.id)]);
        result = r;
        break;
      }
      case 'remember': {
        const threadId = at(threads, command.th)!;
        const run = command.withRun ? runs.find((r) => r.threadId === threadId) : undefined;
        result = await engine.remember({
          threadId,
          type: command.type,
          key: command.key,
          content: { v: command.v },
          ...(run === undefined ? {} : { runId: run.runId }),
        });
        break;
      }
      case 'fork': {
        const threadId = at(threads, command.th)!;
        const len = await length(threadId);
        const r = await engine.forkThread({ threadId, upToIndex: 1 + (command.upTo % len) });
        if (r.ok) {
          threads.push(r.value.threadId);
          const forked = await engine.getState(r.value.threadId);
          for (const runId of forked.ok ? forked.value.runOrder : []) {
            runs.push({ threadId: r.value.threadId, runId });
          }
        }
        result = r;
        break;
      }
      case 'start': {
        const threadId = at(threads, command.th)!;
        const r = await engine.startRun({
          threadId,
          goal: command.goal,
          ...(command.budget === undefined ? {} : { maxTokenBudget: command.budget }),
        });
        if (r.ok) runs.push({ threadId, runId: r.value.runId });
        result = r;
        break;
      }
      case 'dispatch': {
        const run = at(runs, command.run);
        if (run === undefined) break;
        result = await engine.dispatch({
          ...run,
          action: command.action as never,
          ...(await index(run.threadId, command.expected)),
        });
        break;
      }
      case 'resolve': {
        // Prefer a waiting run, so that the approval path is taken, not only refused.
        const waiting: typeof runs = [];
        for (const r of runs) {
          const state = await engine.getState(r.threadId);
          if (state.ok && state.value.runs.get(r.runId)?.status === 'waiting') waiting.push(r);
        }
        const run = at(waiting.length > 0 ? waiting : runs, command.run);
        if (run === undefined) break;
        result = await engine.resolveApproval({ ...run, decision: command.decision });
        break;
      }
      case 'cancel': {
        const run = at(runs, command.run);
        if (run === undefined) break;
        result = await engine.cancelRun({ ...run, rollback: command.rollback });
        break;
      }
      case 'usage': {
        const run = at(runs, command.run);
        if (run === undefined) break;
        result = await engine.recordUsage({
          ...run,
          model: command.model,
          inputTokens: command.tokens,
          outputTokens: command.tokens >> 1,
          ...(command.cost === undefined ? {} : { costUsd: command.cost }),
        });
        break;
      }
      case 'importRun': {
        const run = at(runs, command.run);
        const threadId = at(threads, command.th)!;
        if (run === undefined) break;
        const state = await engine.getState(run.threadId);
        if (!state.ok) break;
        const ws = state.value.runs.get(run.runId);
        if (ws === undefined) break;
        const runId = `${run.runId}-copy-${runs.length}`;
        const r = await engine.importWorkflowState({ threadId, state: { ...ws, run_id: runId } });
        if (r.ok) runs.push({ threadId, runId });
        result = r;
        break;
      }
    }
    outcomes.push(
      result.ok ? `${command.t}:ok` : `${command.t}:${result.error?.code ?? 'skipped'}`,
    );
  }
  return { threads, runs, outcomes };
}
