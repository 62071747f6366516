/**
 * The query layers the bench compares, opened on one bench database:
 * - Kysely on its own driver (better-sqlite3 / a `pg` pool), with the table types prisma-kysely
 *   generated from the Prisma schema (generated/kysely-<provider>.ts);
 * - Kysely as a compiler only (no connection): its SQL and parameters handed to today's runner
 *   (writes) or reader (reads);
 * - Kysely through Prisma's connection (prisma-extension-kysely), inside `$transaction`;
 * - Prisma TypedSQL (`$queryRawTyped`) on a client generated with the `typedSql` preview feature
 *   (see generate.mjs), its query factories declared here as `prisma generate --sql` writes
 *   them (that command needs the native schema engine, which cannot be downloaded offline);
 * - the Prisma ORM itself, for reads.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import { makeTypedQueryFactory, type TypedSql } from '@prisma/client/runtime/client';
import Database from 'better-sqlite3';
import {
  type Driver,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteDialect,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import pg from 'pg';
import kyselyExtension from 'prisma-extension-kysely';
import type { PrismaClient as SqlitePrismaClient } from '../../src/generated/prisma-sqlite/client.js';
import {
  SQLITE_BUSY_TIMEOUT_MS,
  SQLITE_PRAGMA_SCRIPT,
  SQLITE_PRAGMAS,
} from '../../src/store/prisma/index.js';
import type { Provider } from '../../src/store/tables/index.js';
import type { DB as PostgresDB } from './generated/kysely-postgres.js';
import type { DB as SqliteDB } from './generated/kysely-sqlite.js';

export type { PostgresDB, SqliteDB };

/** Kysely over either provider's generated types (the bench picks per provider at run time). */
export type AnyKysely = Kysely<SqliteDB> | Kysely<PostgresDB>;

const dialectParts = (provider: Provider) =>
  provider === 'sqlite'
    ? {
        createAdapter: () => new SqliteAdapter(),
        createIntrospector: (db: Kysely<unknown>) => new SqliteIntrospector(db),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      }
    : {
        createAdapter: () => new PostgresAdapter(),
        createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      };

/** Kysely on `driver` with `provider`'s SQL dialect. */
const kyselyOn = <DB>(provider: Provider, driver: Driver) =>
  new Kysely<DB>({ dialect: { ...dialectParts(provider), createDriver: () => driver } });

/** Compiles only: `.compile()` gives SQL text and parameters; executing fails. */
export const compilerFor = <DB>(provider: Provider) => kyselyOn<DB>(provider, new DummyDriver());

/** Kysely on its own connection to the bench database (one for SQLite, a pool of 2 for pg). */
export function kyselyDriver<DB>(provider: Provider, target: string): Kysely<DB> {
  if (provider === 'sqlite') {
    const database = new Database(target);
    for (const pragma of SQLITE_PRAGMAS) database.pragma(pragma);
    return new Kysely<DB>({ dialect: new SqliteDialect({ database }) });
  }
  return new Kysely<DB>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: target, max: 2 }) }),
  });
}

/** What the bench uses of a Prisma client: transactions, raw and typed queries, the ORM. */
export type BenchPrisma = SqlitePrismaClient & {
  $queryRawTyped<T>(query: TypedSql<unknown[], T>): Promise<T[]>;
};

/** Weft's SQLite pragmas on each connection, as src/store/prisma/sqlite.ts applies them. */
class PragmaSqliteAdapterFactory extends PrismaBetterSqlite3 {
  override async connect() {
    const adapter = await super.connect();
    await adapter.executeScript(SQLITE_PRAGMA_SCRIPT);
    return adapter;
  }
}

/**
 * A client of the bench's typedSql generation (generate.mjs) on the bench database. Its models
 * are those of the project's client (one schema); only the preview feature differs.
 */
export async function typedSqlPrisma(provider: Provider, target: string): Promise<BenchPrisma> {
  const file = join(import.meta.dirname, '.generated', `prisma-${provider}`, 'client.ts');
  const generated = (await import(pathToFileURL(file).href)) as {
    PrismaClient: new (options: { adapter: unknown }) => BenchPrisma;
  };
  const adapter =
    provider === 'sqlite'
      ? new PragmaSqliteAdapterFactory({ url: target, timeout: SQLITE_BUSY_TIMEOUT_MS })
      : new PrismaPg({ connectionString: target });
  return new generated.PrismaClient({ adapter });
}

/** Kysely through a Prisma client's connection and transactions (prisma-extension-kysely). */
export function prismaKysely<DB>(provider: Provider, prisma: BenchPrisma) {
  return prisma.$extends(
    kyselyExtension({ kysely: (driver) => kyselyOn<DB>(provider, driver) }),
  ) as unknown as PrismaWithKysely<DB>;
}

export interface PrismaWithKysely<DB> {
  $kysely: Kysely<DB>;
  $transaction<T>(work: (tx: { $kysely: Kysely<DB> }) => Promise<T>): Promise<T>;
}

// TypedSQL: one statement per table for a whole append. A TypedSQL file has a fixed parameter
// list, so a variable number of rows goes in as one set-valued parameter: a JSON array of row
// arrays on SQLite (json_each), one array per column on Postgres (unnest).

const NODE_COLUMNS =
  '"thread_id", "id", "sequence", "kind", "payload", "created_at", "resource_key", "log_index", "run_id", "taint", "usage", "is_frontier", "is_current"';
const ENTRY_COLUMNS =
  '"thread_id", "log_index", "entry_id", "type", "recorded_at", "entry", "packed", "verbatim"';
const PARENT_COLUMNS = '"thread_id", "child_seq", "parent_seq", "position"';
const jsonColumns = (n: number) => Array.from({ length: n }, (_, i) => `value ->> ${i}`).join(', ');

/** A row of `node` as the database returns it (no decoding): what a TypedSQL result is typed. */
export interface RawNodeRow {
  thread_id: string;
  id: string;
  sequence: number;
  kind: string;
  payload: string;
  created_at: string | Date;
  resource_key: string | null;
  log_index: number;
  run_id: string | null;
  taint: string | null;
  usage: string | null;
  is_frontier: number | boolean;
  is_current: number | boolean;
}

/** The set-valued inserts of nodes and edges (one parameter per column or one JSON array). */
export const SET_INSERTS = {
  sqlite: {
    nodes: `INSERT INTO "node" (${NODE_COLUMNS}) SELECT ${jsonColumns(13)} FROM json_each(?)`,
    parents: `INSERT INTO "node_parent" (${PARENT_COLUMNS}) SELECT ${jsonColumns(4)} FROM json_each(?)`,
  },
  postgres: {
    nodes: `INSERT INTO "node" (${NODE_COLUMNS}) SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::timestamp(3)[], $7::text[], $8::int[], $9::text[], $10::text[], $11::text[], $12::boolean[], $13::boolean[])`,
    parents: `INSERT INTO "node_parent" (${PARENT_COLUMNS}) SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::int[])`,
  },
};

type Insert<Values extends unknown[]> = (...values: Values) => TypedSql<Values, never>;
type Select<Values extends unknown[]> = (...values: Values) => TypedSql<Values, RawNodeRow>;

export const typedSql = {
  sqlite: {
    insertEntry: makeTypedQueryFactory(
      `INSERT INTO "log_entry" (${ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ) as Insert<[string, number, string, string, string, string, Uint8Array | null, string | null]>,
    insertNodes: makeTypedQueryFactory(SET_INSERTS.sqlite.nodes) as Insert<[string]>,
    insertParents: makeTypedQueryFactory(SET_INSERTS.sqlite.parents) as Insert<[string]>,
    nodePage: makeTypedQueryFactory(
      `SELECT ${NODE_COLUMNS} FROM "node" WHERE "thread_id" = ? AND "sequence" > ? ORDER BY "sequence" LIMIT ?`,
    ) as Select<[string, number, number]>,
    nodeById: makeTypedQueryFactory(
      `SELECT ${NODE_COLUMNS} FROM "node" WHERE "thread_id" = ? AND "id" = ?`,
    ) as Select<[string, string]>,
  },
  postgres: {
    insertEntry: makeTypedQueryFactory(
      `INSERT INTO "log_entry" (${ENTRY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    ) as Insert<[string, number, string, string, Date, string, Uint8Array | null, string | null]>,
    insertNodes: makeTypedQueryFactory(SET_INSERTS.postgres.nodes) as Insert<
      [
        string[],
        string[],
        number[],
        string[],
        string[],
        string[],
        Array<string | null>,
        number[],
        Array<string | null>,
        Array<string | null>,
        Array<string | null>,
        boolean[],
        boolean[],
      ]
    >,
    insertParents: makeTypedQueryFactory(SET_INSERTS.postgres.parents) as Insert<
      [string[], number[], number[], number[]]
    >,
    nodePage: makeTypedQueryFactory(
      `SELECT ${NODE_COLUMNS} FROM "node" WHERE "thread_id" = $1 AND "sequence" > $2 ORDER BY "sequence" LIMIT $3`,
    ) as Select<[string, number, number]>,
    nodeById: makeTypedQueryFactory(
      `SELECT ${NODE_COLUMNS} FROM "node" WHERE "thread_id" = $1 AND "id" = $2`,
    ) as Select<[string, string]>,
  },
};
