/**
 * Retention: a thread's `expiresAt` is set at creation (or by the engine's
 * `retentionDays`) and later by setThreadExpiry; `deleteExpiredThreads` deletes the expired ones
 * through deleteThread's path — once, with one audit entry each, also when two engines on one
 * database (two stores: two connections, as two processes have) sweep at the same time — and the
 * forks of an expired thread keep working. `startRetentionSweeper` runs sweeps on an interval.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import {
  type CommittedEvent,
  createEngine,
  type Engine,
  type EngineOptions,
  type RetentionSweep,
  startRetentionSweeper,
} from '../../src/engine/index.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import { rawQuery } from '../../src/store/prisma/raw.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type Backend,
  failure,
  must,
  postgresBackend,
  sqliteBackend,
  useBackend,
} from './support.js';

const START = '2026-03-01T00:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(START) + ms).toISOString();
const DAY = 86_400_000;

/** Expiries as stored, by thread key (null: none; absent: no live row). */
async function expiries(weft: WeftPrisma): Promise<Record<string, string | null>> {
  const rows = await rawQuery(
    weft,
    'SELECT "id", "expires_at" FROM "thread" WHERE "deleted_at" IS NULL ORDER BY "id"',
  );
  return Object.fromEntries(
    rows.map((r) => [
      r.id as string,
      r.expires_at === null
        ? null
        : r.expires_at instanceof Date
          ? r.expires_at.toISOString()
          : new Date(String(r.expires_at)).toISOString(),
    ]),
  );
}

const auditRows = (weft: WeftPrisma) =>
  rawQuery(
    weft,
    'SELECT "thread_id", "actor", "action", "tenant_id" FROM "audit_entry" ORDER BY "thread_id"',
  );

async function grow(engine: Engine, threadId: string, turns: number) {
  for (let i = 0; i < turns; i++) {
    must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'inference', payload: { text: `${threadId} turn ${i}` } }],
      }),
    );
  }
}

/** Sweeps until a sweep finds nothing; what every sweep did. */
async function sweepAll(engine: Engine, limit = 5): Promise<RetentionSweep[]> {
  const sweeps: RetentionSweep[] = [];
  let after: RetentionSweep['next'];
  for (;;) {
    const sweep = must(await engine.deleteExpiredThreads({ limit, after }));
    sweeps.push(sweep);
    after = sweep.next;
    if (after === undefined) return sweeps;
  }
}

function retentionSuite(backend: Backend) {
  const opened: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const o of opened.splice(0).reverse()) await o.close();
  });

  async function open(url?: string, options: Partial<EngineOptions> = {}) {
    const databaseUrl = url ?? (await backend.freshUrl());
    const clock = createSimulatedClock(START, 1);
    const engine = createEngine({
      store: openThreadStore(databaseUrl),
      clock,
      ids: createSequentialIds(`id-${opened.length}`),
      ...options,
    });
    const weft = createPrisma(databaseUrl);
    opened.push(engine, { close: () => weft.prisma.$disconnect() });
    return { engine, clock, weft, url: databaseUrl };
  }

  it('expiresAt is set at creation, by the default, and later; a bad one is a typed error', async () => {
    const { engine, weft } = await open(undefined, { retentionDays: 30 });
    must(await engine.createThread({ threadId: 'given', expiresAt: at(DAY) }));
    must(await engine.createThread({ threadId: 'default' }));
    must(await engine.createThread({ threadId: 'never', expiresAt: null }));
    must(await engine.forkThread({ threadId: 'given', newThreadId: 'fork' }));
    const imported = must(await engine.stateAt('given')).agentState;
    must(await engine.importState({ threadId: 'imported', state: imported, expiresAt: at(-DAY) }));
    const stored = await expiries(weft);
    expect(stored.given).toBe(at(DAY));
    // Created at the clock's reading, plus 30 days.
    expect(Date.parse(stored.default!) - Date.parse(START)).toBeGreaterThanOrEqual(30 * DAY);
    expect(Date.parse(stored.default!) - Date.parse(START)).toBeLessThan(30 * DAY + 1000);
    expect(stored.never).toBeNull();
    // A fork is a new thread: the default, not its source's expiry.
    expect(Date.parse(stored.fork!)).toBeGreaterThan(Date.parse(START) + 30 * DAY - 1);
    expect(stored.imported).toBe(at(-DAY));

    const hash = must(await engine.getState('default')).stateHash;
    const set = must(
      await engine.setThreadExpiry({
        threadId: 'default',
        expiresAt: '2027-01-01T00:00:00Z',
        idempotencyKey: 'k1',
      }),
    );
    expect(set).toEqual({ threadId: 'default', expiresAt: '2027-01-01T00:00:00.000Z' });
    // Not a log entry: the log and its state hash stay.
    expect(must(await engine.getState('default')).stateHash).toBe(hash);
    expect(must(await engine.getState('default')).length).toBe(1);
    // A retry answers the same; the same key for another request is refused.
    expect(
      must(
        await engine.setThreadExpiry({
          threadId: 'default',
          expiresAt: '2027-01-01T00:00:00Z',
          idempotencyKey: 'k1',
        }),
      ),
    ).toEqual(set);
    expect(
      failure(
        await engine.setThreadExpiry({
          threadId: 'default',
          expiresAt: null,
          idempotencyKey: 'k1',
        }),
      ).code,
    ).toBe('IDEMPOTENCY_KEY_REUSED');
    must(await engine.setThreadExpiry({ threadId: 'given', expiresAt: null }));
    expect(await expiries(weft)).toMatchObject({
      default: '2027-01-01T00:00:00.000Z',
      given: null,
    });

    for (const bad of ['tomorrow', '2026-13-01T00:00:00Z', 42, '', undefined]) {
      const e = failure(
        await engine.setThreadExpiry({ threadId: 'default', expiresAt: bad as never }),
      );
      expect(e).toMatchObject({ code: 'VALIDATION_FAILED' });
      expect(e.code === 'VALIDATION_FAILED' && e.issues[0]?.path).toBe('$.expiresAt');
    }
    expect(failure(await engine.createThread({ threadId: 'x', expiresAt: 'soon' })).code).toBe(
      'VALIDATION_FAILED',
    );
    expect(failure(await engine.setThreadExpiry({ threadId: 'nope', expiresAt: null })).code).toBe(
      'NOT_FOUND',
    );
    // A tenant sets the expiry of its own threads only.
    const acme = engine.forTenant('acme');
    must(await acme.createThread({ threadId: 'given' }));
    must(await acme.setThreadExpiry({ threadId: 'given', expiresAt: at(5 * DAY) }));
    expect(await expiries(weft)).toMatchObject({ given: null });
    expect(failure(await acme.setThreadExpiry({ threadId: 'default', expiresAt: null })).code).toBe(
      'NOT_FOUND',
    );
  });

  it('a sweep deletes expired threads as deleteThread does; forks keep working', async () => {
    const events: CommittedEvent[] = [];
    const { engine, clock, weft } = await open(undefined, {
      publisher: { publish: (event) => void events.push(event) },
    });
    must(await engine.createThread({ threadId: 'old', expiresAt: at(1000) }));
    await grow(engine, 'old', 6);
    must(await engine.forkThread({ threadId: 'old', upToIndex: 4, newThreadId: 'kept' }));
    await grow(engine, 'kept', 2);
    must(await engine.createThread({ threadId: 'later', expiresAt: at(DAY) }));
    must(await engine.createThread({ threadId: 'moved', expiresAt: at(500) }));
    must(await engine.setThreadExpiry({ threadId: 'moved', expiresAt: at(2 * DAY) }));
    must(await engine.createThread({ threadId: 'none' }));
    const kept = {
      log: await engine.store.readEntries('kept'),
      state: must(await engine.stateAt('kept', 3)).agentState,
      hash: must(await engine.getState('kept')).stateHash,
    };
    const oldHash = must(await engine.getState('old')).stateHash;

    // Nothing has expired yet.
    expect(must(await engine.deleteExpiredThreads())).toMatchObject({ found: 0, deleted: [] });
    clock.set(at(60_000));
    const sweep = must(await engine.deleteExpiredThreads());
    expect(sweep).toMatchObject({ found: 1, skipped: [], failed: [] });
    expect(sweep.deleted).toEqual([
      {
        threadId: 'old',
        tenantId: 'default',
        expiresAt: at(1000),
        logLength: 7,
        stateHash: oldHash,
      },
    ]);
    expect(failure(await engine.getState('old')).code).toBe('NOT_FOUND');
    expect(events.filter((e) => e.deleted).map((e) => e.threadId)).toEqual(['old']);
    expect(await auditRows(weft)).toEqual([
      { thread_id: 'old', actor: 'retention', action: 'thread_deleted', tenant_id: 'default' },
    ]);
    // The fork reads the shared history as before, verifies and grows.
    expect(await engine.store.readEntries('kept')).toEqual(kept.log);
    expect(must(await engine.stateAt('kept', 3)).agentState).toEqual(kept.state);
    expect(must(await engine.getState('kept')).stateHash).toBe(kept.hash);
    expect(must(await engine.verify('kept', { strict: true })).ok).toBe(true);
    await grow(engine, 'kept', 1);
    expect(Object.keys(await expiries(weft)).sort()).toEqual(['kept', 'later', 'moved', 'none']);

    // An expiry in the past means the next sweep; the rest stays until theirs.
    must(await engine.setThreadExpiry({ threadId: 'none', expiresAt: '2000-01-01T00:00:00Z' }));
    expect(must(await engine.deleteExpiredThreads()).deleted.map((d) => d.threadId)).toEqual([
      'none',
    ]);
    clock.set(at(3 * DAY));
    expect(
      (await sweepAll(engine, 1)).flatMap((s) => s.deleted.map((d) => d.threadId)).sort(),
    ).toEqual(['later', 'moved']);
    expect(Object.keys(await expiries(weft))).toEqual(['kept']);
    expect(failure(await engine.deleteExpiredThreads({ limit: 0 })).code).toBe('VALIDATION_FAILED');
  });

  it("a tenant's expired thread is in that tenant's audit trail under the tenant's id", async () => {
    const { engine, clock, weft } = await open();
    const acme = engine.forTenant('acme');
    must(await acme.createThread({ threadId: 'mine', expiresAt: at(1000) }));
    clock.set(at(60_000));
    expect(must(await engine.deleteExpiredThreads())).toMatchObject({ found: 1, failed: [] });
    expect(await auditRows(weft)).toEqual([
      { thread_id: 'mine', actor: 'retention', action: 'thread_deleted', tenant_id: 'acme' },
    ]);
  });

  it('a removal for retention re-checks the expiry in its transaction', async () => {
    const { engine, weft } = await open();
    must(await engine.createThread({ threadId: 't', expiresAt: at(10) }));
    must(await engine.setThreadExpiry({ threadId: 't', expiresAt: at(DAY) }));
    // A sweep that read the old expiry: the store refuses, nothing is written.
    const removed = must(
      await engine.store.removeThread('t', {
        at: new Date(at(1000)),
        expiredBy: new Date(at(1000)),
        audit: {
          id: 'audit-t',
          tenantId: 'default',
          recordedAt: new Date(at(1000)),
          actor: 'retention',
          action: 'thread_deleted',
          threadId: 't',
          logLength: 1,
          stateHash: 'x',
        },
      }),
    );
    expect(removed).toBe(false);
    expect(await auditRows(weft)).toEqual([]);
    expect(must(await engine.getState('t')).length).toBe(1);
    expect(Object.keys(await expiries(weft))).toEqual(['t']);
  });

  it('two engines on one database sweeping at once delete each thread once', async () => {
    const a = await open();
    const b = await open(a.url);
    const n = 24;
    for (let i = 0; i < n; i++) {
      const threadId = `t${String(i).padStart(2, '0')}`;
      must(await a.engine.createThread({ threadId, expiresAt: at(1000 + i) }));
      await grow(a.engine, threadId, 2);
    }
    // A fork of an expired thread, itself without expiry.
    must(await a.engine.forkThread({ threadId: 't03', upToIndex: 2, newThreadId: 'fork' }));
    const forkLog = await a.engine.store.readEntries('fork');
    // Both engines know the threads (their caches hold them), as two busy processes would.
    for (let i = 0; i < n; i++) must(await b.engine.getState(`t${String(i).padStart(2, '0')}`));
    a.clock.set(at(DAY));
    b.clock.set(at(DAY));
    const [fromA, fromB] = await Promise.all([sweepAll(a.engine, 4), sweepAll(b.engine, 4)]);
    const deletedBy = (sweeps: RetentionSweep[]) =>
      sweeps.flatMap((s) => s.deleted.map((d) => d.threadId));
    const all = [...deletedBy(fromA), ...deletedBy(fromB)].sort();
    expect(all).toHaveLength(n);
    expect(new Set(all).size).toBe(n);
    expect([...fromA, ...fromB].flatMap((s) => s.failed)).toEqual([]);
    const audit = await auditRows(a.weft);
    expect(audit.map((r) => r.thread_id)).toEqual(all);
    expect(new Set(audit.map((r) => r.actor))).toEqual(new Set(['retention']));
    // The fork of an expired thread keeps working, from either engine.
    expect(await b.engine.store.readEntries('fork')).toEqual(forkLog);
    expect(must(await b.engine.verify('fork', { strict: true })).ok).toBe(true);
    await grow(b.engine, 'fork', 1);
    expect(must(await a.engine.getState('fork')).length).toBe(forkLog.length + 1);
    expect(Object.keys(await expiries(a.weft))).toEqual(['fork']);
    // Once the fork goes too, no row of the expired source is left.
    must(await a.engine.deleteThread({ threadId: 'fork' }));
    const [left] = await rawQuery(a.weft, 'SELECT COUNT(*) AS n FROM "log_entry"');
    expect(Number(left?.n)).toBe(0);
  });

  it('the sweeper runs sweeps on an interval in bounded batches and counts them', async () => {
    const { engine } = await open();
    for (let i = 0; i < 5; i++) {
      must(await engine.createThread({ threadId: `e${i}`, expiresAt: at(-1000) }));
    }
    const sweeps: RetentionSweep[] = [];
    const sweeper = startRetentionSweeper(engine, {
      intervalMs: 60_000,
      batchSize: 2,
      onSweep: (s) => sweeps.push(s),
    });
    opened.push({ close: () => sweeper.stop() });
    // Full batches follow each other at once; the partial one rests for the interval.
    await expect.poll(() => sweeper.stats().deleted, { timeout: 10_000 }).toBe(5);
    expect(sweeps.map((s) => s.deleted.length)).toEqual([2, 2, 1]);
    expect(sweeper.stats()).toEqual({ sweeps: 3, errors: 0, deleted: 5, skipped: 0 });
    must(await engine.createThread({ threadId: 'late', expiresAt: at(-1) }));
    sweeper.wake();
    await expect.poll(() => sweeper.stats().deleted, { timeout: 10_000 }).toBe(6);
    await sweeper.stop();
    expect(() => startRetentionSweeper(engine, { batchSize: 0 })).toThrow(RangeError);
  });
}

describe('retention [sqlite]', () => {
  retentionSuite(useBackend(sqliteBackend()));
});

describeWithPostgres('retention', () => {
  retentionSuite(useBackend(postgresBackend()));
});
