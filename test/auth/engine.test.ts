/**
 * Tenant scoping below the API: the engine's commands and reads for a tenant, and the
 * store's rows — not only the resolvers — keep tenants apart.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createSequentialIds } from '../../src/core/ports.js';
import { createEngine, type Engine, qualifiedKey } from '../../src/engine/index.js';
import { importThreadLog } from '../../src/engine/transfer.js';
import { tenantReads } from '../../src/graphql/context.js';
import { createReads, scopeReads } from '../../src/reads/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import { freshDatabase } from './support.js';

const engines: Engine[] = [];
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const e of engines) await e.close();
  for (const db of databases) await db.drop();
});

async function open(backend: 'sqlite' | 'postgres' = 'sqlite') {
  let url: string;
  if (backend === 'postgres') {
    const db = await createTestDatabase();
    databases.push(db);
    url = db.url;
    await migrate(url);
  } else {
    url = await freshDatabase();
  }
  const engine = createEngine({ store: openThreadStore(url), ids: createSequentialIds('id') });
  engines.push(engine);
  return { url, engine, a: engine.forTenant('acme'), b: engine.forTenant('globex') };
}

function must<T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

describe('engine tenancy', () => {
  it("another tenant's thread and run are NOT_FOUND, the same error as missing ones", async () => {
    const { a, b } = await open();
    must(await a.createThread({ threadId: 'ta' }));
    must(await a.startRun({ threadId: 'ta', goal: 'g', runId: 'ra' }));
    const same = async (call: (thread: string, run: string) => Promise<unknown>) => {
      const theirs = JSON.stringify(await call('ta', 'ra'));
      const none = JSON.stringify(await call('tz', 'rz'));
      expect(theirs.replaceAll('ta', '?').replaceAll('ra', '?')).toBe(
        none.replaceAll('tz', '?').replaceAll('rz', '?'),
      );
      expect(theirs).toContain('NOT_FOUND');
    };
    await same((t) => b.appendNodes({ threadId: t, nodes: [{ kind: 'inference', payload: 1 }] }));
    await same((t) => b.remember({ threadId: t, type: 'memory', key: 'k', content: 1 }));
    await same((t) => b.forkThread({ threadId: t }));
    await same((t) => b.startRun({ threadId: t, goal: 'x' }));
    await same((_t, r) => b.cancelRun({ runId: r }));
    await same((t, r) =>
      b.dispatch({ runId: r, threadId: t, action: { type: 'set_status', payload: {} } }),
    );
    await same((t) => b.getState(t));
    await same((t) => b.stateAt(t));
    await same((t) => b.verify(t));
    await same((t) => b.importWorkflowState({ threadId: t, state: {} }));
    // The system engine still sees everything.
    expect((await a.getState('ta')).ok).toBe(true);
  });

  it('an imported log lands in the tenant asked for (weft import --tenant)', async () => {
    const { engine, b } = await open();
    must(await engine.createThread({ threadId: 'src' }));
    const entries = await engine.store.readEntries('src');
    must(await importThreadLog(engine, 'copy', entries, 'globex'));
    // Stored under globex's key for the id, not the plain one (ids are per tenant).
    expect(await engine.store.getThreadTenant(qualifiedKey('copy', 'globex'))).toBe('globex');
    expect(await engine.store.getThreadTenant('copy')).toBeUndefined();
    expect((await b.getState('copy')).ok).toBe(true);
    expect((await b.getState('src')).ok).toBe(false);
  });

  it('idempotency keys are per tenant: one key in two tenants makes two threads', async () => {
    const { a, b } = await open();
    const first = must(await a.createThread({ idempotencyKey: 'k1' }));
    const second = must(await b.createThread({ idempotencyKey: 'k1' }));
    expect(second.threadId).not.toBe(first.threadId);
    expect(must(await a.createThread({ idempotencyKey: 'k1' })).threadId).toBe(first.threadId);
    expect((await b.getState(first.threadId)).ok).toBe(false);
  });
});

async function ownership(backend: 'sqlite' | 'postgres') {
  const { url, engine, a, b } = await open(backend);
  must(await a.createThread({ threadId: 'ta' }));
  must(await a.forkThread({ threadId: 'ta', newThreadId: 'fa' }));
  must(await a.startRun({ threadId: 'fa', goal: 'g', runId: 'r1' }));
  must(await b.createThread({ threadId: 'tb' }));
  must(await b.startRun({ threadId: 'tb', goal: 'g', runId: 'r1' }));
  must(await engine.createThread({ threadId: 'td' }));
  const dump = await engine.store.dumpReadModels();
  // Storage keys: a tenant's thread is qualified with its tenant, the default tenant's is not.
  expect(Object.fromEntries(dump.thread.map((t) => [t.id, t.tenantId]))).toEqual({
    [qualifiedKey('ta', 'acme')]: 'acme',
    [qualifiedKey('fa', 'acme')]: 'acme',
    [qualifiedKey('tb', 'globex')]: 'globex',
    td: 'default',
  });
  expect(dump.run.map((r) => [r.threadId, r.tenantId])).toEqual([
    [qualifiedKey('fa', 'acme'), 'acme'],
    [qualifiedKey('tb', 'globex'), 'globex'],
  ]);
  const reads = createReads(engine, { databaseUrl: url });
  try {
    const forB = scopeReads(reads, engine.tenants, 'globex');
    const list = await forB.listThreads({ tenantId: 'globex', take: 10 });
    expect(list.map((t) => t.id)).toEqual(['tb']);
    const runs = await forB.listRuns({ tenantId: 'globex', take: 10 });
    expect(runs.map((r) => r.threadId)).toEqual(['tb']);
    // The SQL filter itself, with no scoping wrapper (which names threads by storage key):
    const acme = await reads.listThreads({ tenantId: 'acme', take: 10 });
    expect(acme.map((t) => t.id).sort()).toEqual([
      qualifiedKey('fa', 'acme'),
      qualifiedKey('ta', 'acme'),
    ]);
    expect((await forB.threads(['ta', 'tb'])).map((t) => t?.id)).toEqual([undefined, 'tb']);
    expect(must(await forB.findRun('r1'))?.threadId).toBe('tb');
    // The server's per-tenant views (made once per tenant, shared by every operation's context)
    // keep tenants as far apart as views made per operation.
    const readsFor = tenantReads(engine, reads);
    expect(readsFor('globex')).toBe(readsFor('globex'));
    expect(readsFor('acme')).not.toBe(readsFor('globex'));
    expect((await readsFor('acme').threads(['ta', 'tb'])).map((t) => t?.id)).toEqual([
      'ta',
      undefined,
    ]);
    expect((await readsFor('globex').threads(['ta', 'tb'])).map((t) => t?.id)).toEqual([
      undefined,
      'tb',
    ]);
  } finally {
    await reads.close();
  }
}

const OWNERSHIP =
  'new threads and forks belong to the caller; runs carry their thread tenant; lists filter in SQL';

describe('engine tenancy rows [sqlite]', () => {
  it(OWNERSHIP, () => ownership('sqlite'));
});

describeWithPostgres('engine tenancy rows', () => {
  it(OWNERSHIP, () => ownership('postgres'));
});
