/**
 * The read pool of a Postgres database: `pg` itself, beside the Prisma client, for the store's
 * raw `SELECT`s (as sqlite-reader.ts is for SQLite). Through Prisma, every row of a raw query
 * went through its query interpreter's result mapping — each value tagged, copied and untagged
 * again — which cost more than the statement on the small, indexed reads a page makes, and on a
 * whole log (a cold `state`) left several copies of its text to collect. Here rows come back
 * as the driver parses them, with the two types Prisma maps differently mapped as Prisma does
 * (below), so the tables' decoders (src/store/tables) take them unchanged.
 *
 * The pool connects on first use, holds at most `max` connections and lets idle ones go; it
 * reads what is committed, as Prisma's pool did (raw reads never ran inside a transaction).
 * Values the driver would bind differently from Prisma's adapter are left to Prisma.
 */
import pg from 'pg';
import { POSTGRES_APPLICATION_NAME } from '../migrate/database-url.js';
import { isQueryCanceled, queryTimeout } from './errors.js';
import { bindAll, closeWithClient, NO_BIND } from './reader-binding.js';

/** Connections of the read pool at most (Prisma's own pool keeps pg's default, 10). */
const DEFAULT_MAX_CONNECTIONS = 8;
const TIMESTAMP_OID = 1114;
const INT8_OID = 20;

export interface PostgresReader {
  /** The rows of `text` (`$n` placeholders), or undefined when Prisma must run it. */
  all(
    text: string,
    values: readonly unknown[],
  ): Promise<Array<Record<string, unknown>>> | undefined;
  close(): Promise<void>;
}

/**
 * Parsers for this pool only (pg's are process-wide, and Prisma's adapter has its own needs):
 * `timestamp(3)` columns hold UTC wall time, which pg would read as local time; `int8` (what
 * `COUNT(*)` returns) comes back as a bigint, as Prisma returns it, not as a string.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMP_OID) return (text: string) => new Date(`${text.replace(' ', 'T')}Z`);
    if (oid === INT8_OID) return (text: string) => BigInt(text);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** The form Prisma's pg adapter binds, or NO_BIND. */
function bindable(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'undefined':
      return null;
    default:
      if (value === null || Buffer.isBuffer(value)) return value;
      if (value instanceof Uint8Array) {
        return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      }
      // UTC, as the columns hold it: pg's own form is local time with an offset, which a
      // `timestamp` (without time zone) comparison would take as wall time and misread.
      if (value instanceof Date) return value.toISOString();
      return NO_BIND;
  }
}

export function openPostgresReader(
  url: string,
  options: { max?: number; queryTimeoutMs?: number | undefined } = {},
): PostgresReader {
  let pool: pg.Pool | undefined;
  const { max = DEFAULT_MAX_CONNECTIONS, queryTimeoutMs } = options;
  const connection = () => {
    if (pool === undefined) {
      pool = new pg.Pool({
        connectionString: url,
        application_name: POSTGRES_APPLICATION_NAME,
        max,
        types,
        // Set by the server on each connection it opens: a read that runs longer is cancelled
        // there, its connection freed, and the caller told QUERY_TIMEOUT.
        ...(queryTimeoutMs === undefined ? {} : { statement_timeout: queryTimeoutMs }),
      });
      // An idle connection the server ends (a restart, a dropped database) is discarded by the
      // pool and the next read opens another; unheard, its 'error' would end the process.
      pool.on('error', () => undefined);
    }
    return pool;
  };
  return {
    all(text, values) {
      const bound = bindAll(values, bindable);
      if (bound === undefined) return undefined;
      return connection()
        .query(text, bound)
        .then(
          (result) => result.rows as Array<Record<string, unknown>>,
          (error: unknown) => {
            throw queryTimeoutMs !== undefined && isQueryCanceled(error)
              ? queryTimeout(queryTimeoutMs)
              : error;
          },
        );
    },
    async close() {
      const open = pool;
      pool = undefined;
      await open?.end();
    },
  };
}

/** A reader for `client` (a Prisma client on the database at `url`), closed with it. */
export function attachPostgresReader(
  client: { $disconnect(): Promise<void> },
  url: string,
  queryTimeoutMs?: number,
): PostgresReader {
  const reader = openPostgresReader(url, { queryTimeoutMs });
  closeWithClient(client, reader.close);
  return reader;
}
