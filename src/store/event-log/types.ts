import type { Result } from '../../core/errors.js';
import type { LogEntry } from '../../core/log/index.js';

export interface AppendInput {
  threadId: string;
  /** The log length the writer saw; the first entry's index. */
  expectedIndex: number;
  /** Non-empty; `entries[i].index === expectedIndex + i`. */
  entries: readonly LogEntry[];
}

/** A window of the log: indices in `[from, to)`, at most `limit` of them, in index order. */
export interface ReadOptions {
  /** First index returned (inclusive). Default 0. */
  from?: number;
  /** End of the window (exclusive, like fork's `upToIndex`). Default: the end of the log. */
  to?: number;
  /** Maximum number of entries. Default: no limit. */
  limit?: number;
}

export interface ForkInput {
  /** The source thread. */
  threadId: string;
  /** The new thread; must be unknown or empty. */
  newThreadId: string;
  /** Copy `[0, upToIndex)`; an integer in `[0, length]`. Default: the whole log. */
  upToIndex?: number;
}

/**
 * The event-log store contract (the @statelyai/agent store contract). Every implementation runs
 * the same conformance suite (test/store/event-log-conformance.ts).
 *
 * - `append` lands all entries or none. Expected failures are Result values, never thrown:
 *   VALIDATION_FAILED (bad thread id, bad `expectedIndex`, empty batch, invalid entry,
 *   `entries[i].index !== expectedIndex + i`, an entry id repeated in the batch or already in the
 *   thread), CONFLICT {threadId, expectedIndex, actualIndex} when the stored length differs from
 *   `expectedIndex` — also for the loser of two concurrent appends at one index. The checks and
 *   their order are core's `checkAppend`. An unknown thread is appendable at index 0. An entry
 *   holding data JSON would silently drop (a non-enumerable property) is refused with
 *   NON_SERIALIZABLE {path} rather than stored without it.
 * - `read` returns the entries with index in `[from, to)` (at most `limit`), in index order; an
 *   unknown thread reads as `[]`. Invalid options (not integers >= 0) are a caller bug and throw
 *   a WeftFailure (VALIDATION_FAILED), since the signature carries no Result.
 * - `length` is the next `expectedIndex`; 0 for an unknown thread.
 * - `fork` copies `[0, upToIndex)` onto `newThreadId`. Fails with NOT_FOUND for an unknown source,
 *   VALIDATION_FAILED for an `upToIndex` outside `[0, length]`, a non-empty target, or a target
 *   equal to the source (checked in that order after the ids' shape).
 *
 * Round trip: entries read back verbatim — `JSON.stringify(read) === JSON.stringify(appended)`,
 * key order included — as fresh objects on every call, so callers never share state with the
 * store or each other. A store keeps each entry's canonical JSON text (`canonicalJson(entry)`,
 * what hashes are over and what the engine reads) and, where the appended key order differs,
 * the text as appended beside it.
 */
export interface EventLogStore {
  append(input: AppendInput): Promise<Result<{ length: number }>>;
  read(threadId: string, options?: ReadOptions): Promise<LogEntry[]>;
  length(threadId: string): Promise<number>;
  fork(input: ForkInput): Promise<Result<{ length: number }>>;
}
