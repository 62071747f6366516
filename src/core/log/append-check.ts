import { err, ok, type Result, type ValidationIssue, type WeftError } from '../errors.js';
import { getEntryIssues, type LogEntry } from './entry.js';
import { findJsonUnsafe } from './json-safety.js';

export interface AppendCheckInput {
  threadId: string;
  /** The thread's stored log length (0 for an unknown thread). */
  currentLength: number;
  /** The length the writer saw when it built `entries`. */
  expectedIndex: number;
  entries: readonly LogEntry[];
  /** Whether the thread already holds an entry with this id. */
  hasEntryId: (id: string) => boolean;
  /** Validate each entry's envelope and JSON safety. Default true. */
  validateEntries?: boolean;
}

/**
 * The event-log store contract, shared by every store so they all fail the same way. Run it
 * inside the store's write transaction (after reading the current length). First failure wins,
 * in this order:
 *
 * 1. shape — `expectedIndex` is an integer >= 0, `entries` is non-empty, every entry is a valid
 *    plain-JSON envelope (first bad entry reported), and `entries[i].index === expectedIndex + i`
 *    → VALIDATION_FAILED; an entry holding data JSON would silently drop (a non-enumerable
 *    property) → NON_SERIALIZABLE {path}. These are bugs in the caller; retrying will not help.
 * 2. conflict — `currentLength !== expectedIndex` → CONFLICT {threadId, expectedIndex,
 *    actualIndex}. A stale writer: reload and retry. Checked before ids, so a writer replaying an
 *    already-landed batch is told it is stale rather than that its ids exist.
 * 3. duplicates — an id repeated within the batch or already in the thread → VALIDATION_FAILED
 *    naming every such id.
 *
 * Pure apart from calling `hasEntryId`. The unique `(threadId, index)` constraint in the database
 * still decides races between concurrent writers; this check gives both the same error.
 */
export function checkAppend(input: AppendCheckInput): Result<void> {
  const { threadId, currentLength, expectedIndex, entries } = input;
  const shape = checkShape(input);
  if (shape !== null) return err(Array.isArray(shape) ? invalidError(shape) : shape);

  if (currentLength !== expectedIndex) {
    return err({
      code: 'CONFLICT',
      message: `Thread ${threadId} has ${currentLength} log entries but the append expected ${expectedIndex}: another writer got there first. Reload the thread and retry with expectedIndex ${currentLength}.`,
      threadId,
      expectedIndex,
      actualIndex: currentLength,
    });
  }

  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    const path = `$.entries[${i}].id`;
    if (seen.has(entry.id)) {
      issues.push({ path, message: `entry id "${entry.id}" appears twice in this batch` });
    } else if (input.hasEntryId(entry.id)) {
      issues.push({
        path,
        message: `entry id "${entry.id}" already exists in thread ${threadId}: entry ids are unique per thread, use a fresh one`,
      });
    }
    seen.add(entry.id);
  });
  return issues.length > 0 ? invalid(issues) : ok(undefined);
}

function checkShape(input: AppendCheckInput): ValidationIssue[] | WeftError | null {
  const { expectedIndex, entries } = input;
  if (!Number.isSafeInteger(expectedIndex) || expectedIndex < 0) {
    return [
      {
        path: '$.expectedIndex',
        message: `expectedIndex must be an integer >= 0 (got ${String(expectedIndex)})`,
      },
    ];
  }
  if (!Array.isArray(entries) || entries.length === 0) {
    return [{ path: '$.entries', message: 'an append needs at least one entry' }];
  }
  if (input.validateEntries !== false) {
    for (let i = 0; i < entries.length; i++) {
      const root = `$.entries[${i}]`;
      const issues = getEntryIssues(entries[i], root);
      if (issues.length === 0) continue;
      const unsafe = findJsonUnsafe(entries[i], root);
      if (unsafe?.dropped) {
        return {
          code: 'NON_SERIALIZABLE',
          message: `Append rejected at ${unsafe.path}: ${unsafe.reason}.`,
          path: unsafe.path,
        };
      }
      return issues;
    }
  }
  for (let i = 0; i < entries.length; i++) {
    const actual = entries[i]!.index;
    if (actual !== expectedIndex + i) {
      return [
        {
          path: `$.entries[${i}].index`,
          message: `index must be ${expectedIndex + i} (expectedIndex ${expectedIndex} + position ${i}), got ${String(actual)}: a batch continues the log without gaps`,
        },
      ];
    }
  }
  return null;
}

function invalid(issues: ValidationIssue[]): Result<never> {
  return err(invalidError(issues));
}

function invalidError(issues: ValidationIssue[]): WeftError {
  const first = issues[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return {
    code: 'VALIDATION_FAILED',
    message: `Append rejected at ${first.path}: ${first.message}${more}.`,
    issues,
  };
}
