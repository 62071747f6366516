/**
 * The SQL of the Prisma event-log store, for both providers. Everything goes through the
 * client's raw API (`$executeRawUnsafe` / `$queryRawUnsafe`) with bound parameters only: the
 * append path is a parameterised multi-row INSERT (measured ~10× faster than `createMany`),
 * and one statement set serves both generated clients, whose model types differ.
 */
import type { LogEntry } from '../../core/log/index.js';

export type EventLogProvider = 'sqlite' | 'postgres';

/** What the store needs from a Prisma client or from an interactive-transaction client. */
export interface RawQueryable {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

export interface TransactionOptions {
  /** Longest wait for a connection / the SQLite transaction mutex, in ms. */
  maxWait?: number;
  /** Longest an interactive transaction may run, in ms. */
  timeout?: number;
}

export interface RawClient extends RawQueryable {
  $transaction<T>(fn: (tx: RawQueryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
}

/** One log_entry row, in column order. */
export type EntryRow = [
  threadId: string,
  index: number,
  entryId: string,
  type: string,
  recordedAt: string,
  text: string,
  /** The text as appended, when it differs from the canonical `text`; null otherwise. */
  verbatim: string | null,
];
const COLUMNS_PER_ROW = 7;

/** Bound-parameter limits: SQLite's SQLITE_MAX_VARIABLE_NUMBER, Postgres' 16-bit count. */
const PARAMETER_LIMIT: Record<EventLogProvider, number> = { sqlite: 32_766, postgres: 65_535 };

/**
 * Rows per INSERT statement by default, well under both parameter limits. Measured here with
 * 5,000-entry appends of ~300 B entries: 500–5,000 rows per statement are within noise of each
 * other on SQLite, and Postgres slows down above ~1,000.
 */
export const DEFAULT_ROWS_PER_STATEMENT = 1000;

export function maxRowsPerStatement(provider: EventLogProvider): number {
  return Math.floor(PARAMETER_LIMIT[provider] / COLUMNS_PER_ROW);
}

const MIN_TIME = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_TIME = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The `recorded_at` column value for an RFC 3339 `recordedAt`. The column is an index for
 * queries; the entry text stays the truth. So the time is normalised to UTC milliseconds, a leap
 * second (`…:60`) maps to the start of the next second, and instants outside years
 * 0001–9999 (year 0000, or an offset pushing 9999-12-31 into year 10000), which Postgres cannot
 * store, are clamped into that range. SQLite gets the text Prisma's adapter writes for DateTime
 * (`…+00:00`), so Prisma reads the column back as a Date.
 */
export function toRecordedAt(recordedAt: string, provider: EventLogProvider): string {
  // Fast path: already UTC with milliseconds, as `Date.toISOString()` writes it.
  if (
    UTC_MILLIS.test(recordedAt) &&
    !recordedAt.startsWith('0000') &&
    !recordedAt.includes(':60.')
  ) {
    return provider === 'sqlite' ? recordedAt.replace('Z', '+00:00') : recordedAt;
  }
  let time = Date.parse(recordedAt);
  if (Number.isNaN(time)) {
    time = Date.parse(recordedAt.replace(/([Tt]\d{2}:\d{2}:)60/, '$159')) + 1000;
  }
  const iso = new Date(Math.min(MAX_TIME, Math.max(MIN_TIME, time))).toISOString();
  return provider === 'sqlite' ? iso.replace('Z', '+00:00') : iso;
}

const UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function toEntryRow(
  threadId: string,
  entry: LogEntry,
  text: string,
  verbatim: string | null,
  provider: EventLogProvider,
): EntryRow {
  return [
    threadId,
    entry.index,
    entry.id,
    entry.event.type,
    toRecordedAt(entry.recordedAt, provider),
    text,
    verbatim,
  ];
}

/**
 * Statement builders for one provider. Placeholders: `?` (SQLite), `$n` (Postgres); every
 * parameter is used once, so both dialects take the same argument lists.
 */
export function createSql(provider: EventLogProvider) {
  const pg = provider === 'postgres';
  const p = (n: number) => (pg ? `$${n}` : '?');
  /** A UTC timestamp parameter (the column has no time zone on Postgres). */
  const ts = (n: number) => (pg ? `($${n}::timestamptz AT TIME ZONE 'UTC')` : '?');
  const int = (n: number) => (pg ? `$${n}::integer` : '?');

  return {
    /** Params: id, now, now. A minimal thread row with neutral defaults; no-op when it exists. */
    ensureThread: `INSERT INTO "thread" ("id", "created_at", "updated_at", "metadata", "node_types", "state_hash") VALUES (${p(1)}, ${ts(2)}, ${ts(3)}, '{}', '[]', '') ON CONFLICT ("id") DO NOTHING`,

    /**
     * Params: newId, now, now, sourceId. The fork target's row, inheriting the source's tenant
     * and configuration; no-op when it exists, inserts nothing when the source does not.
     */
    ensureForkTarget: `INSERT INTO "thread" ("id", "tenant_id", "created_at", "updated_at", "metadata", "node_types", "allow_dynamic_node_types", "state_hash") SELECT ${p(1)}, "tenant_id", ${ts(2)}, ${ts(3)}, "metadata", "node_types", "allow_dynamic_node_types", '' FROM "thread" WHERE "id" = ${p(4)} ON CONFLICT ("id") DO NOTHING`,

    /** Params: id. */
    length: `SELECT "log_length" FROM "thread" WHERE "id" = ${p(1)}`,

    /** Params: length, id. */
    setLength: `UPDATE "thread" SET "log_length" = ${int(1)} WHERE "id" = ${p(2)}`,

    /** Params: upToIndex, sourceId, upToIndex, newId. */
    markFork: `UPDATE "thread" SET "log_length" = ${int(1)}, "forked_from_id" = ${p(2)}, "forked_up_to_index" = ${int(3)} WHERE "id" = ${p(4)}`,

    /** Params: newId, sourceId, upToIndex. Copies the stored texts as they are. */
    copyPrefix: `INSERT INTO "log_entry" ("thread_id", "log_index", "entry_id", "type", "recorded_at", "entry", "packed", "verbatim") SELECT ${p(1)}, "log_index", "entry_id", "type", "recorded_at", "entry", "packed", "verbatim" FROM "log_entry" WHERE "thread_id" = ${p(2)} AND "log_index" < ${int(3)}`,

    /** Params: the rows' values, row after row. */
    insertEntries(rowCount: number): string {
      const rows: string[] = [];
      for (let r = 0; r < rowCount; r++) {
        const b = r * COLUMNS_PER_ROW;
        rows.push(
          `(${p(b + 1)}, ${int(b + 2)}, ${p(b + 3)}, ${p(b + 4)}, ${ts(b + 5)}, ${p(b + 6)}, ${p(b + 7)})`,
        );
      }
      return `INSERT INTO "log_entry" ("thread_id", "log_index", "entry_id", "type", "recorded_at", "entry", "verbatim") VALUES ${rows.join(', ')}`;
    },

    /** Params: threadId, then `idCount` entry ids. */
    existingIds(idCount: number): string {
      const ids = Array.from({ length: idCount }, (_, i) => p(i + 2)).join(', ');
      return `SELECT "entry_id" FROM "log_entry" WHERE "thread_id" = ${p(1)} AND "entry_id" IN (${ids})`;
    },
  };
}

export type EventLogSql = ReturnType<typeof createSql>;
