/**
 * The Weft run of a LangGraph invocation: started when the graph takes a step with no open run,
 * completed when a checkpoint leaves no node to run (the graph reached END), failed when a task's
 * error is written. Interrupts make it wait (approvals.ts).
 *
 * A checkpointer sees checkpoints, not the graph, so "no node to run" is read off the checkpoint
 * the way LangGraph's own scheduler decides: a node runs when a channel that triggers it holds a
 * value, at a version the node has not seen. Trigger channels are the ones a node has seen
 * (`versions_seen` records only triggers), the `branch:to:<node>` edges of a StateGraph (naming
 * a node that may not have run yet), and pending `Send`s (`__pregel_tasks`).
 */
import {
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  compareChannelVersions,
  ERROR,
  INTERRUPT,
  type PendingWrite,
  TASKS,
} from '@langchain/langgraph-checkpoint';
import type { WeftError } from '../core/errors.js';
import type { Engine } from '../engine/index.js';
import { fromEngine } from './errors.js';
import { statusActionId, type ThreadIndex } from './thread-index.js';

const BRANCH_PREFIX = 'branch:to:';

/** Someone else (the API, a deadline) ended the run first: nothing left to end. */
const ALREADY_ENDED: ReadonlySet<WeftError['code']> = new Set<WeftError['code']>([
  'INVALID_TRANSITION',
  'INVALID_ACTION',
]);

/** True when `checkpoint`, written by the graph's loop, leaves no node to run: the graph ended. */
export function graphEnded(
  checkpoint: Checkpoint,
  metadata: CheckpointMetadata | undefined,
  newVersions: ChannelVersions,
): boolean {
  if (metadata?.source !== 'loop') return false;
  if (TASKS in newVersions) return false;
  const seen = (checkpoint.versions_seen ?? {}) as Record<string, Record<string, unknown>>;
  const nodes = Object.keys(seen).filter((node) => node !== INTERRUPT);
  const values = checkpoint.channel_values ?? {};
  for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
    // A trigger consumed by its node is cleared (and its version bumped): it triggers nothing.
    if (!(channel in values)) continue;
    const readers = channel.startsWith(BRANCH_PREFIX)
      ? [channel.slice(BRANCH_PREFIX.length)]
      : nodes.filter((node) => channel in seen[node]!);
    for (const node of readers) {
      const last = seen[node]?.[channel];
      if (last === undefined || compareChannelVersions(version, last as never) > 0) return false;
    }
  }
  return true;
}

/** The goal a saver-started run carries: which LangGraph thread it is. */
export const runGoal = (threadId: string, ns: string) =>
  `LangGraph thread ${threadId}${ns === '' ? '' : ` (${ns})`}`;

/** A checkpoint the saver just stored, and where. */
export interface SavedStep {
  threadId: string;
  ns: string;
  weftId: string;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata | undefined;
  newVersions: ChannelVersions;
}

/**
 * After a checkpoint of the root graph (a subgraph's steps are part of its parent's run): an
 * open run while the graph works, none once it ended. True when it wrote (the fold has entries
 * to read).
 */
export async function followRun(engine: Engine, index: ThreadIndex, step: SavedStep) {
  if (step.ns !== '') return false;
  const { weftId, checkpoint } = step;
  const open = index.runId !== undefined && !index.runEnded;
  if (!graphEnded(checkpoint, step.metadata, step.newVersions)) {
    // LangGraph writes a step's checkpoint after that step's writes: a checkpoint that arrives
    // after the error that ended its run belongs to that run, not to a new one.
    if (open || (index.runEndedAt !== undefined && checkpoint.id <= index.runEndedAt)) {
      return false;
    }
    const goal = runGoal(step.threadId, step.ns);
    const started = await engine.startRun({ threadId: weftId, goal });
    if (!started.ok) throw fromEngine(started.error, 'starting the run of a graph invocation');
    await setStatus(engine, weftId, started.value.runId, checkpoint.id, { status: 'running' });
    return true;
  }
  if (!open || index.pendingApproval() !== undefined) return false;
  await setStatus(engine, weftId, index.runId!, checkpoint.id, { status: 'completed' });
  return true;
}

/** A task's error written by the root graph fails the open run with that error. */
export async function failRun(
  engine: Engine,
  index: ThreadIndex,
  at: { ns: string; weftId: string; checkpointId: string },
  writes: PendingWrite[],
): Promise<boolean> {
  const error = writes.find(([channel]) => channel === ERROR);
  if (error === undefined || at.ns !== '' || index.runId === undefined || index.runEnded) {
    return false;
  }
  await setStatus(engine, at.weftId, index.runId, at.checkpointId, {
    status: 'failed',
    error: errorText(error[1]),
  });
  return true;
}

function errorText(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (typeof message === 'string')
      return typeof name === 'string' ? `${name}: ${message}` : message;
  }
  return typeof error === 'string' ? error : JSON.stringify(error ?? null);
}

async function setStatus(
  engine: Engine,
  weftId: string,
  runId: string,
  checkpointId: string,
  payload: { status: 'running' | 'completed' | 'failed'; error?: string },
): Promise<void> {
  const set = await engine.dispatch({
    runId,
    threadId: weftId,
    action: { id: statusActionId(payload.status, checkpointId), type: 'set_status', payload },
  });
  if (!set.ok && !ALREADY_ENDED.has(set.error.code)) {
    throw fromEngine(set.error, `marking the graph's run ${payload.status}`);
  }
}
