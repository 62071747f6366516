/**
 * Interrupts as Weft approvals: an `__interrupt__` write asks for one on the thread's run
 * (started when the thread has none that can wait), a `__resume__` write settles a pending one
 * that was answered outside Weft.
 */
import type { PendingWrite } from '@langchain/langgraph-checkpoint';
import type { WeftError } from '../core/errors.js';
import { isTerminalStatus } from '../core/run/index.js';
import type { Engine } from '../engine/index.js';
import { isApprovalAnswer } from './approval-answer.js';
import { fromEngine } from './errors.js';
import { plainJson } from './messages.js';
import { runGoal } from './runs.js';
import type { ThreadIndex } from './thread-index.js';

const SETTLED_CODES: ReadonlySet<WeftError['code']> = new Set<WeftError['code']>([
  'INVALID_TRANSITION',
  'INVALID_ACTION',
]);

export async function requestApproval(
  engine: Engine,
  timeout: number | undefined,
  index: ThreadIndex,
  weftId: string,
  at: { threadId: string; ns: string; checkpointId: string },
  writes: PendingWrite[],
): Promise<void> {
  const interrupts = writes.flatMap(([, value]) => (Array.isArray(value) ? value : [value]));
  const pending = index.pendingApproval();
  if (pending !== undefined) return; // the run already waits; a resume settles it first
  let runId = index.runId;
  const state = await engine.getState(weftId);
  if (!state.ok) throw fromEngine(state.error, 'reading the thread for an approval');
  const run = runId === undefined ? undefined : state.value.runs.get(runId);
  if (run === undefined || isTerminalStatus(run.status)) {
    const started = await engine.startRun({ threadId: weftId, goal: runGoal(at.threadId, at.ns) });
    if (!started.ok) throw fromEngine(started.error, 'starting the run for an approval');
    runId = started.value.runId;
  }
  const requested = await engine.dispatch({
    runId: runId!,
    threadId: weftId,
    action: {
      type: 'request_human_input',
      payload: {
        waiting_for: 'human_approval',
        pending_approval: {
          threadId: at.threadId,
          checkpointNs: at.ns,
          checkpointId: at.checkpointId,
          interrupts: plainJson(interrupts),
        },
        ...(timeout === undefined ? {} : { timeout_ms: timeout }),
      },
    },
  });
  if (!requested.ok) throw fromEngine(requested.error, 'requesting an approval');
}

/**
 * A resume given to the graph directly (not through Weft) settles the pending approval too: as
 * decision `resumed` with the resume value as response, or as the decision of a
 * `{ decision, response }` answer.
 * True when it wrote (or found) a resolution the fold has yet to read.
 */
export async function settleFromResume(
  engine: Engine,
  index: ThreadIndex,
  weftId: string,
  writes: PendingWrite[],
): Promise<boolean> {
  const pending = index.pendingApproval();
  if (pending === undefined) return false;
  const value = writes.length === 1 ? writes[0]![1] : writes.map(([, v]) => v);
  // An answer in the shape `waitForResume` hands out says its own decision: the inbox then
  // shows a rejection given straight to the graph as one.
  const answer = isApprovalAnswer(value) ? value : undefined;
  const resolved = await engine.resolveApproval({
    runId: pending.runId,
    threadId: weftId,
    decision: answer?.decision ?? 'resumed',
    response: plainJson(answer === undefined ? value : answer.response),
  });
  // Someone else (another process, the API) settled it first: the log says how.
  if (!resolved.ok && !SETTLED_CODES.has(resolved.error.code)) {
    throw fromEngine(resolved.error, 'settling the approval of a resume');
  }
  return true;
}
