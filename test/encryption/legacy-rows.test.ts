/**
 * Turning encryption on over a database written without it: rows stored in plain text stay
 * readable and are still found by their keys — memory(key:), resource versions, an idempotent
 * retry — next to rows written sealed afterwards; a head or spend row rewritten under the key
 * replaces its plain twin instead of standing beside it. On SQLite and Postgres.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { createReads } from '../../src/reads/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { createTestDatabase, describeWithPostgres } from '../support/services.js';

const KEY = randomBytes(32);
const RESOURCE = 'file:///notes/plain-then-sealed.txt';
const TYPE = 'preference';
const MEMORY_KEY = 'tone';
const MODEL = 'model-plain-then-sealed';

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/** Everything written without a key: what a keyed store must still find. */
async function writePlain(url: string) {
  const engine = await openEngine(url);
  try {
    const { threadId } = must(await engine.createThread({ metadata: { written: 'plain' } }));
    const v1 = must(
      await engine.appendNodes({
        threadId,
        nodes: [
          {
            kind: 'resource',
            payload: { v: 1 },
            resourceKey: RESOURCE,
            taint: { source: 'retrieval', toolName: 'search' },
          },
        ],
      }),
    ).nodes[0]!;
    const remembered = must(
      await engine.remember({
        threadId,
        type: TYPE,
        key: MEMORY_KEY,
        content: 'terse',
        idempotencyKey: 'remember-plain',
      }),
    );
    must(await engine.startRun({ threadId, goal: 'g', runId: 'r1' }));
    must(await engine.recordUsage({ runId: 'r1', model: MODEL, inputTokens: 1, outputTokens: 2 }));
    const { length } = must(await engine.getState(threadId));
    // More threads with plain memory heads, rewritten together under the key (group commit).
    const others: string[] = [];
    for (let i = 0; i < 6; i++) {
      const other = must(await engine.createThread({})).threadId;
      must(await engine.remember({ threadId: other, type: TYPE, key: MEMORY_KEY, content: i }));
      others.push(other);
    }
    return { threadId, v1: v1.id, memory: remembered, length, others };
  } finally {
    await engine.close();
  }
}

async function storedColumn(url: string, sql: string): Promise<string[]> {
  const weft = createPrisma(url);
  try {
    const rows = await (
      weft.prisma as unknown as {
        $queryRawUnsafe<T>(q: string): Promise<T>;
      }
    ).$queryRawUnsafe<Array<{ v: string }>>(sql);
    return rows.map((r) => r.v);
  } finally {
    await weft.prisma.$disconnect();
  }
}

async function scenario(url: string): Promise<void> {
  const plain = await writePlain(url);
  expect(await storedColumn(url, 'SELECT "resource_key" AS v FROM "resource_head"')).toContain(
    RESOURCE,
  );

  const engine: Engine = await openEngine(url, { storeOptions: { encryptionKey: KEY } });
  const reads = createReads(engine, { databaseUrl: url });
  try {
    const { threadId } = plain;
    // Plain rows are found by their keys and read back.
    const [thread] = await reads.threads([threadId]);
    expect(thread?.metadata).toEqual({ written: 'plain' });
    const before = await reads.memory(threadId, { key: MEMORY_KEY });
    expect(before.map((m) => [m.type, m.key, m.node.id])).toEqual([
      [TYPE, MEMORY_KEY, plain.memory.node.id],
    ]);
    expect(await reads.memory(threadId, { type: TYPE, key: MEMORY_KEY })).toHaveLength(1);
    const [versions] = await reads.resourceVersions([{ threadId, resourceKey: RESOURCE }]);
    expect(versions!.map((n) => n.id)).toEqual([plain.v1]);
    expect(versions![0]!.taint).toMatchObject({ source: 'retrieval', toolName: 'search' });

    // A retry under the key stored in plain text answers the first result and writes nothing.
    const retried = must(
      await engine.remember({
        threadId,
        type: TYPE,
        key: MEMORY_KEY,
        content: 'terse',
        idempotencyKey: 'remember-plain',
      }),
    );
    expect(retried).toEqual(JSON.parse(JSON.stringify(plain.memory)));
    expect(must(await engine.getState(threadId)).length).toBe(plain.length);

    // New versions of the same keys, written sealed.
    const v2 = must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'resource', payload: { v: 2 }, resourceKey: RESOURCE }],
      }),
    ).nodes[0]!;
    const second = must(
      await engine.remember({
        threadId,
        type: TYPE,
        key: MEMORY_KEY,
        content: 'detailed',
        idempotencyKey: 'remember-sealed',
      }),
    );
    must(await engine.recordUsage({ runId: 'r1', model: MODEL, inputTokens: 3, outputTokens: 4 }));

    // One head per key (the plain twin replaced), versions across both forms, in order.
    const after = await reads.memory(threadId, { key: MEMORY_KEY });
    expect(after.map((m) => m.node.id)).toEqual([second.node.id]);
    expect((after[0]!.node.payload as { content: unknown }).content).toBe('detailed');
    const [history] = await reads.resourceVersions([
      { threadId, resourceKey: `semantic:${TYPE}:${MEMORY_KEY}` },
    ]);
    expect(history!.map((n) => n.id)).toEqual([plain.memory.node.id, second.node.id]);
    const [resource] = await reads.resourceVersions([{ threadId, resourceKey: RESOURCE }]);
    expect(resource!.map((n) => n.id)).toEqual([plain.v1, v2.id]);
    expect(resource!.map((n) => n.isCurrent)).toEqual([false, true]);
    const heads = (await reads.resources(threadId)).map((n) => n.resourceKey).sort();
    expect(heads).toEqual([RESOURCE, `semantic:${TYPE}:${MEMORY_KEY}`].sort());

    const dump = await engine.store.dumpReadModels([threadId]);
    expect(dump.resource_head.map((h) => h.resourceKey).sort()).toEqual(heads);
    expect(
      dump.run_spend.filter((s) => s.dimension === 'model').map((s) => [s.key, s.calls]),
    ).toEqual([[MODEL, 2]]);
    expect(must(await engine.verify(threadId, { strict: true })).ok).toBe(true);

    // Several threads' commits in one transaction (the merged multi-row path) replace their
    // plain twins too.
    for (const other of plain.others) must(await engine.getState(other));
    const stats = engine.store.writerStats();
    const rewritten = await Promise.all(
      plain.others.map((other, i) =>
        engine.remember({ threadId: other, type: TYPE, key: MEMORY_KEY, content: { i } }),
      ),
    );
    if (engine.store.provider === 'sqlite') {
      expect(engine.store.writerStats().merged).toBeGreaterThan(stats.merged);
    }
    for (const [i, other] of plain.others.entries()) {
      const items = await reads.memory(other, { key: MEMORY_KEY });
      expect(items.map((m) => m.node.id)).toEqual([must(rewritten[i]!).node.id]);
      expect(items[0]!.node.payload).toMatchObject({ content: { i } });
    }

    // What is stored now: every head and spend key sealed; the first version's node row keeps
    // its plain key (node rows are never rewritten).
    for (const value of await storedColumn(
      url,
      'SELECT "resource_key" AS v FROM "resource_head"',
    )) {
      expect(value.startsWith('wdet1:'), value).toBe(true);
    }
    for (const value of await storedColumn(url, 'SELECT "key" AS v FROM "run_spend"')) {
      expect(value.startsWith('wdet1:'), value).toBe(true);
    }
    const nodeKeys = await storedColumn(
      url,
      `SELECT "resource_key" AS v FROM "node" WHERE "thread_id" = '${threadId}' AND "resource_key" IS NOT NULL`,
    );
    expect(nodeKeys).toContain(RESOURCE);
    expect(nodeKeys.filter((k) => k.startsWith('wdet1:'))).toHaveLength(2);
    const idempotency = await storedColumn(url, 'SELECT "key" AS v FROM "idempotency_record"');
    expect(idempotency).toContain('remember-plain');
    expect(idempotency.filter((k) => k.startsWith('whmac1:'))).toHaveLength(1);
  } finally {
    await reads.close();
    await engine.close();
  }
}

describe('plain rows under a key [sqlite]', () => {
  const root = mkdtempSync(join(tmpdir(), 'weft-legacy-rows-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds and reads rows written without a key, and replaces plain head and spend rows', async () => {
    await scenario(`file:${join(root, 'legacy.db')}`);
  });
});

describeWithPostgres('plain rows under a key', () => {
  it('finds and reads rows written without a key, and replaces plain head and spend rows', async () => {
    const db = await createTestDatabase();
    try {
      await scenario(db.url);
    } finally {
      await db.drop();
    }
  });
});
