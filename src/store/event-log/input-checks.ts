/**
 * Checks every event-log store runs before touching its storage, so all backends refuse the
 * same inputs with the same errors. The append contract itself is core's `checkAppend`.
 */
import { err, ok, type Result, WeftFailure } from '../../core/errors.js';
import type { ForkInput, ReadOptions } from './types.js';

const invalid = (path: string, message: string): Result<never> =>
  err({ code: 'VALIDATION_FAILED', message, issues: [{ path, message }] });

const isThreadId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0;

/** VALIDATION_FAILED unless `threadId` is a non-empty string. */
export function checkThreadId(threadId: unknown, path = '$.threadId'): Result<void> {
  return isThreadId(threadId)
    ? ok(undefined)
    : invalid(path, `${path.slice(2)} must be a non-empty string (got ${typeof threadId}).`);
}

const isIndex = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** A resolved read window: indices in `[from, to)`, at most `limit` entries. */
export interface ReadWindow {
  from: number;
  /** Exclusive; `Number.MAX_SAFE_INTEGER` when open. */
  to: number;
  /** `Number.MAX_SAFE_INTEGER` when unlimited. */
  limit: number;
}

/**
 * Resolves read options, throwing a WeftFailure (VALIDATION_FAILED) for a bad thread id or an
 * option that is not an integer >= 0: `read` returns entries, not a Result, and such input is a
 * bug in the caller rather than an outcome to handle.
 */
export function getReadWindow(threadId: unknown, options: ReadOptions = {}): ReadWindow {
  const id = checkThreadId(threadId);
  if (!id.ok) throw new WeftFailure(id.error);
  for (const key of ['from', 'to', 'limit'] as const) {
    const value = options[key];
    if (value !== undefined && !isIndex(value)) {
      const message = `read option ${key} must be an integer >= 0 (got ${String(value)}).`;
      throw new WeftFailure({
        code: 'VALIDATION_FAILED',
        message,
        issues: [{ path: `$.options.${key}`, message }],
      });
    }
  }
  return {
    from: options.from ?? 0,
    to: options.to ?? Number.MAX_SAFE_INTEGER,
    limit: options.limit ?? Number.MAX_SAFE_INTEGER,
  };
}

/** Shape checks of a fork request that need no storage: ids, distinct ids, `upToIndex` type. */
export function checkForkInput(input: ForkInput): Result<void> {
  const source = checkThreadId(input.threadId);
  if (!source.ok) return source;
  const target = checkThreadId(input.newThreadId, '$.newThreadId');
  if (!target.ok) return target;
  if (input.threadId === input.newThreadId) {
    return invalid(
      '$.newThreadId',
      `A thread cannot be forked onto itself (${input.threadId}): choose a new thread id.`,
    );
  }
  const upTo = input.upToIndex;
  if (upTo !== undefined && !isIndex(upTo)) {
    return invalid('$.upToIndex', `upToIndex must be an integer >= 0 (got ${String(upTo)}).`);
  }
  return ok(undefined);
}

/** NOT_FOUND for a fork whose source thread does not exist. */
export const unknownForkSource = (threadId: string): Result<never> =>
  err({
    code: 'NOT_FOUND',
    message: `Cannot fork thread ${threadId}: it does not exist. Check the thread id.`,
    entity: 'Thread',
    id: threadId,
  });

/** VALIDATION_FAILED for an `upToIndex` past the end of the source log. */
export const forkOutOfRange = (upToIndex: number, length: number): Result<never> =>
  invalid(
    '$.upToIndex',
    `upToIndex must be an integer in [0, ${length}] (the source log length), got ${upToIndex}.`,
  );

/** VALIDATION_FAILED for a fork onto a thread that already has entries. */
export const forkTargetNotEmpty = (newThreadId: string, length: number): Result<never> =>
  invalid(
    '$.newThreadId',
    `Cannot fork onto thread ${newThreadId}: it already has ${length} log entries. Fork onto a new or empty thread.`,
  );
