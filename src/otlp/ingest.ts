/**
 * Writes an ingest plan (mapping.ts) through the engine, one thread at a time: the thread if it
 * is new, each new run (`startRun`), every new node in one `appendNodes`, then each run's final
 * status (`SET_STATUS`). Idempotent on (trace id, span id): a span whose run or node exists is
 * skipped, so a re-sent batch writes nothing; two copies of a batch racing are settled by the
 * log index each append and status was planned on (and a run id being taken once). Every payload is checked against the bound before anything is
 * written, so input refused is refused whole.
 */

import type { WeftError } from '../core/errors.js';
import { getNodeBySequence, getResourceHead, nodeId } from '../core/graph/index.js';
import type { JsonObject } from '../core/json.js';
import { findInputIssue } from '../core/text.js';
import type { NodeInput, ThreadState } from '../core/thread/index.js';
import { vecGet } from '../core/thread/vec.js';
import type { Engine } from '../engine/index.js';
import {
  type IngestPlan,
  type PlannedNode,
  type PlannedRun,
  payloadSize,
  runIdOf,
  spanKeyOf,
  type ThreadPlan,
} from './mapping.js';
import { OtlpInputError } from './spans.js';

/** A write the engine refused: answered 500 (retryable) unless it is a client's mistake. */
export class OtlpWriteError extends Error {
  override name = 'OtlpWriteError';
  constructor(readonly error: WeftError) {
    super(`${error.code}: ${error.message}`);
  }
}

export interface IngestResult {
  /** Entries written (0 for a batch that was all written before). */
  entries: number;
  runs: number;
  nodes: number;
}

/** How often a write is planned again after another writer moved the thread's log on. */
const MAX_ATTEMPTS = 30;

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'timeout']);

/**
 * Refuses the plan, before any write, for what the engine would refuse midway: a payload over
 * `maxPayloadBytes`, or text or numbers that could not be stored and read back exactly.
 */
export function checkPlanBounds(plan: IngestPlan, maxPayloadBytes: number): void {
  const check = (value: JsonObject, spanId: string) => {
    const size = payloadSize(value);
    if (size > maxPayloadBytes) {
      throw new OtlpInputError(
        `span ${spanId}: its node payload is ${size} bytes, more than the ${maxPayloadBytes} allowed (WEFT_MAX_PAYLOAD_BYTES): leave out message content or raise the bound`,
      );
    }
    const issue = findInputIssue(value, '$', { exactNumbers: true });
    if (issue !== undefined) {
      throw new OtlpInputError(`span ${spanId}: ${issue.path}: ${issue.message}`);
    }
  };
  for (const thread of plan.threads) {
    for (const run of thread.runs) check({ goal: run.goal, memory: run.memory }, run.spanId);
    for (const node of thread.nodes) {
      check(node.payload, node.spanId);
      if (node.result !== undefined) check(node.result.payload, node.spanId);
    }
  }
}

function unwrap<T>(result: { ok: true; value: T } | { ok: false; error: WeftError }): T {
  if (!result.ok) throw new OtlpWriteError(result.error);
  return result.value;
}

/** The goal node `startRun` made for `runId` (newest first: runs are usually recent). */
function goalNodeOf(state: ThreadState, runId: string): string | undefined {
  for (let seq = state.graph.count; seq >= 1; seq--) {
    if (vecGet(state.nodeMeta, seq - 1)?.runId !== runId) continue;
    const node = getNodeBySequence(state.graph, seq);
    if (node?.kind === 'goal') return node.id;
  }
  return undefined;
}

async function ensureThread(engine: Engine, threadId: string): Promise<ThreadState> {
  const found = await engine.getState(threadId);
  if (found.ok) return found.value;
  if (found.error.code !== 'NOT_FOUND') throw new OtlpWriteError(found.error);
  const created = await engine.createThread({ threadId, metadata: { source: 'otlp' } });
  // Two batches of one new conversation race: the loser finds the winner's thread.
  if (!created.ok && created.error.code !== 'CONFLICT') throw new OtlpWriteError(created.error);
  return unwrap(await engine.getState(threadId));
}

/** Whether the run exists now: a copy of the batch racing this one started it first. */
async function hasRun(engine: Engine, threadId: string, runId: string): Promise<boolean> {
  const state = await engine.getState(threadId);
  return state.ok && state.value.runs.has(runId);
}

async function startRuns(engine: Engine, plan: ThreadPlan, state: ThreadState): Promise<number> {
  let written = 0;
  for (const run of plan.runs) {
    if (state.runs.has(run.runId)) continue;
    const started = await engine.startRun({
      threadId: plan.threadId,
      runId: run.runId,
      goal: run.goal,
      memory: run.memory,
    });
    if (!started.ok && (await hasRun(engine, plan.threadId, run.runId))) continue; // raced
    unwrap(started);
    written++;
  }
  return written;
}

/**
 * Sets each run's final status at the log index it was planned on: a copy of the batch racing
 * this one makes it CONFLICT, and the run, read again, is found finished and skipped.
 */
async function finishRuns(engine: Engine, plan: ThreadPlan, planned: ThreadState): Promise<number> {
  let written = 0;
  let state = planned;
  for (const run of plan.runs) {
    for (let attempt = 1; ; attempt++) {
      const current = state.runs.get(run.runId);
      if (current !== undefined && TERMINAL.has(current.status)) break;
      const set = await engine.dispatch({
        threadId: plan.threadId,
        runId: run.runId,
        expectedIndex: state.length,
        action: statusOf(run),
      });
      if (set.ok || set.error.code !== 'CONFLICT' || attempt === MAX_ATTEMPTS) {
        unwrap(set);
        written++;
        state = unwrap(await engine.getState(plan.threadId));
        break;
      }
      state = unwrap(await engine.getState(plan.threadId));
    }
  }
  return written;
}

function statusOf(run: PlannedRun) {
  const payload: JsonObject = { status: run.status };
  if (run.error !== undefined) payload.error = run.error;
  return { type: 'set_status', payload };
}

/** Where a span's node and run are: this batch's new nodes first, then the thread's state. */
function resolver(state: ThreadState, fresh: Map<string, string>, runs: ReadonlySet<string>) {
  const nodeOfSpan = (traceId: string, spanId: string): string | undefined =>
    fresh.get(spanKeyOf(traceId, spanId)) ??
    getResourceHead(state.graph, spanKeyOf(traceId, spanId))?.id;
  const hasRun = (runId: string) => runs.has(runId) || state.runs.has(runId);
  return {
    parentsOf(node: PlannedNode): string[] | undefined {
      const p = node.parent;
      if (p === undefined) return undefined;
      const runId = runIdOf(node.traceId, p.spanId);
      const id = hasRun(runId) ? goalNodeOf(state, runId) : nodeOfSpan(node.traceId, p.spanId);
      return id === undefined ? undefined : [id];
    },
    runOf(node: PlannedNode): string | undefined {
      if (node.runSpan === undefined) return undefined;
      const runId = runIdOf(node.traceId, node.runSpan.spanId);
      return hasRun(runId) ? runId : undefined;
    },
  };
}

/** The new nodes of a thread's plan as appendNodes input, with the ids they will get. */
export function nodeInputsOf(plan: ThreadPlan, state: ThreadState): NodeInput[] {
  const fresh = new Map<string, string>();
  const resolve = resolver(state, fresh, new Set(plan.runs.map((r) => r.runId)));
  const inputs: NodeInput[] = [];
  const push = (input: NodeInput & { resourceKey: string }) => {
    inputs.push(input);
    const id = nodeId({
      kind: input.kind,
      parents: input.parents ?? [],
      payload: input.payload,
      resourceKey: input.resourceKey,
    });
    fresh.set(input.resourceKey, id);
    return id;
  };
  for (const node of plan.nodes) {
    if (getResourceHead(state.graph, node.resourceKey) !== undefined) continue;
    const parents = resolve.parentsOf(node);
    const runId = resolve.runOf(node);
    // Without a known parent the node takes the thread's frontier; its id is then the engine's.
    const input: NodeInput & { resourceKey: string } = {
      kind: node.kind,
      payload: node.payload,
      resourceKey: node.resourceKey,
      parents: parents ?? [...state.graph.frontier],
      ...(runId === undefined ? {} : { runId }),
      ...(node.usage === undefined ? {} : { usage: node.usage }),
    };
    const callId = push(input);
    if (node.result !== undefined) {
      push({
        kind: 'tool_result',
        payload: node.result.payload,
        resourceKey: node.result.resourceKey,
        parents: [callId],
        ...(runId === undefined ? {} : { runId }),
      });
    }
  }
  return inputs;
}

/**
 * Appends the plan's new nodes at the log index they were planned on: a writer racing it (the
 * same batch sent twice at once) makes it CONFLICT, and the next attempt finds those spans
 * written and skips them.
 */
async function appendNew(engine: Engine, plan: ThreadPlan, planned: ThreadState) {
  let state = planned;
  for (let attempt = 1; ; attempt++) {
    const nodes = nodeInputsOf(plan, state);
    if (nodes.length === 0) return { state, nodes: 0 };
    const appended = await engine.appendNodes({
      threadId: plan.threadId,
      expectedIndex: state.length,
      nodes,
    });
    if (appended.ok || appended.error.code !== 'CONFLICT' || attempt === MAX_ATTEMPTS) {
      unwrap(appended);
      return { state: unwrap(await engine.getState(plan.threadId)), nodes: nodes.length };
    }
    state = unwrap(await engine.getState(plan.threadId));
  }
}

async function ingestThread(engine: Engine, plan: ThreadPlan): Promise<IngestResult> {
  let state = await ensureThread(engine, plan.threadId);
  const runs = await startRuns(engine, plan, state);
  if (runs > 0) state = unwrap(await engine.getState(plan.threadId));
  const appended = await appendNew(engine, plan, state);
  const finished = await finishRuns(engine, plan, appended.state);
  return {
    entries: runs + (appended.nodes > 0 ? 1 : 0) + finished,
    runs,
    nodes: appended.nodes,
  };
}

/** Writes `plan` for the tenant `engine` acts for. */
export async function ingestPlan(engine: Engine, plan: IngestPlan): Promise<IngestResult> {
  const total: IngestResult = { entries: 0, runs: 0, nodes: 0 };
  for (const thread of plan.threads) {
    const done = await ingestThread(engine, thread);
    total.entries += done.entries;
    total.runs += done.runs;
    total.nodes += done.nodes;
  }
  return total;
}
