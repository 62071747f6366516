/**
 * Crypto-shredding: with an encryption key each thread's content is sealed under its
 * own data key (`wenc2:`), stored only wrapped in `thread_key`. Deleting the thread — deleteThread
 * or the retention sweeper — removes that key row with the thread's last row, so sealed bytes
 * captured from the database beforehand (as a WAL, a dead tuple or a replica would keep them)
 * open with the master key and the wrapped key before, and with nothing after. A fork keeps
 * reading its shared prefix (under its source's key) after the source is deleted, and the key
 * goes when the fork does. Rows sealed under the master key (`wenc1:`) still read. Both backends.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { importThreadLog } from '../../src/engine/transfer.js';
import { createReads } from '../../src/reads/index.js';
import { createFieldCodec, EncryptionError } from '../../src/store/crypto/index.js';
import { createKeyWrap, threadCodec } from '../../src/store/crypto/thread-keys.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import { rawExecute, rawQuery } from '../../src/store/prisma/raw.js';
import { gcApply, gcReport } from '../../src/store/read-model/gc.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import {
  type Backend,
  must,
  postgresBackend,
  sqliteBackend,
  useBackend,
} from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';

const KEY = randomBytes(32);
const MASTER = createFieldCodec(KEY);
const WRAP = createKeyWrap(KEY);

interface Captured {
  threadId: string;
  wrapped: string;
  payloads: string[];
  entries: string[];
  metadata: string;
  goals: string[];
  /** Deterministic seals: [label, stored]. */
  lookups: Array<[string, string]>;
}

async function keyRow(weft: WeftPrisma, threadId: string): Promise<string | undefined> {
  const [row] = await rawQuery(weft, 'SELECT "wrapped" FROM "thread_key" WHERE "thread_id" = ?', [
    threadId,
  ]);
  return row?.wrapped as string | undefined;
}

/** The thread's sealed bytes as stored (what a copy of the database would hold). */
async function capture(weft: WeftPrisma, threadId: string): Promise<Captured> {
  const column = async (sql: string) =>
    (await rawQuery(weft, sql, [threadId])).map((r) => String(r.v));
  const wrapped = await keyRow(weft, threadId);
  expect(wrapped).toMatch(/^wkey1:/);
  return {
    threadId,
    wrapped: wrapped!,
    payloads: await column('SELECT "payload" AS v FROM "node" WHERE "thread_id" = ?'),
    entries: (await column('SELECT "entry" AS v FROM "log_entry" WHERE "thread_id" = ?')).filter(
      (e) => e !== '',
    ),
    metadata: (await column('SELECT "metadata" AS v FROM "thread" WHERE "id" = ?'))[0]!,
    goals: await column('SELECT "goal" AS v FROM "run" WHERE "thread_id" = ?'),
    lookups: [
      ...(
        await column(
          'SELECT "resource_key" AS v FROM "node" WHERE "thread_id" = ? AND "resource_key" IS NOT NULL',
        )
      ).map((v): [string, string] => ['node.resource_key', v]),
      ...(
        await column(
          'SELECT "semantic_key" AS v FROM "resource_head" WHERE "thread_id" = ? AND "semantic_key" IS NOT NULL',
        )
      ).map((v): [string, string] => ['resource_head.semantic_key', v]),
    ],
  };
}

const sealedValues = (c: Captured) => [...c.payloads, ...c.entries, c.metadata, ...c.goals];

/** Opens every captured value through the wrapped key; returns the plain texts. */
function openCaptured(c: Captured): string[] {
  const codec = threadCodec(MASTER, c.threadId, WRAP.unwrap(c.threadId, c.wrapped));
  return [
    ...sealedValues(c).map((v) => codec.openText(v)),
    ...c.lookups.map(([label, v]) => codec.openEqual(label, v)),
  ];
}

function expectShredded(c: Captured) {
  for (const value of sealedValues(c)) {
    expect(value.startsWith('wenc2:')).toBe(true);
    // The master key alone opens none of them (the thread's key was the only way in).
    expect(() => MASTER.openText(value)).toThrow(EncryptionError);
  }
  for (const [label, value] of c.lookups) {
    expect(value.startsWith('wdet2:')).toBe(true);
    expect(() => MASTER.openEqual(label, value)).toThrow(EncryptionError);
  }
}

function shreddingSuite(backend: Backend) {
  let engine: Engine | undefined;
  let weft: WeftPrisma | undefined;
  afterEach(async () => {
    await engine?.close();
    await weft?.prisma.$disconnect();
    engine = undefined;
    weft = undefined;
  });

  let engineUrl = '';
  const open = async () => {
    const url = await backend.freshUrl();
    engineUrl = url;
    engine = createEngine({
      store: openThreadStore(url, { encryptionKey: KEY }),
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds('id'),
      snapshots: { entries: 2, nodes: 3 },
    });
    weft = createPrisma(url);
    return { engine, weft };
  };

  const grow = async (e: Engine, threadId: string, turns: number) => {
    for (let i = 0; i < turns; i++) {
      must(
        await e.appendNodes({
          threadId,
          nodes: [{ kind: 'inference', payload: { text: `secret ${threadId} ${i}` } }],
        }),
      );
    }
  };

  it('deleting a thread destroys its data key: captured bytes opened before and open no more', async () => {
    const { engine, weft } = await open();
    must(await engine.createThread({ threadId: 'a', metadata: { owner: 'secret-owner' } }));
    await grow(engine, 'a', 5);
    must(await engine.startRun({ threadId: 'a', runId: 'r1', goal: 'secret goal' }));
    must(await engine.remember({ threadId: 'a', type: 'memory', key: 'secretkey', content: 1 }));
    must(await engine.createThread({ threadId: 'b' }));
    await grow(engine, 'b', 2);
    const captured = await capture(weft, 'a');
    expect(captured.payloads.length).toBeGreaterThan(0);
    expect(captured.entries.length).toBeGreaterThan(0);
    expect(captured.lookups.map(([label]) => label).sort()).toEqual([
      'node.resource_key',
      'resource_head.semantic_key',
    ]);
    expectShredded(captured);
    const plain = openCaptured(captured);
    expect(plain.join('\n')).toContain('secret a 4');
    expect(plain.join('\n')).toContain('secret-owner');
    expect(plain.join('\n')).toContain('secret goal');
    expect(plain).toContain('secretkey');
    // Memory is found by its key through the thread's own deterministic seal.
    const reads = createReads(engine, { databaseUrl: engineUrl });
    const memory = await reads.memory('a', { type: 'memory', key: 'secretkey' });
    await reads.close();
    expect(memory.map((m) => m.key)).toEqual(['secretkey']);
    // Another thread's key opens nothing of this one.
    const other = await keyRow(weft, 'b');
    expect(() =>
      threadCodec(MASTER, 'a', WRAP.unwrap('b', other!)).openText(captured.payloads[0]!),
    ).toThrow(EncryptionError);

    must(await engine.deleteThread({ threadId: 'a', idempotencyKey: 'del-a' }));
    expect(await keyRow(weft, 'a')).toBeUndefined();
    expectShredded(captured);
    // The other thread keeps its key and reads as before.
    expect(await keyRow(weft, 'b')).toBe(other);
    expect((await engine.store.readEntries('b')).length).toBe(3);
  });

  it('a fork reads its shared prefix after its source is deleted; the key goes with the fork', async () => {
    const { engine, weft } = await open();
    must(await engine.createThread({ threadId: 's' }));
    await grow(engine, 's', 3);
    must(await engine.remember({ threadId: 's', type: 'memory', key: 'shared', content: 'm' }));
    must(
      await engine.appendNodes({
        threadId: 's',
        nodes: [{ kind: 'resource', payload: { v: 1 }, resourceKey: 'file:///shared.txt' }],
      }),
    );
    await grow(engine, 's', 2);
    must(await engine.forkThread({ threadId: 's', upToIndex: 6, newThreadId: 'f' }));
    await grow(engine, 'f', 2);
    const source = await capture(weft, 's');
    const fork = await capture(weft, 'f');
    expect(fork.wrapped).not.toBe(source.wrapped);
    const before = {
      log: await engine.store.readEntries('f'),
      dump: await engine.store.dumpReadModels(['f']),
      verify: must(await engine.verify('f', { strict: true })),
      state: must(await engine.stateAt('f', 3)).agentState,
    };
    expect(JSON.stringify(before.log)).toContain('secret s 2');
    // Lookups by key in the fork's shared prefix use the source's deterministic seal.
    const lookups = async () => {
      const reads = createReads(engine, { databaseUrl: engineUrl });
      try {
        const memory = await reads.memory('f', { type: 'memory', key: 'shared' });
        const versions = await reads.resourceVersions([
          { threadId: 'f', resourceKey: 'file:///shared.txt' },
        ]);
        const page = await reads.nodePage({
          threadId: 'f',
          take: 10,
          resourceKey: 'file:///shared.txt',
        });
        return { memory, versions, page };
      } finally {
        await reads.close();
      }
    };
    const found = await lookups();
    expect(found.memory.map((m) => m.key)).toEqual(['shared']);
    expect(found.versions.flat().map((n) => n?.resourceKey)).toEqual(['file:///shared.txt']);
    expect(found.page.map((n) => n.resourceKey)).toEqual(['file:///shared.txt']);

    must(await engine.deleteThread({ threadId: 's' }));
    // The shared prefix is sealed under the source's key, which stays while the fork reads it.
    expect(await keyRow(weft, 's')).toBe(source.wrapped);
    expect(await engine.store.readEntries('f')).toEqual(before.log);
    expect(await engine.store.dumpReadModels(['f'])).toEqual(before.dump);
    expect(must(await engine.verify('f', { strict: true }))).toEqual(before.verify);
    expect(must(await engine.stateAt('f', 3)).agentState).toEqual(before.state);
    expect(await lookups()).toEqual(found);

    must(await engine.deleteThread({ threadId: 'f' }));
    expect(await keyRow(weft, 's')).toBeUndefined();
    expect(await keyRow(weft, 'f')).toBeUndefined();
    expectShredded(source);
    expectShredded(fork);
    const [left] = await rawQuery(weft, 'SELECT COUNT(*) AS n FROM "thread_key"', []);
    expect(Number(left?.n)).toBe(0);
  });

  it('an imported thread gets a key of its own; a wrapped key opens only for its thread', async () => {
    const { engine, weft } = await open();
    must(await engine.createThread({ threadId: 'src' }));
    await grow(engine, 'src', 3);
    must(await importThreadLog(engine, 'imp', await engine.store.readEntries('src')));
    const source = await capture(weft, 'src');
    const imported = await capture(weft, 'imp');
    expect(imported.wrapped).not.toBe(source.wrapped);
    expect(openCaptured(imported).join('\n')).toContain('secret src 2');
    expectShredded(imported);
    // The wrapping is bound to the thread: a key row moved to another thread does not unwrap.
    expect(() => WRAP.unwrap('src', imported.wrapped)).toThrow(EncryptionError);
    must(await engine.deleteThread({ threadId: 'imp' }));
    expect(await keyRow(weft, 'imp')).toBeUndefined();
    expect(await keyRow(weft, 'src')).toBe(source.wrapped);
    expectShredded(imported);
  });

  it('the retention sweeper shreds what it deletes', async () => {
    const { engine, weft } = await open();
    // An expiry in the past: the next sweep deletes the thread.
    must(await engine.createThread({ threadId: 'old', expiresAt: '2026-02-01T00:00:00.000Z' }));
    await grow(engine, 'old', 2);
    const captured = await capture(weft, 'old');
    const sweep = must(await engine.deleteExpiredThreads());
    expect(sweep.deleted.map((d) => d.threadId)).toEqual(['old']);
    expect(await keyRow(weft, 'old')).toBeUndefined();
    expectShredded(captured);
  });

  it('gc shreds a data key whose thread row is gone', async () => {
    const { engine, weft } = await open();
    must(await engine.createThread({ threadId: 'kept' }));
    const kept = await keyRow(weft, 'kept');
    await rawExecute(
      weft,
      'INSERT INTO "thread_key" ("thread_id", "wrapped", "created_at") SELECT \'gone\', "wrapped", "created_at" FROM "thread_key" WHERE "thread_id" = ?',
      ['kept'],
    );
    expect((await gcReport(weft)).orphans).toEqual({ thread_key: 1 });
    await gcApply(weft);
    expect(await keyRow(weft, 'gone')).toBeUndefined();
    expect(await keyRow(weft, 'kept')).toBe(kept);
  });

  it('values sealed under the master key (wenc1) and plain ones still read', async () => {
    const { engine, weft } = await open();
    must(await engine.createThread({ threadId: 'm' }));
    const node = must(
      await engine.appendNodes({
        threadId: 'm',
        nodes: [{ kind: 'inference', payload: { text: 'legacy' } }],
      }),
    ).nodes[0]!;
    const reads = async () =>
      (await engine.store.dumpReadModels(['m'])).node.map(
        (n) => (n as { payload: string }).payload,
      );
    const expected = await reads();
    const payload = JSON.stringify({ text: 'legacy' });
    for (const stored of [MASTER.sealText(payload), payload]) {
      await rawExecute(weft, 'UPDATE "node" SET "payload" = ? WHERE "thread_id" = ? AND "id" = ?', [
        stored,
        'm',
        node.id,
      ]);
      expect(await reads()).toEqual(expected);
    }
  });
}

describe('crypto-shredding [sqlite]', () => shreddingSuite(useBackend(sqliteBackend())));
describeWithPostgres('crypto-shredding', () => shreddingSuite(useBackend(postgresBackend())));
