/**
 * The rows of Weft's read-model tables as plain values (DateTime columns as Date, canonical JSON
 * columns as text). A `ReadModelChanges` is everything one or more applied log entries write;
 * the store applies it in one transaction together with the entries themselves.
 */

import type { EntryTextParts } from '../../core/thread/entry-text.js';
import type {
  ApprovalRow,
  NodeParentRow,
  NodeRow,
  ResourceHeadRow,
  RunRow,
  RunSpendRow,
  SnapshotRow,
  StoredEntryRow,
  ThreadRow,
} from '../tables/index.js';

export type {
  ApprovalRow,
  NodeParentRow,
  NodeRow,
  ResourceHeadRow,
  RunRow,
  RunSpendRow,
  SnapshotRow,
  ThreadRow,
} from '../tables/index.js';

/**
 * A log entry as projected; `entry` is canonicalJson(entry), the exact text readers get back, and
 * `parts` the same text around the node payloads when the projection had it (what packing uses).
 */
export type LogEntryRow = Omit<StoredEntryRow, 'packed' | 'verbatim'> & { parts?: EntryTextParts };

/** A change of the flags of a node written by an earlier entry (absent field: unchanged). */
export interface NodeFlagChange {
  nodeId: string;
  isFrontier?: boolean;
  isCurrent?: boolean;
}

export type SpendDimension = 'model' | 'node';

/**
 * What applying entries writes to one thread's tables. `thread` is the full row after the last
 * entry (an upsert); `created` says whether the thread row is new (the first entry is in
 * `entries`), so it must exist before the entries that reference it.
 */
export interface ReadModelChanges {
  threadId: string;
  created: boolean;
  entries: LogEntryRow[];
  thread: ThreadRow;
  /** New nodes in sequence order, with their flags as of the last entry. */
  nodes: NodeRow[];
  nodeParents: NodeParentRow[];
  /** Flag changes of nodes that existed before these entries. */
  nodeFlags: NodeFlagChange[];
  resourceHeads: ResourceHeadRow[];
  runs: RunRow[];
  runSpend: RunSpendRow[];
  /** Approval requests made or settled, as full rows (settled ones keep their request index). */
  approvals: ApprovalRow[];
  /** Snapshots to store with these entries (a cache: optional). */
  snapshots?: SnapshotRow[];
  /**
   * Entries appended through the event-log contract (event-log/log-store.ts) rather than by the
   * engine: `thread` is a neutral row created only if the thread is unknown, and of an existing
   * row only the log length and update time change. `verbatim` holds, per entry, the text as
   * appended where its key order is not canonical.
   */
  logOnly?: { verbatim: ReadonlyArray<string | null> };
}
