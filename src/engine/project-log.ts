import { ok, type Result } from '../core/errors.js';
import type { LogEntry } from '../core/log/index.js';
import { foldThreadLog } from '../core/thread/fold.js';
import type { ThreadMachineOptions, ThreadState } from '../core/thread/index.js';
import type { SnapshotBase } from '../core/thread/snapshot.js';
import { mergeChanges, projectEntry, type ReadModelChanges } from '../store/read-model/index.js';
import { snapshotPointKind, snapshotRow } from './snapshots.js';
import type { SnapshotPolicy } from './types.js';

export interface ProjectedLog {
  state: ThreadState;
  /** Undefined for an empty log. */
  changes: ReadModelChanges | undefined;
}

/**
 * Replays `entries` from index 0 (foldThreadLog: contiguity, trust, state hashes where present)
 * and projects every entry into read-model rows for `threadId`, merged into one set of writes —
 * what the engine's commits wrote entry by entry. A caller refuses the trust in recorded node
 * ids with `trustRecordedIds: false` (a log from elsewhere): the hash chain commits to each
 * node's content only for a log this server wrote itself. With a
 * snapshot policy, the snapshots the engine would have written along the way are included. Pure.
 */
export function projectLog(
  threadId: string,
  entries: readonly LogEntry[],
  options: ThreadMachineOptions = {},
  snapshots: SnapshotPolicy | false = false,
): Result<ProjectedLog> {
  const all: ReadModelChanges[] = [];
  // The last full snapshot written, which deltas are written against.
  let base: SnapshotBase | undefined;
  const folded = foldThreadLog(entries, {
    machine: options,
    onEntry({ before, state, effects, entry }) {
      const changes = projectEntry(before, state, effects, entry, threadId);
      const kind = snapshotPointKind(snapshots, before, state);
      if (kind !== undefined) {
        const snapshot = snapshotRow(threadId, state, entry.recordedAt, kind, base);
        changes.snapshots = [snapshot.row];
        base = snapshot.base;
      }
      all.push(changes);
    },
  });
  if (!folded.ok) return folded;
  return ok({ state: folded.value, changes: all.length === 0 ? undefined : mergeChanges(all) });
}
