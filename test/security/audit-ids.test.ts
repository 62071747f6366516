/**
 * Review item 7: an audit entry's id named the storage key of the deleted thread
 * (`thread_deleted:<id>` U+001F `<tenant>:<created>`), and `auditEntries` shows ids and puts them
 * in its cursors. New entries are named by a digest of the key; migration 0018 renames the
 * entries written before, on SQLite and Postgres, leaving every other column as it was.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/index.js';
import { migrate, migrationsDir, PRISMA_DIR } from '../../src/store/migrate/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { createTestDatabase, describeWithPostgres } from '../support/services.js';

const root = mkdtempSync(join(tmpdir(), 'weft-audit-ids-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const BEFORE = '0017_thread_keys';
const DIGEST = /^thread_deleted:[0-9a-f]{32}$/;

/** A copy of prisma/ with the migrations after `last` removed. */
function migrationsUpTo(last: string): string {
  const dir = join(root, `prisma-${Math.random().toString(36).slice(2)}`);
  cpSync(PRISMA_DIR, dir, { recursive: true });
  for (const provider of ['sqlite', 'postgres'] as const) {
    const migrations = migrationsDir(provider, dir);
    for (const name of readdirSync(migrations)) {
      if (name > last) rmSync(join(migrations, name), { recursive: true, force: true });
    }
  }
  return dir;
}

type Row = Record<string, unknown>;
type Sql = (text: string, values?: unknown[]) => Promise<Row[]>;

const AUDIT = 'SELECT * FROM "audit_entry" ORDER BY "tenant_id", "thread_id"';

/**
 * The audit entries the old code wrote for deleting `t1` of acme and of the default tenant: acme's
 * `t1` is stored as `t1` U+001F `acme` (the default tenant's as `t1`), and the ids held that key.
 * Written as rows, not through the engine, whose writes follow today's schema, not 0017's.
 */
async function deleteWithOldIds(sql: Sql): Promise<void> {
  const old = { acme: 'thread_deleted:t1\u001facme:2026', default: 'thread_deleted:t1:2026' };
  for (const [tenant, id] of Object.entries(old)) {
    await sql(
      `INSERT INTO "audit_entry" ("id", "tenant_id", "recorded_at", "actor", "action",
        "thread_id", "log_length", "state_hash") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        id,
        tenant,
        '2026-01-01T00:00:00.000Z',
        'system',
        'thread_deleted',
        't1',
        1,
        'ab'.repeat(32),
      ],
    );
  }
}

/** The old rows of `url` get opaque ids, distinct, and keep every other column. */
async function expectRenamed(url: string, sql: Sql): Promise<void> {
  await migrate(url, { prismaDir: migrationsUpTo(BEFORE) });
  await deleteWithOldIds(sql);
  const before = await sql(AUDIT);
  expect(before.map((r) => r.id)).toEqual([
    'thread_deleted:t1\u001facme:2026',
    'thread_deleted:t1:2026',
  ]);
  expect((await migrate(url)).applied[0]).toBe('0018_audit_entry_ids');
  const after = await sql(AUDIT);
  expect(after.map((r) => r.id)).toEqual([
    expect.stringMatching(DIGEST),
    expect.stringMatching(DIGEST),
  ]);
  expect(new Set(after.map((r) => r.id)).size).toBe(2);
  expect(after.map(({ id: _, ...rest }) => rest)).toEqual(before.map(({ id: _, ...rest }) => rest));
  // A deletion after the upgrade writes a digest too.
  const engine = createEngine({ store: openThreadStore(url) });
  try {
    const acme = engine.forTenant('acme');
    expect((await acme.createThread({ threadId: 't2' })).ok).toBe(true);
    expect((await acme.deleteThread({ threadId: 't2' })).ok).toBe(true);
  } finally {
    await engine.close();
  }
  const ids = (await sql(AUDIT)).map((r) => String(r.id));
  expect(ids).toHaveLength(3);
  for (const id of ids) expect(id).toMatch(DIGEST);
}

describe('audit entry ids [sqlite]', () => {
  it('name no storage key, old rows renamed by the migration', async () => {
    const path = join(root, 'audit.db');
    const sql: Sql = async (text, values = []) => {
      const db = new Database(path);
      try {
        const statement = db.prepare(text.replace(/\$\d+/g, '?'));
        if (statement.reader) return statement.all(...values) as Row[];
        statement.run(...values);
        return [];
      } finally {
        db.close();
      }
    };
    await expectRenamed(`file:${path}`, sql);
  });
});

describeWithPostgres('audit entry ids', () => {
  it('name no storage key, old rows renamed by the migration', async () => {
    const db = await createTestDatabase();
    const sql: Sql = async (text, values = []) => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        return (await client.query(text, values)).rows as Row[];
      } finally {
        await client.end();
      }
    };
    try {
      await expectRenamed(db.url, sql);
    } finally {
      await db.drop();
    }
  });
});
