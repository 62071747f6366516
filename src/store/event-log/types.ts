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
 * The event-log store contract (shared/seeds/README.md, DESIGN §2.2). Every implementation runs
 * the same conformance suite (test/store/event-log-conformance.ts).
 *
 * - `append` lands all entries or none. Expected failures are Result values, never thrown:
 *   VALIDATION_FAILED (bad thread id, bad `expectedIndex`, empty batch, invalid entry,
 *   `entries[i].index !== expectedIndex + i`, an entry id repeated in the batch or already in the
 *   thread), CONFLICT {threadId, expectedIndex, actualIndex} when the stored length differs from
 *   `expectedIndex` — also for the loser of two concurrent appends at one index. The checks and
 *   their order are core's `checkAppend`. An unknown thread is appendable at index 0.
 * - `read` returns the entries with index in `[from, to)` (at most `limit`), in index order; an
 *   unknown thread reads as `[]`. Invalid options (not integers >= 0) are a caller bug and throw
 *   a WeftFailure (VALIDATION_FAILED), since the signature carries no Result.
 * - `length` is the next `expectedIndex`; 0 for an unknown thread.
 * - `fork` copies `[0, upToIndex)` onto `newThreadId`. Fails with NOT_FOUND for an unknown source,
 *   VALIDATION_FAILED for an `upToIndex` outside `[0, length]`, a non-empty target, or a target
 *   equal to the source (checked in that order after the ids' shape).
 *
 * Round trip: a store keeps each entry as its canonical JSON text (`canonicalJson(entry)`) and
 * returns `JSON.parse` of that exact text, a fresh object per call. So what `read` returns is
 * the appended entry with its object keys in canonical order, and
 * `JSON.stringify(read) === canonicalJson(appended)` for every entry whose objects have no
 * integer-like keys ("0", "42"): JavaScript objects always enumerate those first, in numeric
 * order, whatever the text said. `canonicalJson(read) === canonicalJson(appended)` always holds,
 * so hashes over entries are unaffected.
 */
export interface EventLogStore {
  append(input: AppendInput): Promise<Result<{ length: number }>>;
  read(threadId: string, options?: ReadOptions): Promise<LogEntry[]>;
  length(threadId: string): Promise<number>;
  fork(input: ForkInput): Promise<Result<{ length: number }>>;
}
