import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createPostgresIntrospectionFactory,
  createSqliteIntrospectionFactory,
  diff,
  type Provider,
} from '../../scripts/lib/schema-engine.js';
import {
  BEYOND_SCHEMA,
  diffFromMigrations,
  EMPTY_DIFF,
  EXTERNAL_TABLES,
} from '../../scripts/lib/schema-engine-migrations.js';
import {
  loadMigrations,
  MIGRATIONS_TABLE,
  MigrationError,
  migrate,
  migrationsDir,
  PRISMA_DIR,
} from '../../src/store/migrate/index.js';
import { createPostgresPrisma, createSqlitePrisma } from '../../src/store/prisma/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';

const CHILD = join(import.meta.dirname, 'migrate-child.ts');
const schemaPath = (provider: Provider) => join(PRISMA_DIR, provider, 'schema.prisma');
/**
 * What the schema engine finds on a migrated database beyond the schema, exactly: on Postgres the
 * GIN index of migration 0010, which a Prisma schema shared with SQLite cannot declare.
 */
const POSTGRES_BEYOND_SCHEMA = BEYOND_SCHEMA.postgres.join('\n');

const tmpRoot = mkdtempSync(join(tmpdir(), 'weft-migrate-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
let counter = 0;
const freshSqlitePath = () => join(tmpRoot, `db-${++counter}`, 'weft.db');

/**
 * Migrates `url` from two OS processes released together (each prints `ready`, then waits for a
 * go file); returns what each applied.
 */
async function migrateConcurrently(url: string): Promise<string[][]> {
  const goFile = join(tmpRoot, `go-${++counter}`);
  const children = [0, 1].map(() => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, url, goFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const ready = new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.startsWith('ready\n')) resolve();
      });
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<string[]>((resolve, reject) => {
      child.on('close', (code) => {
        if (code !== 0) reject(new Error(`migrate-child exited with ${code}: ${stderr}`));
        else resolve((JSON.parse(stdout.split('\n')[1]!) as { applied: string[] }).applied);
      });
    });
    return { ready, exited };
  });
  await Promise.race([
    Promise.all(children.map((c) => c.ready)),
    Promise.all(children.map((c) => c.exited)),
  ]);
  writeFileSync(goFile, '');
  return Promise.all(children.map((c) => c.exited));
}

function expectEachMigrationOnce(rows: Array<{ name: string }>, provider: Provider): void {
  const shipped = loadMigrations(migrationsDir(provider)).map((m) => m.name);
  expect(rows.map((r) => r.name)).toEqual(shipped);
}

function sampleThread(id: string) {
  const at = new Date('2026-01-02T03:04:05.678Z');
  return {
    id,
    createdAt: at,
    updatedAt: at,
    metadata: '{"b":1,"a":2}',
    nodeTypes: '[]',
    stateHash: 'h0',
  };
}

describe('prisma schema files', () => {
  /** Blanks the two lines allowed to differ; returns them for inspection. */
  function normalise(provider: Provider) {
    const text = readFileSync(schemaPath(provider), 'utf8');
    const output = /^\s*output\s*=.*$/m.exec(text)?.[0];
    const datasource = /^\s*provider\s*=\s*"(sqlite|postgresql)"\s*$/m.exec(text)?.[0];
    const rest = text.replace(output ?? '\0', '<output>').replace(datasource ?? '\0', '<provider>');
    return { rest, output, datasource };
  }

  it('are identical except the datasource provider and the generator output', () => {
    const sqlite = normalise('sqlite');
    const postgres = normalise('postgres');
    expect(sqlite.output).toMatch(/"\.\.\/\.\.\/src\/generated\/prisma-sqlite"/);
    expect(postgres.output).toMatch(/"\.\.\/\.\.\/src\/generated\/prisma-postgres"/);
    expect(sqlite.datasource).toMatch(/"sqlite"/);
    expect(postgres.datasource).toMatch(/"postgresql"/);
    expect(postgres.rest).toBe(sqlite.rest);
  });

  it('never store JSON as Json/jsonb (canonical JSON is text)', () => {
    const text = readFileSync(schemaPath('sqlite'), 'utf8');
    expect(text).not.toMatch(/^\s*\w+\s+Json\b|@db\.JsonB/m);
  });

  it('ship the same migrations for both providers', () => {
    const names = (p: Provider) => loadMigrations(migrationsDir(p)).map((m) => m.name);
    expect(names('sqlite').length).toBeGreaterThan(0);
    expect(names('postgres')).toEqual(names('sqlite'));
  });
});

/**
 * The migrations directory is the only record of the schema a database gets: applied from
 * scratch by the runner (a SQLite file; PGlite for Postgres, so this runs without a server) it
 * must build exactly the Prisma schema, or a migration is missing.
 */
describe('the migrations directory', () => {
  it.each(['sqlite', 'postgres'] as const)('builds exactly the Prisma schema on %s', async (p) => {
    const drift = await diffFromMigrations(p);
    expect(drift.sql).toBe(EMPTY_DIFF);
    expect(drift.empty).toBe(true);
  });

  it.each(['sqlite', 'postgres'] as const)(
    'on %s, misses a schema column no migration adds',
    async (provider) => {
      const prismaDir = join(tmpRoot, `prisma-${++counter}`);
      cpSync(PRISMA_DIR, prismaDir, { recursive: true });
      const schemaFile = join(prismaDir, provider, 'schema.prisma');
      const schema = readFileSync(schemaFile, 'utf8');
      const withColumn = schema.replace(
        /^(model ApiKey \{\n)/m,
        '$1  probeColumn Int? @map("probe_column")\n',
      );
      expect(withColumn).not.toBe(schema);
      writeFileSync(schemaFile, withColumn);
      const drift = await diffFromMigrations(provider, { prismaDir });
      expect(drift.empty).toBe(false);
      expect(drift.sql).toMatch(/ALTER TABLE "api_key" ADD COLUMN\s+"probe_column" INTEGER;/);
    },
  );
});

describe('migrate on SQLite', () => {
  it('creates the file and its directory, and the result matches the Prisma schema', async () => {
    const path = freshSqlitePath();
    const result = await migrate(`file:${path}`);
    expect(existsSync(path)).toBe(true);
    expect(result.target).toEqual({ provider: 'sqlite', path });
    expect(result.applied).toEqual(result.known);

    const drift = await diff({
      from: { kind: 'database', schemaPath: schemaPath('sqlite') },
      to: { kind: 'schema', path: schemaPath('sqlite') },
      adapterFactory: createSqliteIntrospectionFactory(path),
      externalTables: EXTERNAL_TABLES.sqlite,
    });
    expect(drift.sql).toBe(EMPTY_DIFF);
    expect(drift.empty).toBe(true);

    const db = new Database(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('detects drift: the schema check fails when the database differs', async () => {
    const path = freshSqlitePath();
    await migrate(`file:${path}`);
    const db = new Database(path);
    db.exec('DROP INDEX "run_status_idx"');
    db.close();
    const drift = await diff({
      from: { kind: 'database', schemaPath: schemaPath('sqlite') },
      to: { kind: 'schema', path: schemaPath('sqlite') },
      adapterFactory: createSqliteIntrospectionFactory(path),
      externalTables: EXTERNAL_TABLES.sqlite,
    });
    expect(drift.empty).toBe(false);
    expect(drift.sql).toContain('CREATE INDEX "run_status_idx"');
  });

  it('a second run is a no-op', async () => {
    const path = freshSqlitePath();
    await migrate(`file:${path}`);
    const read = () => {
      const db = new Database(path, { readonly: true });
      const rows = db.prepare(`SELECT * FROM "${MIGRATIONS_TABLE}" ORDER BY name`).all();
      db.close();
      return rows;
    };
    const before = read();
    const logs: string[] = [];
    const again = await migrate(`file:${path}`, { log: (m) => logs.push(m) });
    expect(again.applied).toEqual([]);
    expect(logs).toEqual(['database is up to date']);
    expect(read()).toEqual(before);
  });

  it('resolves file:./relative URLs against the working directory', async () => {
    const cwd = join(tmpRoot, `cwd-${++counter}`);
    const result = await migrate('file:./data/weft.db', { cwd });
    expect(result.target).toEqual({ provider: 'sqlite', path: join(cwd, 'data', 'weft.db') });
    expect(existsSync(join(cwd, 'data', 'weft.db'))).toBe(true);
  });

  it('two processes migrating one fresh file at once both succeed, each migration once', async () => {
    const path = freshSqlitePath();
    const applied = await migrateConcurrently(`file:${path}`);
    expect(applied.flat().sort()).toEqual(
      loadMigrations(migrationsDir('sqlite')).map((m) => m.name),
    );
    const db = new Database(path, { readonly: true });
    const rows = db.prepare(`SELECT name FROM "${MIGRATIONS_TABLE}" ORDER BY name`).all();
    db.close();
    expectEachMigrationOnce(rows as Array<{ name: string }>, 'sqlite');
  });

  describe('with a modified migrations directory', () => {
    let prismaDir: string;
    beforeEach(() => {
      prismaDir = join(tmpRoot, `prisma-${++counter}`);
      cpSync(PRISMA_DIR, prismaDir, { recursive: true });
    });

    it('rejects an applied migration whose file changed', async () => {
      const path = freshSqlitePath();
      await migrate(`file:${path}`, { prismaDir });
      const first = loadMigrations(migrationsDir('sqlite', prismaDir))[0]!;
      const file = join(migrationsDir('sqlite', prismaDir), first.name, 'migration.sql');
      writeFileSync(file, `${readFileSync(file, 'utf8')}\n-- edited\n`);
      const error = await migrate(`file:${path}`, { prismaDir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect(error).toMatchObject({ code: 'MIGRATION_CHECKSUM_MISMATCH', migration: first.name });
      expect((error as Error).message).toMatch(/changed after it was applied/);
    });

    it('accepts a CRLF checkout of an applied migration', async () => {
      const path = freshSqlitePath();
      await migrate(`file:${path}`, { prismaDir });
      const first = loadMigrations(migrationsDir('sqlite', prismaDir))[0]!;
      const file = join(migrationsDir('sqlite', prismaDir), first.name, 'migration.sql');
      writeFileSync(file, readFileSync(file, 'utf8').replace(/\n/g, '\r\n'));
      await expect(migrate(`file:${path}`, { prismaDir })).resolves.toMatchObject({ applied: [] });
    });

    it('rejects a database that applied a migration this build does not ship', async () => {
      const path = freshSqlitePath();
      await migrate(`file:${path}`, { prismaDir });
      const db = new Database(path);
      db.prepare(`INSERT INTO "${MIGRATIONS_TABLE}" VALUES ('9999_future', 'x', 'now')`).run();
      db.close();
      await expect(migrate(`file:${path}`, { prismaDir })).rejects.toMatchObject({
        code: 'MIGRATION_UNKNOWN',
        migration: '9999_future',
      });
    });

    it('rolls back a failing migration entirely and keeps the earlier ones', async () => {
      const path = freshSqlitePath();
      const dir = join(migrationsDir('sqlite', prismaDir), '9000_broken');
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, 'migration.sql'),
        'CREATE TABLE "half_done" ("id" TEXT);\nINSERT INTO "no_such_table" VALUES (1);\n',
      );
      const error = await migrate(`file:${path}`, { prismaDir }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'MIGRATION_FAILED', migration: '9000_broken' });
      const db = new Database(path, { readonly: true });
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'half_done'")
        .all();
      const rows = db.prepare(`SELECT name FROM "${MIGRATIONS_TABLE}"`).all();
      db.close();
      expect(tables).toEqual([]);
      expect(rows).toEqual(loadMigrations(migrationsDir('sqlite')).map((m) => ({ name: m.name })));
    });
  });

  it('a Prisma client from the factory creates and reads a Thread, with the pragmas set', async () => {
    const path = freshSqlitePath();
    await migrate(`file:${path}`);
    const prisma = createSqlitePrisma(path);
    try {
      await prisma.thread.create({ data: sampleThread('t1') });
      const thread = await prisma.thread.findUniqueOrThrow({ where: { id: 't1' } });
      expect(thread).toMatchObject({ ...sampleThread('t1'), tenantId: 'default', logLength: 0 });
      const pragma = async (name: string) =>
        Object.values(
          (await prisma.$queryRawUnsafe<Record<string, unknown>[]>(`PRAGMA ${name}`))[0]!,
        )[0];
      expect(await pragma('journal_mode')).toBe('wal');
      expect(Number(await pragma('synchronous'))).toBe(2); // FULL
      expect(Number(await pragma('busy_timeout'))).toBe(5000);
      expect(Number(await pragma('foreign_keys'))).toBe(1);
    } finally {
      await prisma.$disconnect();
    }
  });
});

describeWithPostgres('migrate', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  async function appliedRows(url: string): Promise<Array<{ name: string; checksum: string }>> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT name, checksum, applied_at FROM "${MIGRATIONS_TABLE}" ORDER BY name`,
      );
      return rows;
    } finally {
      await client.end();
    }
  }

  it('a fresh database migrated by the runner matches the Prisma schema', async () => {
    const result = await migrate(database.url);
    expect(result.target).toEqual({ provider: 'postgres', url: database.url });
    expect(result.applied).toEqual(result.known);
    const factory = createPostgresIntrospectionFactory(database.url);
    try {
      const drift = await diff({
        from: { kind: 'database', schemaPath: schemaPath('postgres') },
        to: { kind: 'schema', path: schemaPath('postgres') },
        adapterFactory: factory,
        externalTables: EXTERNAL_TABLES.postgres,
      });
      expect(drift.sql).toBe(POSTGRES_BEYOND_SCHEMA);
    } finally {
      await factory.close();
    }
  });

  it('detects drift: the schema check fails when the database differs', async () => {
    await migrate(database.url);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query('ALTER TABLE "node" ADD COLUMN "extra" INTEGER');
    await client.end();
    const factory = createPostgresIntrospectionFactory(database.url);
    try {
      const drift = await diff({
        from: { kind: 'database', schemaPath: schemaPath('postgres') },
        to: { kind: 'schema', path: schemaPath('postgres') },
        adapterFactory: factory,
        externalTables: EXTERNAL_TABLES.postgres,
      });
      expect(drift.sql).toContain('DROP COLUMN "extra"');
    } finally {
      await factory.close();
    }
  });

  it('a second run is a no-op', async () => {
    await migrate(database.url);
    const before = await appliedRows(database.url);
    const again = await migrate(database.url);
    expect(again.applied).toEqual([]);
    expect(await appliedRows(database.url)).toEqual(before);
  });

  it('two processes migrating one fresh database at once both succeed, each migration once', async () => {
    const applied = await migrateConcurrently(database.url);
    expect(applied.flat().sort()).toEqual(
      loadMigrations(migrationsDir('postgres')).map((m) => m.name),
    );
    expectEachMigrationOnce(await appliedRows(database.url), 'postgres');
  });

  it('a Prisma client from the factory creates and reads a Thread', async () => {
    await migrate(database.url);
    const prisma = createPostgresPrisma(database.url);
    try {
      await prisma.thread.create({ data: sampleThread('t1') });
      const thread = await prisma.thread.findUniqueOrThrow({ where: { id: 't1' } });
      expect(thread).toMatchObject({ ...sampleThread('t1'), tenantId: 'default', logLength: 0 });
    } finally {
      await prisma.$disconnect();
    }
  });
});
