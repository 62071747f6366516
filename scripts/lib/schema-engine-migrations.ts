/**
 * The database the migrations directory builds, compared with the Prisma schema: the one source
 * of "what the migrations produce" for migration generation (scripts/prisma-migration.ts) and
 * the schema tests (test/store/migrate.test.ts). Dev tooling only, like schema-engine.ts.
 *
 * `diffFromMigrations(provider)` applies `prisma/<provider>/migrations` with Weft's own runner
 * (`migrate()`, exactly what a deployment runs) to a scratch database, introspects it with the
 * schema engine and diffs it to `prisma/<provider>/schema.prisma`. Both scratch databases are
 * offline and in-process:
 * - SQLite: a file in a temporary directory (the runner wants a path; WAL needs a real file).
 * - Postgres: PGlite (Postgres compiled to WASM) served on a loopback port by pglite-socket, so
 *   the runner and the engine reach it through `pg` like any server. No Postgres install, no
 *   shadow database URL.
 *
 * Migrations hold a few objects a Prisma schema shared by both providers cannot declare
 * (migration 0010's search index). The engine's filters can leave out whole tables but not an
 * index, so the statements that would drop those objects are listed in BEYOND_SCHEMA and removed
 * from the drift; anything else the engine reports is drift.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { MIGRATIONS_TABLE, migrate, PRISMA_DIR } from '../../src/store/migrate/index.js';
import { NODE_TEXT_GIN_INDEX, nodeSearch } from '../../src/store/tables/index.js';
import {
  createPostgresIntrospectionFactory,
  createSqliteIntrospectionFactory,
  type DiffResult,
  diff,
  type Provider,
} from './schema-engine.js';

/** What the engine prints for "no difference". */
export const EMPTY_DIFF = '-- This is an empty migration.\n';

/**
 * Tables the schema checks leave out: the runner's own ledger (Postgres wants it
 * schema-qualified) and SQLite's FTS5 search table with its shadow tables (migrations 0010 and
 * 0020), those of earlier migrations' index too (a scratch database may be at any migration).
 */
export const EXTERNAL_TABLES: Record<Provider, string[]> = {
  sqlite: [
    MIGRATIONS_TABLE,
    nodeSearch.name,
    ...nodeSearch.shadowTables,
    ...nodeSearch.formerShadowTables,
  ],
  postgres: [`public.${MIGRATIONS_TABLE}`],
};

/**
 * The engine's steps that would remove what migrations create beyond the schema: on Postgres the
 * GIN index of migration 0010 (the schema's `tsv` column is `Unsupported`, so it cannot carry
 * the index). Exactly these, each once, are what a migrated database shows beyond the schema.
 */
export const BEYOND_SCHEMA: Record<Provider, string[]> = {
  sqlite: [],
  postgres: [`-- DropIndex\nDROP INDEX "${NODE_TEXT_GIN_INDEX}";\n`],
};

export const schemaPathOf = (provider: Provider, prismaDir: string = PRISMA_DIR): string =>
  join(prismaDir, provider, 'schema.prisma');

/**
 * The SQL that turns the database behind `adapterFactory` into the schema, without the
 * BEYOND_SCHEMA steps. `empty` is true when nothing else is left.
 */
export async function schemaDrift(
  provider: Provider,
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  schemaPath: string = schemaPathOf(provider),
): Promise<DiffResult> {
  const result = await diff({
    from: { kind: 'database', schemaPath },
    to: { kind: 'schema', path: schemaPath },
    adapterFactory,
    externalTables: EXTERNAL_TABLES[provider],
  });
  if (result.empty) return result;
  let sql = result.sql;
  for (const step of BEYOND_SCHEMA[provider]) {
    const at = sql.indexOf(step);
    if (at >= 0) sql = sql.slice(0, at) + sql.slice(at + step.length);
  }
  // Steps are separated by a blank line; removing some leaves extra ones.
  sql = sql.replace(/\n{3,}/g, '\n\n').trim();
  return sql === '' ? { sql: EMPTY_DIFF, empty: true } : { sql: `${sql}\n`, empty: false };
}

/** An empty, offline database of `provider` and an engine adapter factory for it. */
export interface ScratchDatabase {
  /** A URL `migrate()` accepts. */
  url: string;
  /** A fresh factory for the engine (each `diff` disposes what it connects). */
  adapterFactory(): SqlMigrationAwareDriverAdapterFactory & { close?(): Promise<void> };
  close(): Promise<void>;
}

export async function createScratchDatabase(provider: Provider): Promise<ScratchDatabase> {
  if (provider === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'weft-scratch-'));
    const path = join(dir, 'scratch.db');
    return {
      url: `file:${path}`,
      adapterFactory: () => createSqliteIntrospectionFactory(path),
      close: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const db = await PGlite.create();
  // The runner holds one connection and the engine's pool up to two; the server multiplexes them
  // over PGlite's single session.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
  try {
    await server.start();
  } catch (error) {
    await db.close();
    throw error;
  }
  // `host:port`, the port the OS chose.
  const url = `postgres://postgres@${server.getServerConn()}/postgres?sslmode=disable`;
  return {
    url,
    adapterFactory: () => createPostgresIntrospectionFactory(url),
    close: async () => {
      await server.stop();
      await db.close();
    },
  };
}

export interface DiffFromMigrationsOptions {
  /** The `prisma/` directory holding `<provider>/migrations` and the schema (default: the repo's). */
  prismaDir?: string;
}

/**
 * The SQL that turns a database migrated from scratch with the migrations directory into the
 * schema (`empty`: the migrations build exactly the schema). What the next migration must do.
 */
export async function diffFromMigrations(
  provider: Provider,
  options: DiffFromMigrationsOptions = {},
): Promise<DiffResult> {
  const scratch = await createScratchDatabase(provider);
  try {
    await migrate(
      scratch.url,
      options.prismaDir === undefined ? {} : { prismaDir: options.prismaDir },
    );
    const factory = scratch.adapterFactory();
    try {
      return await schemaDrift(provider, factory, schemaPathOf(provider, options.prismaDir));
    } finally {
      await factory.close?.();
    }
  } finally {
    await scratch.close();
  }
}
