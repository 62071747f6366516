/**
 * Time travel: the state after a prefix of a thread's log, from the newest usable stored snapshot
 * and the replay of the entries after it, or from a replay of the whole prefix. A snapshot is
 * only ever a shortcut: one that fails a check is reported and skipped, and either way the
 * answer is the replay's.
 */
import { ok, type Result } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import type { LogEntry } from '../core/log/index.js';
import { foldThreadLog } from '../core/thread/fold.js';
import {
  createThreadMachine,
  type ThreadMachineOptions,
  type ThreadState,
} from '../core/thread/index.js';
import {
  applySnapshotDelta,
  parseStoredSnapshot,
  restoreParsedSnapshot,
  THREAD_SNAPSHOT_FORMAT,
  type ThreadSnapshot,
  type ThreadSnapshotDelta,
} from '../core/thread/snapshot.js';
import type { SnapshotRow, ThreadStore } from '../store/read-model/index.js';

/** Where the restorer reads: the log's stored texts and the snapshot rows. */
export type SnapshotSource = Pick<ThreadStore, 'readEntryTexts' | 'findSnapshots'>;

export interface SnapshotRestorer {
  /**
   * The state after the first `at` entries of a thread whose latest state is `latest`: from the
   * newest usable snapshot at or before `at` plus the replay of the entries after it, or else by
   * replaying the whole prefix. A snapshot is used only when its checksum, index and state hash
   * agree with its row and its state hash with the log entry it follows — a delta also only with
   * the full snapshot it names, checked the same way; one that fails is reported (the row at
   * fault) and skipped. Either way the answer is the replay's.
   */
  stateAt(threadId: string, at: number, latest: ThreadState): Promise<Result<ThreadState>>;
}

/** A log entry with the canonical text it was read from. */
interface StoredEntry {
  entry: LogEntry;
  text: string;
}

/** Why a snapshot row was not used: the row at fault (a delta's base, say) and the reason. */
type Rejection = { index: number; reason: string };
type Checked<T> = { ok: true; value: T } | { ok: false; error: Rejection };

export function createSnapshotRestorer(
  store: SnapshotSource,
  machineOptions: ThreadMachineOptions,
  onRejected: (threadId: string, index: number, reason: string) => void,
): SnapshotRestorer {
  const empty = () => createThreadMachine().initial;

  async function stateAt(
    threadId: string,
    at: number,
    latest: ThreadState,
  ): Promise<Result<ThreadState>> {
    if (at === latest.length) return ok(latest);
    if (at === 0) return ok(empty());
    // Newest first; an older one only when a newer one was rejected (at most three tries).
    let atMost = at;
    for (let tries = 0; tries < 3 && atMost >= 1; tries++) {
      const [row] = await store.findSnapshots(threadId, atMost, 1);
      if (row === undefined) break;
      const restored = await fromSnapshot(threadId, row, at, latest);
      if (restored.ok) return restored;
      const { index, reason } = restored.error;
      onRejected(threadId, index, reason);
      atMost = Math.min(row.index, index) - 1;
    }
    return replayOnto(empty(), await read(threadId, 0, at));
  }

  /** A row's snapshot, full or delta, if its checksum, shape, index and state hash agree. */
  function checkedRow(row: SnapshotRow): Checked<ThreadSnapshot | ThreadSnapshotDelta> {
    const rejected = (reason: string) => ({
      ok: false as const,
      error: { index: row.index, reason },
    });
    if (row.index < 1) return rejected('its index is not a log length after an entry');
    if (sha256Hex(row.state) !== row.checksum) return rejected('its checksum does not match');
    const parsed = parseStoredSnapshot(row.state);
    if (!parsed.ok) return rejected(parsed.error.message);
    const snapshot = parsed.value;
    if (snapshot.length !== row.index || snapshot.stateHash !== row.stateHash) {
      return rejected('its content does not match its index and state hash columns');
    }
    return { ok: true, value: snapshot };
  }

  /** The full snapshot a checked row stands for (a delta resolved against its checked base). */
  async function checkedSnapshot(
    threadId: string,
    row: SnapshotRow,
  ): Promise<Checked<ThreadSnapshot>> {
    const rejected = (reason: string, index = row.index) => ({
      ok: false as const,
      error: { index, reason },
    });
    const checked = checkedRow(row);
    if (!checked.ok) return checked;
    const snapshot = checked.value;
    if (snapshot.format === THREAD_SNAPSHOT_FORMAT) return { ok: true, value: snapshot };
    const baseIndex = snapshot.base.length;
    const [baseRow] =
      baseIndex >= 1 && baseIndex < row.index
        ? await store.findSnapshots(threadId, baseIndex, 1)
        : [];
    if (baseRow?.index !== baseIndex) {
      return rejected(`the full snapshot at ${baseIndex} it is relative to is missing`);
    }
    if (baseRow.checksum !== snapshot.base.checksum) {
      return rejected(`the full snapshot at ${baseIndex} it is relative to has changed`);
    }
    const base = checkedRow(baseRow);
    if (!base.ok) return base;
    if (base.value.format !== THREAD_SNAPSHOT_FORMAT) {
      return rejected(`the snapshot at ${baseIndex} it is relative to is not full`, baseIndex);
    }
    // A delta's base is never resolved in turn: it must be full.
    const merged = applySnapshotDelta(snapshot, base.value, baseRow.checksum);
    return merged.ok ? merged : rejected(merged.error.message);
  }

  async function fromSnapshot(
    threadId: string,
    row: SnapshotRow,
    at: number,
    latest: ThreadState,
  ): Promise<Checked<ThreadState>> {
    const rejected = (reason: string) => ({
      ok: false as const,
      error: { index: row.index, reason },
    });
    const snapshot = await checkedSnapshot(threadId, row);
    if (!snapshot.ok) return snapshot;
    // The entry the snapshot follows must carry its state hash: the tie to the log.
    const [anchor, ...tail] = await read(threadId, row.index - 1, at);
    if (anchor?.entry.verification?.stateHash !== row.stateHash) {
      return rejected(`its state hash is not the one of log entry ${row.index - 1}`);
    }
    // Sharing the latest state's storage: the tail replay re-appends the very nodes that state
    // holds after the snapshot's, so it fast-forwards over them instead of copying the storage.
    const restored = restoreParsedSnapshot(snapshot.value, latest);
    if (!restored.ok) return rejected(restored.error.message);
    const replayed = replayOnto(restored.value, tail);
    if (!replayed.ok) {
      return rejected(`the entries after it do not replay from it: ${replayed.error.message}`);
    }
    return replayed;
  }

  /** Entries [from, to) with the texts they were read from. */
  async function read(threadId: string, from: number, to: number): Promise<StoredEntry[]> {
    const texts = await store.readEntryTexts(threadId, from, to);
    return texts.map((text) => ({ text, entry: JSON.parse(text) as LogEntry }));
  }

  /** Folds `entries` (the log from `state.length` on) onto `state`. */
  function replayOnto(state: ThreadState, entries: readonly StoredEntry[]): Result<ThreadState> {
    return foldThreadLog(
      entries.map((e) => e.entry),
      { machine: machineOptions, from: state, texts: entries.map((e) => e.text) },
    );
  }

  return { stateAt };
}
