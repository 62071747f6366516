/**
 * The hot reads, six ways: a 100-node page of a thread by sequence (keyset: after a sequence),
 * and one node by (thread, id). Every variant returns the store's NodeRow (the raw rows decoded
 * by the table declaration, as today's reads do; the Prisma ORM decodes by itself).
 */
import type { Kysely } from 'kysely';
import type { WeftPrisma } from '../../src/store/prisma/index.js';
import { rawQuery } from '../../src/store/prisma/raw.js';
import { selectRows } from '../../src/store/read-model/select.js';
import { type NodeRow, node, type Provider } from '../../src/store/tables/index.js';
import {
  type BenchPrisma,
  compilerFor,
  type PostgresDB,
  type PrismaWithKysely,
  type SqliteDB,
  typedSql,
} from './clients.js';

export const PAGE = 100;

export interface ReadVariant {
  name: string;
  page(threadId: string, after: number): Promise<NodeRow[]>;
  byId(threadId: string, id: string): Promise<NodeRow | undefined>;
}

const N = node.c;

export function todayReads(weft: WeftPrisma): ReadVariant {
  return {
    name: 'today: select.ts → direct reader',
    page: (threadId, after) =>
      selectRows(
        weft,
        node,
        `${N.threadId} = ? AND ${N.sequence} > ?`,
        [threadId, after, PAGE],
        ` ORDER BY ${N.sequence} LIMIT ?`,
      ),
    byId: async (threadId, id) =>
      (await selectRows(weft, node, `${N.threadId} = ? AND ${N.id} = ?`, [threadId, id]))[0],
  };
}

// The same two queries for either provider's generated types (their `node` tables agree).
const pageQuery = (db: Kysely<SqliteDB>, threadId: string, after: number) =>
  db
    .selectFrom('node')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('sequence', '>', after)
    .orderBy('sequence')
    .limit(PAGE);
const byIdQuery = (db: Kysely<SqliteDB>, threadId: string, id: string) =>
  db.selectFrom('node').selectAll().where('thread_id', '=', threadId).where('id', '=', id);

const decoder = (provider: Provider) => (rows: ReadonlyArray<object>) =>
  rows.map((r) => node.decode(r as Record<string, unknown>, provider));

/** Kysely on its own driver connection. */
export function kyselyDriverReads(
  provider: Provider,
  db: Kysely<SqliteDB> | Kysely<PostgresDB>,
): ReadVariant {
  const k = db as Kysely<SqliteDB>;
  const decode = decoder(provider);
  return {
    name: 'Kysely, own driver',
    page: async (threadId, after) => decode(await pageQuery(k, threadId, after).execute()),
    byId: async (threadId, id) => decode(await byIdQuery(k, threadId, id).execute())[0],
  };
}

/** Kysely compiling, today's reader (better-sqlite3 / pg pool beside Prisma) running. */
export function kyselyCompiledReads(provider: Provider, weft: WeftPrisma): ReadVariant {
  const compiler = compilerFor<SqliteDB>(provider);
  const decode = decoder(provider);
  const run = async (q: { compile(): { sql: string; parameters: readonly unknown[] } }) => {
    const c = q.compile();
    return decode(await rawQuery(weft, c.sql, c.parameters));
  };
  return {
    name: 'Kysely compiled → today’s reader',
    page: (threadId, after) => run(pageQuery(compiler, threadId, after)),
    byId: async (threadId, id) => (await run(byIdQuery(compiler, threadId, id)))[0],
  };
}

/**
 * Kysely compiled once per query shape: the SQL text kept, only the parameters bound per call
 * (in the order the compiled query takes them), run by today's reader.
 */
export function kyselyShapeReads(provider: Provider, weft: WeftPrisma): ReadVariant {
  const compiler = compilerFor<SqliteDB>(provider);
  const decode = decoder(provider);
  const page = pageQuery(compiler, '', 0).compile();
  const one = byIdQuery(compiler, '', '').compile();
  if (page.parameters.length !== 3 || one.parameters.length !== 2) {
    throw new Error('unexpected parameters in the compiled read shapes');
  }
  return {
    name: 'Kysely compiled once per shape → today’s reader',
    page: async (threadId, after) =>
      decode(await rawQuery(weft, page.sql, [threadId, after, PAGE])),
    byId: async (threadId, id) => decode(await rawQuery(weft, one.sql, [threadId, id]))[0],
  };
}

/** Kysely through Prisma's connection (prisma-extension-kysely). */
export function prismaKyselyReads(
  provider: Provider,
  prisma: PrismaWithKysely<SqliteDB> | PrismaWithKysely<PostgresDB>,
): ReadVariant {
  const k = (prisma as PrismaWithKysely<SqliteDB>).$kysely;
  const decode = decoder(provider);
  return {
    name: 'Kysely via Prisma (extension)',
    page: async (threadId, after) => decode(await pageQuery(k, threadId, after).execute()),
    byId: async (threadId, id) => decode(await byIdQuery(k, threadId, id).execute())[0],
  };
}

export function typedSqlReads(provider: Provider, prisma: BenchPrisma): ReadVariant {
  const q = typedSql[provider];
  const decode = decoder(provider);
  return {
    name: 'Prisma TypedSQL',
    page: async (threadId, after) =>
      decode(await prisma.$queryRawTyped(q.nodePage(threadId, after, PAGE))),
    byId: async (threadId, id) => decode(await prisma.$queryRawTyped(q.nodeById(threadId, id)))[0],
  };
}

export function prismaOrmReads(prisma: BenchPrisma): ReadVariant {
  return {
    name: 'Prisma ORM (findMany / findUnique)',
    page: (threadId, after) =>
      prisma.node.findMany({
        where: { threadId, sequence: { gt: after } },
        orderBy: { sequence: 'asc' },
        take: PAGE,
      }),
    byId: async (threadId, id) =>
      (await prisma.node.findUnique({ where: { threadId_id: { threadId, id } } })) ?? undefined,
  };
}
