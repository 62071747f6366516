/**
 * Which LangGraph thread and Weft run wrote a store version. A put inside a node knows its
 * graph's thread and the checkpoint its step runs from (from the node's async context); the run
 * is found when asked, from the thread's log: LangGraph saves checkpoints without waiting for
 * them, so at the time of the put WeftSaver may not have started the invocation's run yet.
 */
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import type { Engine } from '../engine/index.js';
import { weftThreadId } from './saver.js';
import type { Provenance } from './store-fold.js';
import { checkpointOfAction } from './thread-index.js';

/** The writer of a put made inside a LangGraph node; undefined outside a graph. */
export function currentWriter(): Provenance | undefined {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { configurable?: { thread_id?: unknown; checkpoint_map?: Record<string, unknown> } }
    | undefined;
  const langgraphThreadId = config?.configurable?.thread_id;
  if (typeof langgraphThreadId !== 'string' || langgraphThreadId === '') return undefined;
  const checkpointId = config?.configurable?.checkpoint_map?.[''];
  return {
    langgraphThreadId,
    threadId: weftThreadId(langgraphThreadId, ''),
    ...(typeof checkpointId === 'string' ? { checkpointId } : {}),
  };
}

/**
 * The runs WeftSaver started on a thread, by the checkpoint each started at, oldest first;
 * [] when the thread is unknown.
 */
async function runStarts(engine: Engine, threadId: string): Promise<Array<[string, string]>> {
  const read = await engine.readEntries(threadId, 0);
  if (!read.ok) return [];
  const starts: Array<[string, string]> = [];
  for (const entry of read.value) {
    const event = entry.event as { type: string; runId?: string; action?: unknown };
    if (event.type !== 'run_action_dispatched' || event.runId === undefined) continue;
    const payload = (event.action as { payload?: { status?: unknown } } | null)?.payload;
    const at = checkpointOfAction(event.action);
    if (at !== undefined && payload?.status === 'running') starts.push([at, event.runId]);
  }
  return starts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** Each writer with its run: the last one started at or before the checkpoint it wrote from. */
export async function withRuns(
  engine: Engine,
  writers: ReadonlyArray<Provenance | undefined>,
): Promise<Array<Provenance | undefined>> {
  const starts = new Map<string, Array<[string, string]>>();
  const resolved: Array<Provenance | undefined> = [];
  for (const by of writers) {
    if (by?.threadId === undefined || by.checkpointId === undefined || by.runId !== undefined) {
      resolved.push(by);
      continue;
    }
    let known = starts.get(by.threadId);
    if (known === undefined) {
      known = await runStarts(engine, by.threadId);
      starts.set(by.threadId, known);
    }
    const runId = known.filter(([at]) => at <= by.checkpointId!).at(-1)?.[1];
    resolved.push(runId === undefined ? by : { ...by, runId });
  }
  return resolved;
}
