/**
 * `weft retention` and `weft gc` on both backends: a dry run lists what would go and changes
 * nothing; --apply removes it (expired threads through deleteThread's path, one audit entry each,
 * their forks kept; the storage no thread needs); `--database` names the database instead of
 * DATABASE_URL.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import { rawExecute, rawQuery } from '../../src/store/prisma/raw.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { freshPostgresUrl, freshSqliteUrl } from '../api/support.js';
import { describeWithPostgres } from '../support/services.js';
import { weftIn } from './support.js';

const ROOT = join(import.meta.dirname, '../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const MAIN = join(ROOT, 'src/cli/main.ts');

/** `weft <args>` in a process of its own. */
function weftProcess(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(TSX, [MAIN, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

const TABLES = [
  'thread',
  'log_entry',
  'node',
  'snapshot',
  'run',
  'audit_entry',
  'idempotency_record',
] as const;

async function counts(weft: WeftPrisma) {
  const out: Record<(typeof TABLES)[number], number> = {} as never;
  for (const table of TABLES) {
    const [row] = await rawQuery(weft, `SELECT COUNT(*) AS n FROM "${table}"`);
    out[table] = Number(row?.n ?? 0);
  }
  return out;
}

function must<T>(r: { ok: true; value: T } | { ok: false; error: { code: string } }): T {
  if (!r.ok) throw new Error(r.error.code);
  return r.value;
}

async function grow(engine: Engine, threadId: string, turns: number) {
  for (let i = 0; i < turns; i++) {
    must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'inference', payload: { text: `${threadId} ${i}` } }],
      }),
    );
  }
}

function retentionCli(freshUrl: () => Promise<string>) {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
  });

  /**
   * A database in 2020: `old` expired (with a fork `kept`, no expiry), `acme`'s `old` expired,
   * `later` expiring in 2999, `ancient` without expiry.
   */
  async function sample() {
    const url = await freshUrl();
    const engine = createEngine({
      store: openThreadStore(url),
      clock: createSimulatedClock('2020-01-01T00:00:00.000Z', 1000),
      ids: createSequentialIds('id'),
    });
    const weft = createPrisma(url);
    open.push(engine, { close: () => weft.prisma.$disconnect() });
    must(await engine.createThread({ threadId: 'old', expiresAt: '2021-01-01T00:00:00Z' }));
    await grow(engine, 'old', 4);
    must(await engine.forkThread({ threadId: 'old', upToIndex: 3, newThreadId: 'kept' }));
    must(
      await engine
        .forTenant('acme')
        .createThread({ threadId: 'old', expiresAt: '2022-01-01T00:00:00Z' }),
    );
    must(await engine.createThread({ threadId: 'later', expiresAt: '2999-01-01T00:00:00Z' }));
    must(await engine.createThread({ threadId: 'ancient' }));
    return { url, engine, weft };
  }

  it('weft retention: the dry run lists and changes nothing; --apply deletes, once', async () => {
    const { url, engine, weft } = await sample();
    const before = await counts(weft);
    const dry = await weftIn(['retention', '--database', url], { WEFT_RETENTION_DAYS: '30' });
    expect(dry.err).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('dry run');
    expect(dry.out).toContain('  old: expired 2021-01-01T00:00:00.000Z, 5 entries');
    expect(dry.out).toContain('  old (tenant acme): expired 2022-01-01T00:00:00.000Z, 1 entries');
    expect(dry.out).not.toContain('later');
    expect(dry.out).toContain('2 expired threads would be deleted');
    // `ancient` and `kept` have none and are older than 30 days: reported, not deleted.
    expect(dry.out).toContain(
      '2 threads have no expiresAt and are older than WEFT_RETENTION_DAYS=30',
    );
    expect(await counts(weft)).toEqual(before);
    const one = await weftIn(['retention', '--limit', '1', '--tenant', 'acme'], {
      DATABASE_URL: url,
    });
    expect(one.out).toContain('old (tenant acme)');
    expect(one.out).toContain('1 expired thread would be deleted');

    const applied = await weftIn(['retention', '--apply', '--batch', '1'], { DATABASE_URL: url });
    expect(applied.code).toBe(0);
    expect(applied.out).toMatch(/deleted old \(expired 2021-01-01T00:00:00.000Z, 5 entries/);
    expect(applied.out).toContain('deleted old (tenant acme)');
    expect(applied.out).toContain('deleted 2 expired threads');
    // Progress, batch by batch (of 1).
    expect(applied.err).toContain('weft retention: 1 deleted so far');
    const audit = await rawQuery(
      weft,
      'SELECT "thread_id", "tenant_id", "actor" FROM "audit_entry" ORDER BY "tenant_id"',
    );
    expect(audit).toEqual([
      // Each tenant's trail names the thread by that tenant's id.
      { thread_id: 'old', tenant_id: 'acme', actor: 'retention' },
      { thread_id: 'old', tenant_id: 'default', actor: 'retention' },
    ]);
    // The fork still reads the history it shares with the deleted thread.
    expect(must(await engine.verify('kept', { strict: true })).ok).toBe(true);
    expect((await engine.store.readEntries('kept')).length).toBe(4);
    const again = await weftIn(['retention', '--apply'], { DATABASE_URL: url });
    expect(again.out).toContain('deleted 0 expired threads');
    expect(await rawQuery(weft, 'SELECT "thread_id" FROM "audit_entry"')).toHaveLength(2);
    expect(
      (await weftIn(['retention', '--apply', '--tenant', 'acme'], { DATABASE_URL: url })).code,
    ).toBe(2);
  });

  it('two processes racing weft retention --apply delete each thread once', async () => {
    const url = await freshUrl();
    const engine = createEngine({ store: openThreadStore(url) });
    const weft = createPrisma(url);
    open.push(engine, { close: () => weft.prisma.$disconnect() });
    const n = 40;
    for (let i = 0; i < n; i++) {
      must(await engine.createThread({ threadId: `t${i}`, expiresAt: '2001-01-01T00:00:00Z' }));
      await grow(engine, `t${i}`, 1);
    }
    must(await engine.forkThread({ threadId: 't7', newThreadId: 'fork' }));
    const runs = await Promise.all(
      [1, 2].map(() =>
        weftProcess(['retention', '--apply', '--batch', '3'], { DATABASE_URL: url }),
      ),
    );
    for (const r of runs) expect(r.code, r.err).toBe(0);
    const deleted = runs.map((r) => Number(/deleted (\d+) expired thread/.exec(r.out)?.[1]));
    expect(deleted[0]! + deleted[1]!).toBe(n);
    const audit = await rawQuery(weft, 'SELECT "thread_id" FROM "audit_entry"');
    expect(audit).toHaveLength(n);
    expect(new Set(audit.map((a) => a.thread_id)).size).toBe(n);
    expect(must(await engine.verify('fork', { strict: true })).ok).toBe(true);
  }, 60_000);

  it('weft gc: reports what no thread needs, changes nothing, and --apply removes it', async () => {
    const { url, engine, weft } = await sample();
    // A healthy database: nothing to collect, also after deleting a thread a fork reads.
    must(await engine.deleteThread({ threadId: 'old' }));
    const clean = await weftIn(['gc', '--database', url]);
    expect(clean.code).toBe(0);
    expect(clean.out).toContain('weft gc: 0 rows would be removed');
    // Garbage a removal never leaves: a thread marked deleted by hand (its runs and rows kept),
    // and an orphaned idempotency record.
    must(await engine.startRun({ threadId: 'later', runId: 'r1', goal: 'g' }));
    await grow(engine, 'later', 2);
    await rawExecute(weft, 'UPDATE "thread" SET "deleted_at" = "created_at" WHERE "id" = ?', [
      'later',
    ]);
    await rawExecute(
      weft,
      'INSERT INTO "idempotency_record" ("scope", "key", "request_hash", "response", "thread_id", "created_at") VALUES (?, ?, ?, ?, ?, ?)',
      [
        'x',
        'k',
        'h',
        '{}',
        'gone',
        weft.provider === 'postgres' ? new Date() : new Date().toISOString().replace('Z', '+00:00'),
      ],
    );
    const before = await counts(weft);
    const dry = await weftIn(['gc'], { DATABASE_URL: url });
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('dry run');
    expect(dry.out).toMatch(
      /deleted threads no live thread reads.*: 1 thread, 4 log_entry, 3 node/,
    );
    expect(dry.out).toMatch(/of deleted threads: 1 run, 4 activity/);
    expect(dry.out).toMatch(/orphaned rows.*: 1 idempotency_record/);
    expect(await counts(weft)).toEqual(before);

    const applied = await weftIn(['gc', '--apply', '--database', url]);
    expect(applied.code).toBe(0);
    expect(applied.out).toContain('removed');
    const after = await counts(weft);
    expect(after.thread).toBe(before.thread - 1);
    expect(after.log_entry).toBe(before.log_entry - 4);
    expect(after.run).toBe(before.run - 1);
    expect(after.idempotency_record).toBe(before.idempotency_record - 1);
    expect((await weftIn(['gc'], { DATABASE_URL: url })).out).toContain('0 rows would be removed');
    // What the live threads read is untouched.
    for (const id of ['kept', 'ancient']) {
      expect(must(await engine.verify(id, { strict: true })).ok).toBe(true);
    }
  });
}

describe('weft retention / gc [sqlite]', () => {
  retentionCli(freshSqliteUrl);
});

describeWithPostgres('weft retention / gc', () => {
  retentionCli(freshPostgresUrl);
});
