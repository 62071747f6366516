/**
 * Prisma's schema engine, offline: `@prisma/schema-engine-wasm` driven by a driver adapter.
 *
 * Dev tooling only (migration generation and the schema-drift tests); the server never loads it.
 * Every Prisma CLI command that needs an engine tries to download a native binary, which cannot
 * work offline, so we instantiate the WASM build ourselves. Its package targets
 * bundlers (`import * as wasm from "./x.wasm"`), hence the manual `WebAssembly.instantiate` with
 * `schema_engine_bg.js` as the import object.
 *
 * The engine reaches a database only through an adapter factory, one per live database:
 * - `createSqliteIntrospectionFactory(path)`: a SQLite file.
 * - `createPostgresIntrospectionFactory(url)`: a Postgres database (a server, or the PGlite
 *   scratch database of schema-engine-migrations.ts). @prisma/adapter-pg rejects pg_catalog's
 *   `"char"` columns (OID 18) that the engine's introspection selects, so the pool reports them
 *   as `text` (their text-format values are already plain strings).
 * The engine's own `migrations` diff source is not used: it replays migrations in a shadow
 * database through the adapter's script support, while schema-engine-migrations.ts applies them
 * with Weft's runner, as a deployment does.
 */
import { readFile } from 'node:fs/promises';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import type {
  DiffParams,
  DiffTarget,
  SchemaEngine,
} from '@prisma/schema-engine-wasm/schema_engine_bg';
import pg from 'pg';

export type Provider = 'sqlite' | 'postgres';

type EngineModule = typeof import('@prisma/schema-engine-wasm/schema_engine_bg');

/** The slice of the WebAssembly global used here (the project's `lib` has no DOM typings). */
const wasmApi = (
  globalThis as unknown as {
    WebAssembly: {
      instantiate(
        bytes: Uint8Array,
        imports: Record<string, object>,
      ): Promise<{ instance: { exports: Record<string, unknown> } }>;
    };
  }
).WebAssembly;
let engineModule: Promise<EngineModule> | undefined;

function loadEngineModule(): Promise<EngineModule> {
  engineModule ??= (async () => {
    const bgUrl = import.meta.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const bg: EngineModule = await import(bgUrl);
    const bytes = await readFile(new URL('schema_engine_bg.wasm', bgUrl));
    const { instance } = await wasmApi.instantiate(bytes, { './schema_engine_bg.js': bg });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return bg;
  })();
  return engineModule;
}

export function createSqliteIntrospectionFactory(
  path: string,
): SqlMigrationAwareDriverAdapterFactory {
  const factory = new PrismaBetterSqlite3({ url: path });
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = await connect();
    const queryRaw = adapter.queryRaw.bind(adapter);
    adapter.queryRaw = (query) => queryRaw({ ...query, sql: singleQuotedIndexName(query.sql) });
    return adapter;
  };
  return factory;
}

/**
 * The engine (7.10) reads a partial index's definition with `… AND name = "<index>"`: a string
 * in double quotes, which better-sqlite3's SQLite (built without double-quoted string literals)
 * refuses. This one query gets the name in single quotes.
 */
function singleQuotedIndexName(sql: string): string {
  const match =
    /^(SELECT sql FROM sqlite_master WHERE type = 'index' AND name = )"([^"]*)"(;?)$/.exec(sql);
  return match === null ? sql : `${match[1]}'${match[2]!.replace(/'/g, "''")}'${match[3]}`;
}

/** pg pool whose results report pg_catalog `"char"` columns as `text` (see file comment). */
class CharAsTextPool extends pg.Pool {
  // biome-ignore lint/suspicious/noExplicitAny: pg.Pool.query is heavily overloaded
  override query(...args: any[]): any {
    // biome-ignore lint/suspicious/noExplicitAny: forwarding the overloads unchanged
    const result = (super.query as (...a: any[]) => any)(...args);
    if (result === undefined || typeof result.then !== 'function') return result;
    return result.then((res: pg.QueryResult) => {
      for (const field of res.fields ?? []) {
        if (field.dataTypeID === 18) field.dataTypeID = 25;
      }
      return res;
    });
  }
}

export function createPostgresIntrospectionFactory(
  url: string,
): SqlMigrationAwareDriverAdapterFactory & { close(): Promise<void> } {
  const pool = new CharAsTextPool({ connectionString: url, max: 2 });
  const factory = new PrismaPg(pool);
  return Object.assign(factory, { close: () => pool.end() });
}

/** A source for `diff`, as plain data. */
export type DiffSource =
  | { kind: 'schema'; path: string; content?: string }
  /** The live database behind the engine's adapter factory. */
  | { kind: 'database'; schemaPath: string };

export interface DiffResult {
  /** Executable SQL (Prisma prints `-- This is an empty migration.` when there is nothing). */
  sql: string;
  /** True when the two sources describe the same schema. */
  empty: boolean;
}

export interface DiffOptions {
  from: DiffSource;
  to: DiffSource;
  /** The database behind a `database` source (the engine connects even for schema files). */
  adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  /** Tables the diff ignores (e.g. `_weft_migrations`). */
  externalTables?: string[];
}

async function readSchema(path: string, content?: string) {
  return { path, content: content ?? (await readFile(path, 'utf8')) };
}

async function toTarget(source: DiffSource): Promise<DiffTarget> {
  switch (source.kind) {
    case 'schema':
      return { tag: 'schemaDatamodel', files: [await readSchema(source.path, source.content)] };
    case 'database':
      return {
        tag: 'schemaDatasource',
        files: [await readSchema(source.schemaPath)],
        configDir: process.cwd(),
      };
  }
}

/** Runs the schema engine's `diff` and returns the SQL that turns `from` into `to`. */
export async function diff(options: DiffOptions): Promise<DiffResult> {
  const schemaPath = [options.from, options.to].flatMap((s) =>
    s.kind === 'schema' ? [s.path] : s.kind === 'database' ? [s.schemaPath] : [],
  )[0];
  if (schemaPath === undefined) throw new Error('diff needs at least one schema file');
  const schema = await readSchema(schemaPath);
  const factory = options.adapterFactory;
  const bg = await loadEngineModule();
  const logs: string[] = [];
  const engine: SchemaEngine = await bg.SchemaEngine.new(
    { datamodels: [[schema.path, schema.content]] },
    (log: string) => logs.push(log),
    bindMigrationAwareSqlAdapterFactory(factory),
  );
  try {
    const params: DiffParams = {
      from: await toTarget(options.from),
      to: await toTarget(options.to),
      script: true,
      exitCode: true,
      filters: { externalTables: options.externalTables ?? [], externalEnums: [] },
    };
    const result = await engine.diff(params);
    return { sql: result.stdout ?? '', empty: result.exitCode === 0 };
  } finally {
    engine.free();
  }
}
