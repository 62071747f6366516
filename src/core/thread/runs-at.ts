/**
 * The runs of a thread as of a log length (time travel), each with the index of the last entry
 * that changed it — what the runs read model holds for the latest state, for an earlier one.
 * Pure.
 */
import { ok, type Result } from '../errors.js';
import type { LogEntry } from '../log/entry.js';
import type { WorkflowState } from '../run/index.js';
import { foldThreadLog, type ThreadFoldOptions } from './fold.js';

export interface RunAsOf {
  run: WorkflowState;
  /** Index of the last of the folded entries that changed the run. */
  logIndex: number;
}

/**
 * Folds `entries` (a log prefix, from index 0) and answers the runs of the state after them, in
 * the order they were started. The run map is persistent (an untouched run keeps its object),
 * so a run changed by an entry is one whose object differs before and after it.
 */
export function runsAsOf(
  entries: readonly LogEntry[],
  options: Pick<ThreadFoldOptions, 'machine' | 'texts'> = {},
): Result<RunAsOf[]> {
  const lastChange = new Map<string, number>();
  const folded = foldThreadLog(entries, {
    ...options,
    onEntry: ({ before, state, entry }) => {
      if (before.runs === state.runs) return;
      for (const runId of state.runOrder) {
        if (before.runs.get(runId) !== state.runs.get(runId)) lastChange.set(runId, entry.index);
      }
    },
  });
  if (!folded.ok) return folded;
  const state = folded.value;
  return ok(
    state.runOrder.map((runId) => ({
      run: state.runs.get(runId)!,
      logIndex: lastChange.get(runId)!,
    })),
  );
}
