import { err, ok, type Result } from '../core/errors.js';
import type { LogEntry } from '../core/log/index.js';
import {
  createThreadMachine,
  type ThreadMachineOptions,
  type ThreadState,
} from '../core/thread/index.js';
import type { SnapshotBase } from '../core/thread/snapshot.js';
import { mergeChanges, projectEntry, type ReadModelChanges } from '../store/read-model/index.js';
import { snapshotPointKind, snapshotRow } from './engine.js';
import type { SnapshotPolicy } from './types.js';

export interface ProjectedLog {
  state: ThreadState;
  /** Undefined for an empty log. */
  changes: ReadModelChanges | undefined;
}

/**
 * Replays `entries` from index 0 and projects every entry into read-model rows for `threadId`,
 * merged into one set of writes — what the engine's commits wrote entry by entry. Hashes are
 * checked where present (`verify: 'present'`); recorded node ids are trusted only when every
 * entry is signed and the caller does not pass `trustRecordedIds: false`: the hash chain commits
 * to each node's content only for a log this server wrote itself. With a
 * snapshot policy, the snapshots the engine would have written along the way are included. Pure.
 */
export function projectLog(
  threadId: string,
  entries: readonly LogEntry[],
  options: ThreadMachineOptions = {},
  snapshots: SnapshotPolicy | false = false,
): Result<ProjectedLog> {
  const signed = entries.every((e) => e.verification?.stateHash !== undefined);
  // A caller may refuse the trust (a log from elsewhere: its author could sign anything).
  const trust = signed && options.trustRecordedIds !== false;
  const machine = createThreadMachine({ ...options, trustRecordedIds: trust });
  let state = machine.initial;
  const all: ReadModelChanges[] = [];
  // The last full snapshot written, which deltas are written against.
  let base: SnapshotBase | undefined;
  for (const entry of entries) {
    if (entry.index !== state.length) {
      return err({
        code: 'VALIDATION_FAILED',
        message: `entry ${entry.id} has index ${entry.index}, the log expects ${state.length}`,
        issues: [{ path: `$[${state.length}].index`, message: 'not contiguous' }],
      });
    }
    const applied = machine.apply(state, entry);
    if (!applied.ok) return applied;
    const [next, effects] = applied.value;
    const recorded = entry.verification?.stateHash;
    if (recorded !== undefined && recorded !== next.stateHash) {
      return err({
        code: 'VERIFICATION_FAILED',
        message: `state hash mismatch at entry ${entry.index} (${entry.id}): run verify for details`,
        index: entry.index,
        entryId: entry.id,
      });
    }
    const changes = projectEntry(state, next, effects, entry, threadId);
    const kind = snapshotPointKind(snapshots, state, next);
    if (kind !== undefined) {
      const snapshot = snapshotRow(threadId, next, entry.recordedAt, kind, base);
      changes.snapshots = [snapshot.row];
      base = snapshot.base;
    }
    all.push(changes);
    state = next;
  }
  return ok({ state, changes: all.length === 0 ? undefined : mergeChanges(all) });
}
