/**
 * Raw statements on a Prisma client of either provider, written once with `?` placeholders
 * (numbered for Postgres here) and bound by the client. Rows come back keyed by column name;
 * a table's `decode` turns them into its row type.
 */
import { postgresText } from '../tables/index.js';
import type { WeftPrisma } from './index.js';

/** A Prisma client of either provider, or one of its interactive-transaction clients. */
export interface RawQueryClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

const textFor = (weft: WeftPrisma, text: string) =>
  weft.provider === 'postgres' ? postgresText(text) : text;

export const rawQuery = (
  weft: WeftPrisma,
  text: string,
  values: readonly unknown[] = [],
): Promise<Array<Record<string, unknown>>> => {
  if (weft.provider === 'sqlite') {
    const reader = weft.reader;
    if (reader !== undefined) {
      try {
        const rows = reader.all(text, values);
        if (rows !== undefined) return Promise.resolve(rows);
      } catch (error) {
        return Promise.reject(error);
      }
    }
  } else if (weft.reader !== undefined) {
    const rows = weft.reader.all(textFor(weft, text), values);
    if (rows !== undefined) return rows;
  }
  return (weft.prisma as unknown as RawQueryClient).$queryRawUnsafe(textFor(weft, text), ...values);
};

export const rawExecute = (
  weft: WeftPrisma,
  text: string,
  values: readonly unknown[] = [],
): Promise<number> =>
  (weft.prisma as unknown as RawQueryClient).$executeRawUnsafe(textFor(weft, text), ...values);
