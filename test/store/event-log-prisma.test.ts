/**
 * What the Prisma event-log store does beyond the shared contract, on SQLite and Postgres: the
 * thread rows it creates and keeps in sync, the stored text and columns, multi-statement batches,
 * and appending inside a caller's transaction (how the engine will use it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import {
  createPrismaEventLogStore,
  type PrismaEventLogStore,
  type PrismaEventLogStoreOptions,
  type RawQueryable,
} from '../../src/store/event-log/index.js';
import { toRecordedAt } from '../../src/store/event-log/prisma-sql.js';
import { migrate } from '../../src/store/migrate/index.js';
import {
  createPostgresPrisma,
  createSqlitePrisma,
  type PostgresPrismaClient,
  type SqlitePrismaClient,
} from '../../src/store/prisma/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import { makeAwkwardEntry, makeBatch, makeEntry, newThreadId } from './event-log-fixtures.js';

const CLOCK = new Date('2026-04-05T06:07:08.009Z');

interface Backend {
  /** The SQLite and Postgres clients share this model API. */
  prisma: SqlitePrismaClient;
  makeStore(options?: PrismaEventLogStoreOptions): PrismaEventLogStore;
  cleanup(): Promise<void>;
}

function describePrismaStore(name: string, open: () => Promise<Backend>): void {
  describe(`prisma event-log store on ${name}`, () => {
    let backend: Backend;
    let store: PrismaEventLogStore;
    beforeEach(async () => {
      backend = await open();
      store = backend.makeStore({ now: () => CLOCK });
    });
    afterEach(async () => {
      await backend.cleanup();
    });

    const threadRow = (id: string) => backend.prisma.thread.findUnique({ where: { id } });

    it('creates a minimal thread row on the first append and keeps log_length in sync', async () => {
      const threadId = newThreadId();
      await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 2) });
      expect(await threadRow(threadId)).toMatchObject({
        tenantId: 'default',
        createdAt: CLOCK,
        updatedAt: CLOCK,
        metadata: '{}',
        nodeTypes: '[]',
        logLength: 2,
        stateHash: '',
        frontier: '[]',
        forkedFromId: null,
      });
      await store.append({ threadId, expectedIndex: 2, entries: makeBatch(2, 3) });
      expect((await threadRow(threadId))?.logLength).toBe(5);
      expect(await backend.prisma.logEntry.count({ where: { threadId } })).toBe(5);
    });

    it('leaves no thread row behind when an append fails', async () => {
      const threadId = newThreadId();
      const conflict = await store.append({ threadId, expectedIndex: 3, entries: makeBatch(3, 1) });
      expect(conflict.ok).toBe(false);
      const invalid = await store.append({
        threadId,
        expectedIndex: 0,
        entries: [makeEntry(1)],
      });
      expect(invalid.ok).toBe(false);
      expect(await threadRow(threadId)).toBeNull();
    });

    it('appends to a thread row the engine created, touching only log_length', async () => {
      const threadId = newThreadId();
      const at = new Date('2026-01-01T00:00:00.000Z');
      await backend.prisma.thread.create({
        data: {
          id: threadId,
          tenantId: 'acme',
          createdAt: at,
          updatedAt: at,
          metadata: '{"a":1}',
          nodeTypes: '["memory"]',
          stateHash: 'genesis',
        },
      });
      await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 1) });
      expect(await threadRow(threadId)).toMatchObject({
        tenantId: 'acme',
        createdAt: at,
        updatedAt: at,
        metadata: '{"a":1}',
        nodeTypes: '["memory"]',
        stateHash: 'genesis',
        logLength: 1,
      });
    });

    it('stores canonical text (and the text as appended when it differs) and fills the index columns', async () => {
      const threadId = newThreadId();
      const entries = [
        makeAwkwardEntry(0),
        makeEntry(1, 'e', { recordedAt: '2016-12-31T23:59:60Z' }),
        makeEntry(2, 'e', { recordedAt: '0000-01-01T00:00:00Z' }),
      ];
      await store.append({ threadId, expectedIndex: 0, entries });
      const rows = await backend.prisma.logEntry.findMany({
        where: { threadId },
        orderBy: { index: 'asc' },
      });
      expect(rows.map((r) => r.entry)).toEqual(entries.map((e) => canonicalJson(e)));
      // Each of these differs from its canonical text (`event` is written {type, n}).
      expect(rows.map((r) => r.verbatim)).toEqual(entries.map((e) => JSON.stringify(e)));
      expect(rows.map((r) => [r.index, r.entryId, r.type])).toEqual([
        [0, 'awk-0', 'tool.result_recorded'],
        [1, 'e-1', 'noted'],
        [2, 'e-2', 'noted'],
      ]);
      expect(rows.map((r) => r.recordedAt.toISOString())).toEqual([
        '2026-03-01T10:34:56.789Z',
        '2017-01-01T00:00:00.000Z',
        '0001-01-01T00:00:00.000Z',
      ]);
      // An entry already in canonical order is stored once.
      const canonical = makeEntry(3, 'e', { event: { n: 3, type: 'noted' } });
      expect(JSON.stringify(canonical)).toBe(canonicalJson(canonical));
      await store.append({ threadId, expectedIndex: 3, entries: [canonical] });
      const row = await backend.prisma.logEntry.findUnique({
        where: { threadId_index: { threadId, index: 3 } },
      });
      expect(row).toMatchObject({ entry: canonicalJson(canonical), verbatim: null });
    });

    it('splits a batch over several INSERT statements and still lands it atomically', async () => {
      const small = backend.makeStore({ rowsPerStatement: 7 });
      const threadId = newThreadId();
      const entries = makeBatch(0, 100);
      expect(await small.append({ threadId, expectedIndex: 0, entries })).toEqual({
        ok: true,
        value: { length: 100 },
      });
      expect(await small.read(threadId)).toEqual(entries);
      // The repeated id sits in the last statement: the earlier statements must roll back.
      const next = makeBatch(100, 50, 'n');
      next[49] = makeEntry(149, 'e', { id: 'e-3' });
      const result = await small.append({ threadId, expectedIndex: 100, entries: next });
      expect(result).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
      expect(await small.length(threadId)).toBe(100);
      expect(await backend.prisma.logEntry.count({ where: { threadId } })).toBe(100);
    });

    it('records the fork origin on the target row and inherits the source tenant', async () => {
      const source = newThreadId('src');
      await store.append({ threadId: source, expectedIndex: 0, entries: makeBatch(0, 4) });
      await backend.prisma.thread.update({ where: { id: source }, data: { tenantId: 'acme' } });
      const target = newThreadId('fork');
      expect(await store.fork({ threadId: source, newThreadId: target, upToIndex: 3 })).toEqual({
        ok: true,
        value: { length: 3 },
      });
      expect(await threadRow(target)).toMatchObject({
        tenantId: 'acme',
        logLength: 3,
        forkedFromId: source,
        forkedUpToIndex: 3,
        createdAt: CLOCK,
      });
      const copied = await backend.prisma.logEntry.findMany({
        where: { threadId: target },
        orderBy: { index: 'asc' },
      });
      expect(copied.map((r) => r.entryId)).toEqual(['e-0', 'e-1', 'e-2']);
    });

    describe('appendIn (inside the caller transaction)', () => {
      type Tx = RawQueryable & Pick<SqlitePrismaClient, 'thread'>;
      const inTransaction = <T>(fn: (tx: Tx) => Promise<T>) =>
        backend.prisma.$transaction((tx) => fn(tx as unknown as Tx));

      it('commits entries together with the caller writes', async () => {
        const threadId = newThreadId();
        await inTransaction(async (tx) => {
          const result = await store.appendIn(tx, {
            threadId,
            expectedIndex: 0,
            entries: makeBatch(0, 2),
          });
          expect(result).toEqual({ ok: true, value: { length: 2 } });
          await tx.thread.update({ where: { id: threadId }, data: { stateHash: 'after-2' } });
        });
        expect(await threadRow(threadId)).toMatchObject({ logLength: 2, stateHash: 'after-2' });
        expect(await store.read(threadId)).toEqual(makeBatch(0, 2));
      });

      it('lands nothing when the caller rolls back', async () => {
        const threadId = newThreadId();
        const boom = new Error('caller failed after appending');
        await expect(
          inTransaction(async (tx) => {
            await store.appendIn(tx, { threadId, expectedIndex: 0, entries: makeBatch(0, 2) });
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect(await store.length(threadId)).toBe(0);
        expect(await threadRow(threadId)).toBeNull();
      });

      it('returns expected failures as results, and explains a thrown duplicate id', async () => {
        const threadId = newThreadId();
        await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 2) });
        const stale = await inTransaction((tx) =>
          store.appendIn(tx, { threadId, expectedIndex: 1, entries: makeBatch(1, 1, 'x') }),
        );
        expect(stale).toMatchObject({ ok: false, error: { code: 'CONFLICT', actualIndex: 2 } });

        const input = { threadId, expectedIndex: 2, entries: [makeEntry(2, 'e', { id: 'e-0' })] };
        const thrown = await inTransaction((tx) => store.appendIn(tx, input)).catch(
          (error: unknown) => error,
        );
        expect(await store.explainAppendFailure(input, thrown)).toMatchObject({
          ok: false,
          error: { code: 'VALIDATION_FAILED', issues: [{ path: '$.entries[0].id' }] },
        });
        const other = new Error('not a constraint violation');
        await expect(store.explainAppendFailure(input, other)).rejects.toBe(other);
        expect(await store.length(threadId)).toBe(2);
      });
    });
  });
}

describe('toRecordedAt', () => {
  it('normalises RFC 3339 to UTC milliseconds in each provider column format', () => {
    expect(toRecordedAt('2026-03-01T12:34:56.789+02:00', 'postgres')).toBe(
      '2026-03-01T10:34:56.789Z',
    );
    expect(toRecordedAt('2026-03-01T10:34:56.789Z', 'sqlite')).toBe(
      '2026-03-01T10:34:56.789+00:00',
    );
    expect(toRecordedAt('2026-03-01t10:34:56.7891234z', 'postgres')).toBe(
      '2026-03-01T10:34:56.789Z',
    );
    expect(toRecordedAt('2016-12-31T23:59:60.250Z', 'postgres')).toBe('2017-01-01T00:00:00.250Z');
    expect(toRecordedAt('0000-06-01T00:00:00.000Z', 'postgres')).toBe('0001-01-01T00:00:00.000Z');
    expect(toRecordedAt('9999-12-31T23:59:59.999-02:00', 'postgres')).toBe(
      '9999-12-31T23:59:59.999Z',
    );
  });
});

const tmpRoot = mkdtempSync(join(tmpdir(), 'weft-event-log-prisma-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
let counter = 0;

describePrismaStore('sqlite', async () => {
  const path = join(tmpRoot, `db-${++counter}`, 'weft.db');
  await migrate(`file:${path}`);
  const prisma = createSqlitePrisma(path);
  return {
    prisma,
    makeStore: (options) => createPrismaEventLogStore(prisma, 'sqlite', options),
    cleanup: () => prisma.$disconnect(),
  };
});

describeWithPostgres('prisma event-log store', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.url);
  });
  afterAll(async () => {
    await database?.drop();
  });

  describePrismaStore('postgres', async () => {
    const prisma: PostgresPrismaClient = createPostgresPrisma(database.url);
    return {
      // Same model API as the SQLite client; the tests use only what both share.
      prisma: prisma as unknown as SqlitePrismaClient,
      makeStore: (options) => createPrismaEventLogStore(prisma, 'postgres', options),
      cleanup: () => prisma.$disconnect(),
    };
  });
});
