/**
 * Retention in the read model: a thread row's `expires_at` (null: never), which the retention
 * sweeper (src/engine/retention.ts) reads through the partial index of migration 0015 — live
 * threads with an expiry, soonest first — and deletes through the removal of deleteThread.
 * Expiry is not in the log: it is written at creation and by setThreadExpiry only, and a thread's
 * commits leave it as it is (sql.ts's upsert does not name it).
 */
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { thread } from '../tables/index.js';
import { bind, selectRows } from './select.js';
import type { ScriptRecorder } from './write-script.js';

const T = thread.c;

/** A live thread whose expiry has passed. */
export interface ExpiredThread {
  /** Its storage key. */
  threadId: string;
  tenantId: string;
  expiresAt: Date;
  logLength: number;
}

/** Where a page of expired threads continues: after this thread in `(expiresAt, threadId)` order. */
export interface ExpiredCursor {
  expiresAt: Date;
  threadId: string;
}

export interface ExpiredThreadQuery {
  /** Expiries at or before this instant have passed. */
  now: Date;
  /** At most this many threads, in `(expiresAt, threadId)` order. */
  limit: number;
  after?: ExpiredCursor | undefined;
  /** Only this tenant's threads. */
  tenantId?: string | undefined;
}

/** The conditions every candidate query starts with: the partial index's own, then the bound. */
const EXPIRED = `${T.expiresAt} IS NOT NULL AND ${T.deletedAt} IS NULL AND ${T.expiresAt} <= ?`;

/** Live threads whose expiry is at or before `now`, soonest first (one page). */
export async function findExpiredThreads(
  weft: WeftPrisma,
  query: ExpiredThreadQuery,
): Promise<ExpiredThread[]> {
  const values: unknown[] = [bind(weft, thread, 'expiresAt', query.now)];
  let where = EXPIRED;
  if (query.after !== undefined) {
    const at = bind(weft, thread, 'expiresAt', query.after.expiresAt);
    where += ` AND (${T.expiresAt} > ? OR (${T.expiresAt} = ? AND ${T.id} > ?))`;
    values.push(at, at, query.after.threadId);
  }
  if (query.tenantId !== undefined) {
    where += ` AND ${T.tenantId} = ?`;
    values.push(query.tenantId);
  }
  const rows = await selectRows(
    weft,
    thread,
    where,
    [...values, query.limit],
    ` ORDER BY ${T.expiresAt}, ${T.id} LIMIT ?`,
    ['id', 'tenantId', 'expiresAt', 'logLength'],
  );
  return rows.map((row) => ({
    threadId: row.id,
    tenantId: row.tenantId ?? 'default',
    expiresAt: row.expiresAt as Date,
    logLength: row.logLength,
  }));
}

const count = async (weft: WeftPrisma, where: string, values: unknown[]): Promise<number> => {
  const [row] = await rawQuery(
    weft,
    `SELECT COUNT(*) AS n FROM ${thread.sql} WHERE ${where}`,
    values,
  );
  return Number(row?.n ?? 0);
};

/** How many live threads have expired by `now` (of `tenantId` when given). */
export function countExpiredThreads(
  weft: WeftPrisma,
  now: Date,
  tenantId?: string,
): Promise<number> {
  const values: unknown[] = [bind(weft, thread, 'expiresAt', now)];
  let where = EXPIRED;
  if (tenantId !== undefined) {
    where += ` AND ${T.tenantId} = ?`;
    values.push(tenantId);
  }
  return count(weft, where, values);
}

/**
 * How many live threads have no expiry and were created at or before `before`: what a retention
 * default (WEFT_RETENTION_DAYS), which applies to new threads only, would have expired.
 */
export function countUnexpiringSince(
  weft: WeftPrisma,
  before: Date,
  tenantId?: string,
): Promise<number> {
  const values: unknown[] = [bind(weft, thread, 'createdAt', before)];
  let where = `${T.expiresAt} IS NULL AND ${T.deletedAt} IS NULL AND ${T.createdAt} <= ?`;
  if (tenantId !== undefined) {
    where += ` AND ${T.tenantId} = ?`;
    values.push(tenantId);
  }
  return count(weft, where, values);
}

/** Sets when a live thread expires (null: never); a deleted one is left as it is. */
export function recordExpiry(
  script: ScriptRecorder,
  expiry: { threadId: string; expiresAt: Date | null },
): void {
  script.add(
    `UPDATE ${thread.sql} SET ${T.expiresAt} = ? WHERE ${T.id} = ? AND ${T.deletedAt} IS NULL`,
    [thread.encodeField('expiresAt', expiry.expiresAt, script.provider), expiry.threadId],
  );
}
