import { afterEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/index.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import { rawQuery } from '../../src/store/prisma/raw.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { createReadQueries } from '../../src/store/read-model/queries.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type Backend,
  failure,
  must,
  openEngine,
  postgresBackend,
  sqliteBackend,
  type TestEngine,
  useBackend,
} from './support.js';

const TABLES = [
  'thread',
  'log_entry',
  'node',
  'node_parent',
  'node_text',
  'resource_head',
  'run',
  'run_spend',
  'approval',
  'activity',
  'snapshot',
] as const;

async function rowCounts(weft: WeftPrisma, threadId?: string) {
  const out: Record<string, number> = {};
  for (const table of TABLES) {
    const column = table === 'thread' ? 'id' : 'thread_id';
    const [row] = await rawQuery(
      weft,
      `SELECT COUNT(*) AS n FROM "${table}"${threadId === undefined ? '' : ` WHERE "${column}" = ?`}`,
      threadId === undefined ? [] : [threadId],
    );
    out[table] = Number(row?.n ?? 0);
  }
  return out;
}

async function grow(engine: TestEngine, threadId: string, turns: number) {
  for (let i = 0; i < turns; i++) {
    must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'inference', payload: { text: `${threadId} turn ${i}` } }],
      }),
    );
    if (i % 3 === 0) {
      must(await engine.remember({ threadId, type: 'memory', key: `k${i % 2}`, content: i }));
    }
  }
}

/** What a reader sees of a thread: its log, read models and state at a few indexes. */
async function view(engine: TestEngine, threadId: string) {
  const log = await engine.store.readEntries(threadId);
  const states = [];
  for (const at of [1, Math.floor(log.length / 2), log.length]) {
    states.push(must(await engine.stateAt(threadId, at)).agentState);
  }
  return {
    log,
    states,
    dump: await engine.store.dumpReadModels([threadId]),
    verify: must(await engine.verify(threadId, { strict: true })),
  };
}

function deleteThreadSuite(backend: Backend) {
  let engine: TestEngine | undefined;
  let weft: WeftPrisma | undefined;
  afterEach(async () => {
    await engine?.close();
    await weft?.prisma.$disconnect();
  });

  it('keeps what forks read until the last thread needing it is gone, leaving no row behind', async () => {
    engine = await openEngine(backend, { snapshots: { entries: 4, nodes: 5 } });
    weft = createPrisma(engine.url);
    must(await engine.createThread({ threadId: 's' }));
    await grow(engine, 's', 12);
    must(await engine.startRun({ threadId: 's', runId: 'r1', goal: 'g' }));
    must(await engine.forkThread({ threadId: 's', upToIndex: 10, newThreadId: 'f1' }));
    await grow(engine, 'f1', 5);
    must(await engine.forkThread({ threadId: 'f1', upToIndex: 13, newThreadId: 'f2' }));
    await grow(engine, 'f2', 4);
    await grow(engine, 's', 3);
    const before = { f1: await view(engine, 'f1'), f2: await view(engine, 'f2') };
    const sourceHash = must(await engine.getState('s')).stateHash;

    const deleted = must(await engine.deleteThread({ threadId: 's', idempotencyKey: 'del-s' }));
    expect(deleted).toMatchObject({ threadId: 's', stateHash: sourceHash });
    expect(failure(await engine.getState('s')).code).toBe('NOT_FOUND');
    expect(failure(await engine.deleteThread({ threadId: 's' })).code).toBe('NOT_FOUND');
    // A retry with the key answers the same and writes nothing.
    const counts = await rowCounts(weft);
    expect(must(await engine.deleteThread({ threadId: 's', idempotencyKey: 'del-s' }))).toEqual(
      deleted,
    );
    expect(await rowCounts(weft)).toEqual(counts);
    const q = createReadQueries(weft);
    expect(await q.countThreads({ tenantId: 'default' })).toBe(2);
    expect((await q.threads(['s', 'f1', 'f2'])).map((t) => t.id).sort()).toEqual(['f1', 'f2']);
    // The source keeps only the entries and nodes its fork reads; its runs and heads are gone.
    const kept = await rowCounts(weft, 's');
    expect(kept).toMatchObject({ thread: 1, log_entry: 10, run: 0, resource_head: 0 });
    const f1 = await engine.store.lineage('f1');
    expect(kept.node).toBe(f1[0]!.toSeq);
    expect({ f1: await view(engine, 'f1'), f2: await view(engine, 'f2') }).toEqual(before);

    must(await engine.deleteThread({ threadId: 'f1' }));
    expect(await view(engine, 'f2')).toEqual(before.f2);
    must(await engine.deleteThread({ threadId: 'f2' }));
    const left = await rowCounts(weft);
    expect(left).toEqual(Object.fromEntries(TABLES.map((t) => [t, 0])));
    const audit = await rawQuery(
      weft,
      'SELECT "thread_id", "action", "actor", "state_hash", "log_length" FROM "audit_entry" ORDER BY "recorded_at", "thread_id"',
      [],
    );
    expect(audit.map((a) => a.thread_id)).toEqual(['s', 'f1', 'f2']);
    expect(audit[0]).toMatchObject({
      action: 'thread_deleted',
      actor: 'system',
      state_hash: sourceHash,
    });
  });

  it('two engines deleting one thread at once: one deletes it, the other finds it gone', async () => {
    engine = await openEngine(backend);
    weft = createPrisma(engine.url);
    const other = createEngine({ store: openThreadStore(engine.url) });
    try {
      must(await engine.createThread({ threadId: 's' }));
      await grow(engine, 's', 3);
      must(await other.getState('s'));
      const outcomes = await Promise.all([
        engine.deleteThread({ threadId: 's' }),
        other.deleteThread({ threadId: 's' }),
      ]);
      expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok).map((o) => !o.ok && o.error.code)).toEqual([
        'NOT_FOUND',
      ]);
      const audit = await rawQuery(weft, 'SELECT "thread_id" FROM "audit_entry"', []);
      expect(audit).toHaveLength(1);
      expect(await rowCounts(weft)).toEqual(Object.fromEntries(TABLES.map((t) => [t, 0])));
    } finally {
      await other.close();
    }
  });

  it('deleting a fork first trims only its own rows; its source is untouched', async () => {
    engine = await openEngine(backend);
    weft = createPrisma(engine.url);
    must(await engine.createThread({ threadId: 's' }));
    await grow(engine, 's', 6);
    must(await engine.forkThread({ threadId: 's', upToIndex: 5, newThreadId: 'f' }));
    await grow(engine, 'f', 3);
    const source = await view(engine, 's');
    const counts = await rowCounts(weft, 's');
    must(await engine.deleteThread({ threadId: 'f' }));
    expect(await view(engine, 's')).toEqual(source);
    expect(await rowCounts(weft, 's')).toEqual(counts);
    expect(await rowCounts(weft, 'f')).toEqual(Object.fromEntries(TABLES.map((t) => [t, 0])));
    // The id is free again.
    must(await engine.createThread({ threadId: 'f' }));
  });
}

describe('deleteThread [sqlite]', () => {
  deleteThreadSuite(useBackend(sqliteBackend()));
});

describeWithPostgres('deleteThread', () => {
  deleteThreadSuite(useBackend(postgresBackend()));
});
