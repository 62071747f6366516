/**
 * What the production log store (createLogStore over the thread store) does beyond the shared
 * contract, on SQLite and Postgres: the thread rows it creates and keeps in sync, the stored text
 * and columns, large batches, and fork origins.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import {
  createLogStore,
  type EventLogStore,
  toRecordedAt,
} from '../../src/store/event-log/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPrisma, type SqlitePrismaClient } from '../../src/store/prisma/index.js';
import { openThreadStore, type ThreadStore } from '../../src/store/read-model/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import { makeAwkwardEntry, makeBatch, makeEntry, newThreadId } from './event-log-fixtures.js';

const CLOCK = new Date('2026-04-05T06:07:08.009Z');

interface Backend {
  /** A second client, to look at the rows (both providers share this model API). */
  prisma: SqlitePrismaClient;
  threads: ThreadStore;
  cleanup(): Promise<void>;
}

async function openBackend(url: string): Promise<Backend> {
  const weft = createPrisma(url);
  const threads = openThreadStore(url);
  return {
    prisma: weft.prisma as unknown as SqlitePrismaClient,
    threads,
    cleanup: async () => {
      await threads.close();
      await weft.prisma.$disconnect();
    },
  };
}

function describeLogStore(name: string, open: () => Promise<Backend>): void {
  describe(`production log store on ${name}`, () => {
    let backend: Backend;
    let store: EventLogStore;
    beforeEach(async () => {
      backend = await open();
      store = createLogStore(backend.threads, { now: () => CLOCK });
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

    it('appends to a thread row the engine created, touching only log_length and updated_at', async () => {
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
        updatedAt: CLOCK,
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

    it('splits a large batch over several INSERT statements, and refuses a bad one whole', async () => {
      // 8 columns per row: a statement holds at most 3,750 rows, so 5,000 take two.
      const threadId = newThreadId();
      const entries = makeBatch(0, 5000);
      expect(await store.append({ threadId, expectedIndex: 0, entries })).toEqual({
        ok: true,
        value: { length: 5000 },
      });
      expect(await store.read(threadId)).toEqual(entries);
      const next = makeBatch(5000, 50, 'n');
      next[49] = makeEntry(5049, 'e', { id: 'e-3' });
      const result = await store.append({ threadId, expectedIndex: 5000, entries: next });
      expect(result).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
      expect(await store.length(threadId)).toBe(5000);
      expect(await backend.prisma.logEntry.count({ where: { threadId } })).toBe(5000);
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
  });
}

describe('toRecordedAt', () => {
  it('normalises RFC 3339 to UTC milliseconds within the years 0001-9999', () => {
    const iso = (text: string) => toRecordedAt(text).toISOString();
    expect(iso('2026-03-01T12:34:56.789+02:00')).toBe('2026-03-01T10:34:56.789Z');
    expect(iso('2026-03-01t10:34:56.7891234z')).toBe('2026-03-01T10:34:56.789Z');
    expect(iso('2016-12-31T23:59:60.250Z')).toBe('2017-01-01T00:00:00.250Z');
    expect(iso('0000-06-01T00:00:00.000Z')).toBe('0001-01-01T00:00:00.000Z');
    expect(iso('9999-12-31T23:59:59.999-02:00')).toBe('9999-12-31T23:59:59.999Z');
  });
});

const tmpRoot = mkdtempSync(join(tmpdir(), 'weft-log-store-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
let counter = 0;

describeLogStore('sqlite', async () => {
  const url = `file:${join(tmpRoot, `db-${++counter}`, 'weft.db')}`;
  await migrate(url);
  return openBackend(url);
});

describeWithPostgres('production log store', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.url);
  });
  afterAll(async () => {
    await database?.drop();
  });

  describeLogStore('postgres', () => openBackend(database.url));
});
