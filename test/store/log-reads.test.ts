/**
 * Every reader of the log gets the same entries back from packed and sealed rows: the engine's
 * thread store, the API's read queries (`ReadQueries.entries`, behind `Thread.events`) and the
 * production event-log store. A thread written by the engine with one `appendNodes` whose payloads total
 * well over 1,024 characters holds a packed entry; with a key, every row is sealed too. Real
 * SQLite files in a temp dir, and Postgres when it answers.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine } from '../../src/engine/index.js';
import { createLogStore } from '../../src/store/event-log/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPrisma, type SqlitePrismaClient } from '../../src/store/prisma/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { createReadQueries } from '../../src/store/read-model/queries.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';

const KEY = randomBytes(32);
const root = mkdtempSync(join(tmpdir(), 'weft-log-reads-'));
const databases: TestDatabase[] = [];
let n = 0;
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await Promise.all(databases.splice(0).map((db) => db.drop()));
});

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

async function sqliteUrl(): Promise<string> {
  const url = `file:${join(root, `db-${++n}.db`)}`;
  await migrate(url);
  return url;
}

async function postgresUrl(): Promise<string> {
  const db = await createTestDatabase();
  databases.push(db);
  await migrate(db.url);
  return db.url;
}

function describeBackend(name: string, freshUrl: () => Promise<string>) {
  for (const [label, key] of [
    ['plain', undefined],
    ['encrypted', KEY],
  ] as const) {
    describe(`log reads of packed entries: ${name}, ${label}`, () => {
      it('the thread store, ReadQueries.entries and the event-log store read the same entries', async () => {
        const url = await freshUrl();
        const store = openThreadStore(url, key === undefined ? {} : { encryptionKey: key });
        const engine = createEngine({
          store,
          clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
          ids: createSequentialIds('id'),
        });
        const weft = createPrisma(url);
        try {
          const { threadId } = must(await engine.createThread({}));
          const nodes = Array.from({ length: 5 }, (_, i) => ({
            kind: 'tool_result' as const,
            payload: { i, body: `${i} ${'ü∑🙂'.repeat(150)}` },
          }));
          must(await engine.appendNodes({ threadId, nodes }));
          must(
            await engine.appendNodes({
              threadId,
              nodes: [{ kind: 'inference', payload: { s: 1 } }],
            }),
          );
          const texts = await store.readEntryTexts(threadId);
          expect(texts).toHaveLength(3);

          // Entry 1 really is packed (and sealed, with a key): its text column is empty.
          // One model API for both generated clients (the schemas are the same).
          const prisma = weft.prisma as unknown as SqlitePrismaClient;
          const rows = await prisma.logEntry.findMany({
            where: { threadId },
            orderBy: { index: 'asc' },
          });
          expect(rows[1]!.entry).toBe('');
          expect(rows[1]!.packed).not.toBeNull();
          if (key !== undefined) expect(rows[2]!.entry.startsWith('wenc2:')).toBe(true);

          const parsed = texts.map((t) => JSON.parse(t) as Record<string, unknown>);
          expect(JSON.stringify(parsed[1])).toContain(`4 ${'ü∑🙂'.repeat(150)}`);
          expect(texts.map((t, i) => canonicalJson(parsed[i]) === t)).toEqual([true, true, true]);

          const queries = createReadQueries(weft, false, store.codec);
          const served = await queries.entries(threadId, -1, 10);
          expect(served.map((r) => r.entry)).toEqual(texts);
          expect(served.map((r) => r.index)).toEqual([0, 1, 2]);
          expect(served.map((r) => r.entryId)).toEqual(parsed.map((e) => e.id));
          expect(served.map((r) => r.recordedAt.toISOString())).toEqual(
            parsed.map((e) => new Date(e.recordedAt as string).toISOString()),
          );
          expect((await queries.entries(threadId, 0, 1)).map((r) => r.entry)).toEqual([texts[1]]);

          const log = createLogStore(store);
          expect((await log.read(threadId)).map((e) => canonicalJson(e))).toEqual(texts);
          expect((await log.read(threadId, { from: 1, limit: 1 })).map(canonicalJson)).toEqual([
            texts[1],
          ]);
        } finally {
          await weft.prisma.$disconnect();
          await engine.close();
        }
      });
    });
  }
}

describeBackend('sqlite', sqliteUrl);
describeWithPostgres('log reads of packed entries', () => {
  describeBackend('postgres', postgresUrl);
});

describe('event-log store with an encryption codec', () => {
  it('seals what it appends and reads it back verbatim; without the key it refuses', async () => {
    const url = await sqliteUrl();
    const store = openThreadStore(url, { encryptionKey: KEY });
    const weft = createPrisma(url);
    try {
      if (weft.provider !== 'sqlite') throw new Error('expected sqlite');
      const log = createLogStore(store);
      const entry = {
        schemaVersion: 1 as const,
        id: 'evt_0',
        index: 0,
        recordedAt: '2026-01-01T00:00:00.000Z',
        machineId: 'm',
        machineVersion: 'v1',
        event: { type: 'secret', text: 'ZQX-marker' },
      };
      must(await log.append({ threadId: 't', expectedIndex: 0, entries: [entry] }));
      const [row] = await weft.prisma.logEntry.findMany({ where: { threadId: 't' } });
      expect(row!.entry.startsWith('wenc2:')).toBe(true);
      expect(row!.verbatim?.startsWith('wenc2:')).toBe(true);
      expect(JSON.stringify(await log.read('t'))).toBe(JSON.stringify([entry]));
      const keyless = openThreadStore(url);
      try {
        await expect(createLogStore(keyless).read('t')).rejects.toMatchObject({
          code: 'ENCRYPTION_KEY_MISSING',
        });
      } finally {
        await keyless.close();
      }
    } finally {
      await weft.prisma.$disconnect();
      await store.close();
    }
  });
});
