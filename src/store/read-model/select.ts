/**
 * Reading rows: `SELECT` texts written with the table declarations' identifiers (so a column
 * name lives in one place, src/store/tables) and `?` placeholders, run through the Prisma
 * client's raw queries (numbered for Postgres, see prisma/raw.ts), each row decoded into its
 * table's row type. Every reader of the read models — the thread store, the API's read queries,
 * the deadline scheduler, the API keys — goes this way.
 */
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { run, type Table, thread } from '../tables/index.js';

// biome-ignore lint/suspicious/noExplicitAny: any table's declaration
type AnyTable<Row> = Table<Row, any>;

/** `?, ?, …` for an `IN (…)` list of `n` values. */
export const marks = (n: number): string => Array.from({ length: n }, () => '?').join(', ');

/**
 * Rows of `table` matching `where` (SQL after `WHERE`, with `?` for `values`; empty: all),
 * followed by `tail` (ORDER BY, LIMIT). With `fields`, only those columns are read (the others
 * are absent from the rows).
 */
export async function selectRows<Row>(
  weft: WeftPrisma,
  table: AnyTable<Row>,
  where: string,
  values: readonly unknown[],
  tail = '',
  fields?: readonly string[],
): Promise<Row[]> {
  const text = `SELECT ${table.select(fields)} FROM ${table.sql}${where === '' ? '' : ` WHERE ${where}`}${tail}`;
  const rows = await rawQuery(weft, text, values);
  return rows.map((row) => table.decode(row, weft.provider));
}

/** A value as its column binds it on this provider (a Date, a boolean). */
export const bind = <Row>(
  weft: WeftPrisma,
  table: AnyTable<Row>,
  field: string,
  value: unknown,
): unknown => table.encodeField(field, value, weft.provider);

/** Where a run lives: a run id repeats in forks of the thread that started it. */
export interface RunLocation {
  threadId: string;
  forkedFromId: string | null;
  /** The tenant of the holding thread. */
  tenantId: string;
}

/** Every thread holding a run with this id (the starting thread and its forks). */
export async function findRunLocations(weft: WeftPrisma, runId: string): Promise<RunLocation[]> {
  const r = run.c;
  const t = thread.c;
  const rows = await rawQuery(
    weft,
    `SELECT t.${t.id}, t.${t.forkedFromId}, t.${t.tenantId} FROM ${run.sql} r JOIN ${thread.sql} t ON t.${t.id} = r.${r.threadId} WHERE r.${r.id} = ?`,
    [runId],
  );
  return rows.map((row) => {
    const t = thread.decode(row, weft.provider);
    return { threadId: t.id, forkedFromId: t.forkedFromId, tenantId: t.tenantId ?? '' };
  });
}

/** `COUNT(*)` of `table` rows matching `where`. */
export async function countRows<Row>(
  weft: WeftPrisma,
  table: AnyTable<Row>,
  where: string,
  values: readonly unknown[],
): Promise<number> {
  const [row] = await rawQuery(
    weft,
    `SELECT COUNT(*) AS n FROM ${table.sql} WHERE ${where}`,
    values,
  );
  return Number(row?.n ?? 0);
}

/** How many threads a tenant owns. */
export const countTenantThreads = (weft: WeftPrisma, tenantId: string): Promise<number> =>
  countRows(weft, thread, `${thread.c.tenantId} = ?`, [tenantId]);

/** `WHERE` parts and their values, built up condition by condition. */
export function whereBuilder() {
  const parts: string[] = [];
  const values: unknown[] = [];
  return {
    add(sql: string, ...bound: unknown[]) {
      parts.push(sql);
      values.push(...bound);
    },
    where: () => parts.join(' AND '),
    values,
  };
}
