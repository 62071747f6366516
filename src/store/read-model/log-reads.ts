/**
 * Reading the log back: the one path every reader of `log_entry` takes (the engine's thread
 * store, the API's read queries, the event-log store). A stored entry may be sealed (encryption
 * at rest), packed (its node payloads cut out, see packed-entry.ts) or both; reading opens the
 * seal, then splices the payloads back from the node rows, so every reader gets the same text.
 * Reading the columns any other way misses one of the two steps.
 */
import type { FieldCodec } from '../crypto/index.js';
import { entryTexts } from './packed-entry.js';

export type LogProvider = 'sqlite' | 'postgres';

/** A Prisma client (either provider) or an interactive-transaction client. */
export interface LogQueryable {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

/** Indices in `[from, to)`, at most `limit` of them. */
export interface LogWindow {
  from: number;
  to: number;
  limit: number;
}

/** Largest index value a query may bind: `log_index` is a 32-bit INTEGER on Postgres. */
export const MAX_LOG_INDEX = 2_147_483_647;

export interface LogTexts {
  /** The canonical text: what hashes and replays are over. */
  text: string;
  /** The text as it was appended (differs from `text` only where the store kept it verbatim). */
  appended: string;
}

export interface StoredLogEntry extends LogTexts {
  index: number;
  entryId: string;
  type: string;
  recordedAt: Date;
}

interface Row {
  log_index?: number | bigint;
  entry_id?: string;
  type?: string;
  recorded_at?: Date | string;
  entry: string;
  packed: Uint8Array | null;
  verbatim: string | null;
}

const statements = (provider: LogProvider) => {
  const pg = provider === 'postgres';
  const p = (n: number) => (pg ? `$${n}` : '?');
  const int = (n: number) => (pg ? `$${n}::integer` : '?');
  const where = `FROM "log_entry" WHERE "thread_id" = ${p(1)} AND "log_index" >= ${int(2)} AND "log_index" < ${int(3)} ORDER BY "log_index" LIMIT ${p(4)}`;
  return {
    texts: `SELECT "entry", "packed", "verbatim" ${where}`,
    rows: `SELECT "log_index", "entry_id", "type", "recorded_at", "entry", "packed", "verbatim" ${where}`,
    payloads: `SELECT "sequence", "payload" FROM "node" WHERE "thread_id" = ${p(1)} AND "sequence" >= ${int(2)} AND "sequence" <= ${int(3)}`,
  };
};

const STATEMENTS = { sqlite: statements('sqlite'), postgres: statements('postgres') };

async function read(
  db: LogQueryable,
  provider: LogProvider,
  codec: FieldCodec,
  threadId: string,
  window: LogWindow,
  withRows: boolean,
): Promise<{ rows: Row[]; texts: LogTexts[] }> {
  const sql = STATEMENTS[provider];
  const to = Math.min(window.to, MAX_LOG_INDEX);
  if (window.limit <= 0 || window.from >= to) return { rows: [], texts: [] };
  const rows = await db.$queryRawUnsafe<Row[]>(
    withRows ? sql.rows : sql.texts,
    threadId,
    window.from,
    to,
    window.limit,
  );
  if (rows.length === 0) return { rows, texts: [] };
  const opened = rows.map((row) => ({
    entry: codec.openText(row.entry),
    packed: row.packed === null ? null : codec.openBytes(row.packed),
  }));
  const canonical = await entryTexts(opened, async (min, max) => {
    const nodes = await db.$queryRawUnsafe<Array<{ sequence: number | bigint; payload: string }>>(
      sql.payloads,
      threadId,
      min,
      max,
    );
    return new Map(nodes.map((n) => [Number(n.sequence), codec.openText(n.payload)]));
  });
  const texts = canonical.map((text, i) => {
    const verbatim = rows[i]!.verbatim;
    return { text, appended: verbatim === null ? text : codec.openText(verbatim) };
  });
  return { rows, texts };
}

/** The texts of the thread's entries in `window`, in index order. */
export async function readLogTexts(
  db: LogQueryable,
  provider: LogProvider,
  codec: FieldCodec,
  threadId: string,
  window: LogWindow,
): Promise<LogTexts[]> {
  return (await read(db, provider, codec, threadId, window, false)).texts;
}

/** The thread's entries in `window` with their row columns, in index order. */
export async function readLogEntries(
  db: LogQueryable,
  provider: LogProvider,
  codec: FieldCodec,
  threadId: string,
  window: LogWindow,
): Promise<StoredLogEntry[]> {
  const { rows, texts } = await read(db, provider, codec, threadId, window, true);
  return rows.map((row, i) => ({
    index: Number(row.log_index),
    entryId: row.entry_id!,
    type: row.type!,
    recordedAt: toDate(row.recorded_at!),
    ...texts[i]!,
  }));
}

/** Raw queries return SQLite's DateTime column as the text Prisma wrote (`…+00:00`). */
const toDate = (value: Date | string): Date =>
  value instanceof Date ? value : new Date(value.includes('T') ? value : `${value}Z`);
