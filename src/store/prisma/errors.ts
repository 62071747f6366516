/**
 * Provider error recognition shared by the Prisma-backed stores (event log, thread store): the
 * one place that reads Prisma error codes (STYLE: they are translated in src/store only).
 *
 * A unique violation from a model query is `P2002`; from a raw query (`$executeRawUnsafe`,
 * which the append paths use) Prisma 7 reports `P2010` "Raw query failed" with the driver
 * adapter's classification in `meta.driverAdapterError.cause.kind` — the same on SQLite
 * (SQLITE_CONSTRAINT_PRIMARYKEY / _UNIQUE) and Postgres (23505). Matched structurally, so
 * neither generated client's error classes are needed. better-sqlite3's own errors (the thread
 * store writes SQLite through it directly) carry the SQLite code as `code`.
 */

import { WeftFailure } from '../../core/errors.js';

const UNIQUE_DRIVER_CODES: ReadonlySet<string> = new Set([
  '23505',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
  'SQLITE_CONSTRAINT_UNIQUE',
]);

const field = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;

/** True for a unique-constraint violation raised through either Prisma client. */
export function isUniqueViolation(error: unknown): boolean {
  const code = field(error, 'code');
  if (code === 'P2002') return true;
  // better-sqlite3's own error (the thread store's SQLite write connection): the code as is.
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return UNIQUE_DRIVER_CODES.has(code);
  if (code !== 'P2010') return false;
  const cause = field(field(field(error, 'meta'), 'driverAdapterError'), 'cause');
  if (field(cause, 'kind') === 'UniqueConstraintViolation') return true;
  const original = field(cause, 'originalCode');
  return typeof original === 'string' && UNIQUE_DRIVER_CODES.has(original);
}

/** Postgres's code for a statement cancelled, by statement_timeout here. */
const QUERY_CANCELED = '57014';

/** True for a read the database cancelled (the read pool's statement_timeout). */
export function isQueryCanceled(error: unknown): boolean {
  return field(error, 'code') === QUERY_CANCELED;
}

/** QUERY_TIMEOUT, thrown for a read that ran past WEFT_QUERY_TIMEOUT_MS. */
export function queryTimeout(ms: number): WeftFailure {
  return new WeftFailure({
    code: 'QUERY_TIMEOUT',
    message: `the database took longer than ${ms} ms (WEFT_QUERY_TIMEOUT_MS) to answer: ask for less (a smaller page, a narrower search or filter) and retry`,
    timeoutMs: ms,
  });
}
