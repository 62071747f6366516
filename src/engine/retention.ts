/**
 * Retention: a thread may have an expiry (`expiresAt`), given at creation, set by the server's
 * default (`retentionDays`: createdAt + N days for threads created without one; never applied to
 * threads that exist already) or later by `setThreadExpiry`. Expiry is not part of the log: it is
 * the operator's policy, not the thread's content, so it changes no state hash.
 *
 * `deleteExpiredThreads` is one sweep: the read model names the live threads whose expiry has
 * passed (an index, src/store/read-model/retention.ts), and each goes through deleteThread's own
 * path (delete.ts) with the actor `retention` — forks keep the rows they read, the tenant's audit
 * entry is written, subscribers end with THREAD_DELETED, caches forget it. Exactly once across
 * engines and processes: the audit entry's key names the thread and its creation, so of two
 * sweeps deleting one thread one commits and the other writes nothing (removal.ts); and the
 * removal re-checks the expiry in its transaction, so an expiry moved later or cleared meanwhile
 * wins. `startRetentionSweeper` runs sweeps on an interval.
 */

import { canonicalJson } from '../core/canonical.js';
import { err, ok, type Result } from '../core/errors.js';
import { isRfc3339 } from '../core/log/index.js';
import type { ExpiredCursor } from '../store/read-model/index.js';
import { checkThreadKey, invalid, threadNotFound } from './checks.js';
import { deleteThread } from './delete.js';
import type { Runtime } from './engine.js';
import type { IdempotencyClaim } from './idempotency.js';
import { startSweepLoop } from './sweep-loop.js';
import { answeredAs, locateThread } from './tenancy.js';
import type {
  Engine,
  ExpiredThreadDeleted,
  RetentionSweep,
  RetentionSweepInput,
  SetThreadExpiryInput,
  SetThreadExpiryResult,
} from './types.js';

/** Threads one sweep deletes at most (default). */
export const DEFAULT_RETENTION_BATCH = 100;
/** Largest `limit` of one sweep. */
export const MAX_RETENTION_BATCH = 10_000;
/** Threads a sweep deletes at once: few, so that the commands of the API keep the writer. */
const DELETE_CONCURRENCY = 2;
const DAY_MS = 86_400_000;

/**
 * An expiry as given: an RFC 3339 date-time, or null (none). A date in the past is accepted:
 * the thread expires at the next sweep.
 */
export function checkExpiry(value: unknown, path: string): Result<Date | null> {
  if (value === null) return ok(null);
  if (!isRfc3339(value)) {
    return err(
      invalid(path, 'must be an RFC 3339 date-time such as 2027-01-01T00:00:00.000Z, or null'),
    );
  }
  const date = new Date(value);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) {
    return err(invalid(path, 'must be a date-time between the years 1 and 9999'));
  }
  return ok(date);
}

/** The expiry of a thread created at `now` without one: the server default, if any. */
export function defaultExpiry(rt: Pick<Runtime, 'retentionDays'>, now: string): Date | null {
  return rt.retentionDays === undefined
    ? null
    : new Date(new Date(now).getTime() + rt.retentionDays * DAY_MS);
}

/** The expiry of a new thread: the one given (null: none), else the default. */
export function newThreadExpiry(
  rt: Pick<Runtime, 'retentionDays'>,
  given: unknown,
  now: string,
): Result<Date | null> {
  return given === undefined ? ok(defaultExpiry(rt, now)) : checkExpiry(given, '$.expiresAt');
}

/** setThreadExpiry: the thread must be live; its expiry is written with the idempotency record. */
export async function setThreadExpiry(
  rt: Runtime,
  input: SetThreadExpiryInput,
  claim: IdempotencyClaim | undefined,
  tenant: string | undefined,
  checkRef: (value: unknown, path: string) => Result<string>,
): Promise<Result<SetThreadExpiryResult>> {
  const checked = checkRef(input.threadId, '$.threadId');
  if (!checked.ok) return checked;
  const expiry = checkExpiry(input.expiresAt, '$.expiresAt');
  if (!expiry.ok) return expiry;
  const located = await locateThread(rt.tenants, input.threadId, tenant);
  if (!located.ok) return located;
  const at = located.value;
  return rt.exclusive(at.key, async () => {
    if ((await rt.store.getLogLength(at.key)) === undefined) return err(threadNotFound(at.id));
    const response: SetThreadExpiryResult = {
      threadId: at.id,
      expiresAt: expiry.value === null ? null : expiry.value.toISOString(),
    };
    const written = await rt.store.setThreadExpiry(
      at.key,
      expiry.value,
      claim === undefined
        ? undefined
        : {
            ...claim,
            response: canonicalJson(response),
            threadId: at.key,
            createdAt: new Date(rt.clock.now()),
          },
    );
    return written.ok ? ok(response) : answeredAs(written, at);
  });
}

/** The retention command of an engine: expired threads come from the thread store's index. */
export function createRetentionCommands(rt: Runtime) {
  async function deleteExpiredThreads(
    input: RetentionSweepInput = {},
  ): Promise<Result<RetentionSweep>> {
    const checked = checkSweepInput(input);
    if (!checked.ok) return checked;
    const now = rt.clock.now();
    const limit = input.limit ?? DEFAULT_RETENTION_BATCH;
    const expired = await rt.store.findExpiredThreads({
      now: new Date(now),
      limit,
      after: input.after === undefined ? undefined : storeCursor(input.after),
    });
    const sweep: RetentionSweep = {
      now,
      found: expired.length,
      deleted: [],
      skipped: [],
      failed: [],
    };
    let next = 0;
    const worker = async () => {
      while (next < expired.length) {
        const thread = expired[next++]!;
        const deleted = await deleteThread(
          rt,
          { threadId: thread.threadId, actor: 'retention' },
          undefined,
          undefined,
          checkThreadKey,
          new Date(now),
        );
        if (deleted.ok) {
          const done: ExpiredThreadDeleted = {
            ...deleted.value,
            tenantId: thread.tenantId,
            expiresAt: thread.expiresAt.toISOString(),
          };
          sweep.deleted.push(done);
        } else if (deleted.error.code === 'NOT_FOUND') {
          // Deleted by another sweep or a deleteThread meanwhile, or its expiry moved.
          sweep.skipped.push(thread.threadId);
        } else {
          sweep.failed.push({ threadId: thread.threadId, error: deleted.error });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, expired.length) }, worker));
    const last = expired[expired.length - 1];
    if (expired.length === limit && last !== undefined) {
      sweep.next = { expiresAt: last.expiresAt.toISOString(), threadId: last.threadId };
    }
    return ok(sweep);
  }

  return { commands: { deleteExpiredThreads } };
}

function checkSweepInput(input: RetentionSweepInput): Result<void> {
  if (typeof input !== 'object' || input === null) return err(invalid('$', 'must be an object'));
  const { limit, after } = input;
  if (
    limit !== undefined &&
    (typeof limit !== 'number' ||
      !Number.isSafeInteger(limit) ||
      limit < 1 ||
      limit > MAX_RETENTION_BATCH)
  ) {
    return err(invalid('$.limit', `must be an integer from 1 to ${MAX_RETENTION_BATCH}`));
  }
  if (after === undefined) return ok(undefined);
  if (typeof after !== 'object' || after === null || !isRfc3339(after.expiresAt)) {
    return err(invalid('$.after', 'must be a { expiresAt, threadId } cursor'));
  }
  const key = checkThreadKey(after.threadId, '$.after.threadId');
  return key.ok ? ok(undefined) : key;
}

/** The cursor of the store from a sweep's `next`. */
export const storeCursor = (after: { expiresAt: string; threadId: string }): ExpiredCursor => ({
  expiresAt: new Date(after.expiresAt),
  threadId: after.threadId,
});

export interface RetentionSweeperOptions {
  /** Time between sweeps. Default 60,000 ms. */
  intervalMs?: number;
  /**
   * Threads deleted per sweep at most. A full sweep is followed by the next one at once (after
   * the event loop has run what waits), a partial one by `intervalMs` of rest. Default 100.
   */
  batchSize?: number;
  /**
   * Called with what went wrong: a sweep that threw or failed (e.g. the database is unreachable)
   * or a thread that could not be deleted (`{ threadId, error }`). Default: console.error.
   */
  onError?: (error: unknown) => void;
  /** Called after each sweep, with what it did. */
  onSweep?: (sweep: RetentionSweep) => void;
}

/** Running totals of a sweeper (for /metrics). */
export interface RetentionSweeperStats {
  /** Sweeps run (each one page of at most batchSize expired threads). */
  sweeps: number;
  /** Sweeps that failed as a whole, and threads that could not be deleted. */
  errors: number;
  /** Threads this sweeper deleted. */
  deleted: number;
  /** Expired threads another process (or a deleteThread, or a new expiry) took first. */
  skipped: number;
}

export interface RetentionSweeper {
  /** Starts the next sweep now (after the current one, if one is running). */
  wake(): void;
  /** Stops; resolves when the sweep in progress (if any) has finished. */
  stop(): Promise<void>;
  stats(): RetentionSweeperStats;
}

/**
 * Deletes expired threads now and then every `intervalMs` until stopped, one bounded batch per
 * sweep; sweeps never overlap. Several sweepers (in one process or many, on one database) may run
 * at once: each thread is still deleted once, with one audit entry. The timer does not keep the
 * process alive.
 */
export function startRetentionSweeper(
  engine: Pick<Engine, 'deleteExpiredThreads'>,
  options: RetentionSweeperOptions = {},
): RetentionSweeper {
  const intervalMs = options.intervalMs ?? 60_000;
  const batchSize = options.batchSize ?? DEFAULT_RETENTION_BATCH;
  if (!Number.isFinite(intervalMs) || intervalMs < 0) {
    throw new RangeError(`retention sweeper: intervalMs must be a number >= 0, not ${intervalMs}`);
  }
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_RETENTION_BATCH) {
    throw new RangeError(
      `retention sweeper: batchSize must be an integer from 1 to ${MAX_RETENTION_BATCH}, not ${batchSize}`,
    );
  }
  const onError =
    options.onError ?? ((error: unknown) => console.error('weft: retention sweep failed', error));
  const stats: RetentionSweeperStats = { sweeps: 0, errors: 0, deleted: 0, skipped: 0 };
  const report = (error: unknown) => {
    stats.errors++;
    try {
      onError(error);
    } catch {
      // A failing error handler must not stop the sweeper.
    }
  };

  let after: RetentionSweep['next'];

  /** One sweep; true when its batch was full (more may be waiting). */
  async function sweep(): Promise<boolean> {
    stats.sweeps++;
    const result = await engine.deleteExpiredThreads({ limit: batchSize, after });
    if (!result.ok) {
      report(result.error);
      after = undefined;
      return false;
    }
    const done = result.value;
    stats.deleted += done.deleted.length;
    stats.skipped += done.skipped.length;
    for (const failure of done.failed) report(failure);
    options.onSweep?.(done);
    // Past the failed ones; from the start again once a batch is not full.
    after = done.next;
    return done.next !== undefined;
  }

  const sweeps = startSweepLoop(sweep, intervalMs, (error) => {
    report(error);
    after = undefined;
  });
  return { wake: sweeps.wake, stop: sweeps.stop, stats: () => ({ ...stats }) };
}
