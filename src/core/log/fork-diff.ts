import { canonicalJson } from '../canonical.js';
import { err, ok, type Result } from '../errors.js';
import type { LogEntry, LogEvent } from './entry.js';

/**
 * The entries a fork at `upToIndex` starts with: deep copies of `[0, upToIndex)` (exclusive;
 * default: the whole log), key order preserved. VALIDATION_FAILED when `upToIndex` is not an
 * integer in `[0, entries.length]`. Pure.
 */
export function forkLog<E extends LogEvent = LogEvent>(
  entries: readonly LogEntry<E>[],
  upToIndex: number = entries.length,
): Result<LogEntry<E>[]> {
  if (!Number.isInteger(upToIndex) || upToIndex < 0 || upToIndex > entries.length) {
    const message = `upToIndex must be an integer in [0, ${entries.length}] (the log length), got ${String(upToIndex)}.`;
    return err({ code: 'VALIDATION_FAILED', message, issues: [{ path: '$.upToIndex', message }] });
  }
  return ok(entries.slice(0, upToIndex).map((entry) => structuredClone(entry)));
}

export interface LogDiff<E extends LogEvent = LogEvent> {
  /** Length of the longest common prefix; both logs agree on `[0, commonPrefix)`. */
  commonPrefix: number;
  onlyA: LogEntry<E>[];
  onlyB: LogEntry<E>[];
}

/**
 * Where two logs diverge. Entries are compared by their whole canonical JSON (verification
 * included), not by id, so a tampered copy of an entry ends the common prefix. Pure; O(size of
 * the common prefix) plus slicing the rest.
 */
export function diffLogs<E extends LogEvent = LogEvent>(
  a: readonly LogEntry<E>[],
  b: readonly LogEntry<E>[],
): LogDiff<E> {
  const limit = Math.min(a.length, b.length);
  let common = 0;
  while (common < limit && sameEntry(a[common]!, b[common]!)) common++;
  return { commonPrefix: common, onlyA: a.slice(common), onlyB: b.slice(common) };
}

const sameEntry = (x: LogEntry, y: LogEntry): boolean =>
  x === y || canonicalJson(x) === canonicalJson(y);
