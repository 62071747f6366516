import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getNode } from '../../src/core/graph/index.js';
import { replay } from '../../src/core/log/index.js';
import {
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  type ThreadState,
} from '../../src/core/thread/index.js';
import { createEngine, type SnapshotPolicy } from '../../src/engine/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { describeWithPostgres } from '../support/services.js';
import { comparableState } from './snapshot-support.js';
import {
  type Backend,
  must,
  openEngine,
  postgresBackend,
  sqliteBackend,
  type TestEngine,
  useBackend,
} from './support.js';

const NOW = '2026-03-02T00:00:00.000Z';

/** A snapshot after every 4th entry (and every 6th node). */
const POLICY: SnapshotPolicy = { entries: 4, nodes: 6 };

interface SnapshotRowText {
  log_index: number;
  state_hash: string;
  checksum: string;
  state: string;
}

/** Raw SQL on the engine's database, `?` placeholders turned into `$n` on Postgres. */
async function sql<T = unknown>(engine: TestEngine, text: string, ...values: unknown[]) {
  const { prisma } = createPrisma(engine.url);
  const raw = prisma as unknown as {
    $queryRawUnsafe<R>(query: string, ...values: unknown[]): Promise<R>;
    $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  };
  let n = 0;
  const query = engine.url.startsWith('file:') ? text : text.replace(/\?/g, () => `$${++n}`);
  try {
    return /^\s*select/i.test(query)
      ? await raw.$queryRawUnsafe<T[]>(query, ...values)
      : ((await raw.$executeRawUnsafe(query, ...values)) as unknown as T[]);
  } finally {
    await prisma.$disconnect();
  }
}

function snapshotSuite(backend: Backend) {
  let engine: TestEngine;
  let threadId: string;
  let length: number;
  let rejected: Array<{ index: number; reason: string }>;
  let found: number;

  beforeEach(async () => {
    rejected = [];
    found = 0;
    engine = await openEngine(backend, {
      snapshots: POLICY,
      onSnapshotRejected: (_thread, index, reason) => rejected.push({ index, reason }),
    });
    threadId = must(await engine.createThread({ threadId: 'snap' })).threadId;
    const { runId } = must(await engine.startRun({ threadId, goal: 'g', maxIterations: 100 }));
    for (let i = 0; i < 14; i++) {
      if (i % 3 === 2) {
        must(
          await engine.dispatch({
            runId,
            action: { type: 'update_memory', payload: { updates: { [`k${i % 4}`]: i } } },
          }),
        );
      } else {
        must(
          await engine.appendNodes({
            threadId,
            nodes: [
              { kind: 'inference', payload: { i }, runId },
              ...(i % 2 === 0 ? [{ kind: 'tool_call' as const, payload: { i, t: true } }] : []),
            ],
          }),
        );
      }
    }
    length = must(await engine.getState(threadId)).length;
  });
  afterEach(async () => {
    await engine.close();
  });

  /** Every stateAt answer, from an engine with a cold cache on the same database. */
  async function allStates() {
    const store = engine.store;
    const fresh = createEngine({
      store: {
        ...store,
        findSnapshots: async (id, atMost, limit) => {
          const rows = await store.findSnapshots(id, atMost, limit);
          found += rows.length;
          return rows;
        },
      },
      snapshots: POLICY,
      onSnapshotRejected: (_thread, index, reason) => rejected.push({ index, reason }),
    });
    const out = [];
    for (let at = 0; at <= length; at++) {
      out.push(comparableState(must(await fresh.stateAt(threadId, at)).state));
    }
    return out;
  }

  const rows = () =>
    sql<SnapshotRowText>(
      engine,
      'SELECT "log_index", "state_hash", "checksum", "state" FROM "snapshot" WHERE "thread_id" = ? ORDER BY "log_index"',
      threadId,
    );

  it('writes snapshots at the policy points', async () => {
    const indexes = (await rows()).map((r) => Number(r.log_index));
    expect(indexes.length).toBeGreaterThanOrEqual(4);
    for (const index of indexes) expect(index).toBeLessThanOrEqual(length);
    expect(indexes).toContain(4);
    expect(indexes).toContain(8);
    expect(indexes).toContain(12);
  });

  it('answers stateAt the same with and without snapshots, and uses them', async () => {
    const withSnapshots = await allStates();
    expect(rejected).toEqual([]);
    expect(found).toBeGreaterThan(length / 2);
    await sql(engine, 'DELETE FROM "snapshot"');
    found = 0;
    expect(await allStates()).toEqual(withSnapshots);
    expect(found).toBe(0);
  });

  it('gives states that live on like replayed ones: later entries and branches apply alike', async () => {
    const entries = await engine.store.readEntries(threadId);
    const machine = createThreadMachine();
    const fresh = createEngine({ store: engine.store, snapshots: POLICY });
    for (const at of [5, 9, 13]) {
      // Restored from the snapshot at 4, 8, 12 plus one entry replayed on top.
      let restored = must(await fresh.stateAt(threadId, at)).state;
      const replayed = must(replay(machine, entries.slice(0, at))).state;
      expect(comparableState(restored)).toEqual(comparableState(replayed));
      // Two branches off the restored state (the second copies the storage the first extended).
      const branch = (s: ThreadState, text: string) => {
        const planned = must(planAppendNodes(s, [{ kind: 'answer', payload: { text } }], NOW));
        return must(commitEvent(s, planned, { id: `b-${text}`, recordedAt: NOW })).state;
      };
      const [a, b] = [branch(restored, 'a'), branch(restored, 'b')];
      const [a2, b2] = [branch(replayed, 'a'), branch(replayed, 'b')];
      expect(comparableState(a)).toEqual(comparableState(a2));
      expect(comparableState(b)).toEqual(comparableState(b2));
      expect(getNode(b.graph, a.graph.frontier[0]!)).toBeUndefined();
      // The rest of the log applies to the restored state as to the replayed one.
      for (const entry of entries.slice(at)) {
        const [next] = must(machine.apply(restored, entry));
        restored = next;
      }
      expect(comparableState(restored)).toEqual(
        comparableState(must(await engine.getState(threadId))),
      );
    }
  });

  it('detects and ignores a corrupted row (checksum), answering from the log', async () => {
    const reference = await allStates();
    const [first] = await rows();
    const corrupted = first!.state.replace('"inputTokens":0', '"inputTokens":7');
    expect(corrupted).not.toBe(first!.state);
    await sql(
      engine,
      'UPDATE "snapshot" SET "state" = ? WHERE "thread_id" = ? AND "log_index" = ?',
      corrupted,
      threadId,
      first!.log_index,
    );
    rejected = [];
    expect(await allStates()).toEqual(reference);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((r) => r.index === Number(first!.log_index))).toBe(true);
    expect(rejected[0]!.reason).toMatch(/checksum/);
  });

  it('ignores a snapshot that does not match the log (a row moved to another index)', async () => {
    const reference = await allStates();
    const [first, second] = await rows();
    // The second snapshot's content and hash, filed at the first one's index: the row is
    // self-consistent except for its index, and the log entry there has another state hash.
    await sql(
      engine,
      'UPDATE "snapshot" SET "state" = ?, "checksum" = ?, "state_hash" = ? WHERE "thread_id" = ? AND "log_index" = ?',
      second!.state,
      second!.checksum,
      second!.state_hash,
      threadId,
      first!.log_index,
    );
    rejected = [];
    expect(await allStates()).toEqual(reference);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected[0]!.reason).toMatch(/index and state hash|state hash/);
  });

  it('ignores a well-formed snapshot whose state hash is not the log entry’s', async () => {
    const reference = await allStates();
    const [first] = await rows();
    const snapshot = JSON.parse(first!.state) as { stateHash: string };
    const forged = first!.state.replace(snapshot.stateHash, '0'.repeat(64));
    const { sha256Hex } = await import('../../src/core/hash.js');
    await sql(
      engine,
      'UPDATE "snapshot" SET "state" = ?, "checksum" = ?, "state_hash" = ? WHERE "thread_id" = ? AND "log_index" = ?',
      forged,
      sha256Hex(forged),
      '0'.repeat(64),
      threadId,
      first!.log_index,
    );
    rejected = [];
    expect(await allStates()).toEqual(reference);
    expect(rejected.some((r) => /log entry/.test(r.reason))).toBe(true);
  });

  it('ignores garbage with a matching checksum, and verify(strict) never reads snapshots', async () => {
    const reference = await allStates();
    const { sha256Hex } = await import('../../src/core/hash.js');
    await sql(
      engine,
      'UPDATE "snapshot" SET "state" = ?, "checksum" = ? WHERE "thread_id" = ?',
      '{"format":"something else"}',
      sha256Hex('{"format":"something else"}'),
      threadId,
    );
    rejected = [];
    expect(await allStates()).toEqual(reference);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected[0]!.reason).toMatch(/format/);
    expect(must(await engine.verify(threadId, { strict: true }))).toMatchObject({
      ok: true,
      checkedEntries: length,
    });
  });
}

describe('snapshots [sqlite]', () => {
  snapshotSuite(useBackend(sqliteBackend()));
});

describeWithPostgres('snapshots', () => {
  snapshotSuite(useBackend(postgresBackend()));
});
