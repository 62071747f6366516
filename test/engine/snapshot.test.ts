import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { getNode } from '../../src/core/graph/index.js';
import type { JsonValue } from '../../src/core/json.js';
import { replay } from '../../src/core/log/index.js';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import {
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  type ThreadState,
} from '../../src/core/thread/index.js';
import {
  THREAD_SNAPSHOT_DELTA_FORMAT,
  THREAD_SNAPSHOT_FORMAT,
  type ThreadSnapshotDelta,
} from '../../src/core/thread/snapshot.js';
import { createEngine, type Engine, type SnapshotPolicy } from '../../src/engine/index.js';
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

  /** 15 commands on a new thread: node appends, and a run whose memory changes. */
  async function populate(on: Engine, id: string): Promise<string> {
    const threadId = must(await on.createThread({ threadId: id })).threadId;
    const { runId } = must(await on.startRun({ threadId, goal: 'g', maxIterations: 100 }));
    for (let i = 0; i < 14; i++) {
      if (i % 3 === 2) {
        must(
          await on.dispatch({
            runId,
            action: { type: 'update_memory', payload: { updates: { [`k${i % 4}`]: i } } },
          }),
        );
      } else {
        must(
          await on.appendNodes({
            threadId,
            nodes: [
              { kind: 'inference', payload: { i }, runId },
              ...(i % 2 === 0 ? [{ kind: 'tool_call' as const, payload: { i, t: true } }] : []),
            ],
          }),
        );
      }
    }
    return threadId;
  }

  beforeEach(async () => {
    rejected = [];
    found = 0;
    engine = await openEngine(backend, {
      snapshots: POLICY,
      onSnapshotRejected: (_thread, index, reason) => rejected.push({ index, reason }),
    });
    threadId = await populate(engine, 'snap');
    length = must(await engine.getState(threadId)).length;
  });
  afterEach(async () => {
    await engine.close();
  });

  /** Every stateAt answer, from an engine with a cold cache on the same database. */
  async function allStates(policy: SnapshotPolicy = POLICY, id = threadId) {
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
      snapshots: policy,
      onSnapshotRejected: (_thread, index, reason) => rejected.push({ index, reason }),
    });
    const out = [];
    const last = must(await fresh.getState(id)).length;
    for (let at = 0; at <= last; at++) {
      out.push(comparableState(must(await fresh.stateAt(id, at)).state));
    }
    return out;
  }

  const rows = (id = threadId) =>
    sql<SnapshotRowText>(
      engine,
      'SELECT "log_index", "state_hash", "checksum", "state" FROM "snapshot" WHERE "thread_id" = ? ORDER BY "log_index"',
      id,
    );

  const formatOf = (row: SnapshotRowText) => (JSON.parse(row.state) as { format: string }).format;

  it('writes one full snapshot, then deltas against it holding only the changed runs', async () => {
    const [full, ...deltas] = await rows();
    expect(formatOf(full!)).toBe(THREAD_SNAPSHOT_FORMAT);
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    const runOf = (text: string) => (JSON.parse(text) as { runs: Array<[string, unknown]> }).runs;
    const [[runId, runAtFull]] = runOf(full!.state) as [[string, unknown]];
    const entries = await engine.store.readEntries(threadId);
    let changedSome = false;
    for (const delta of deltas) {
      expect(formatOf(delta)).toBe(THREAD_SNAPSHOT_DELTA_FORMAT);
      const parsed = JSON.parse(delta.state) as ThreadSnapshotDelta;
      expect(parsed.base).toEqual({ length: Number(full!.log_index), checksum: full!.checksum });
      expect(parsed.runOrderAdded).toEqual([]);
      // The run is in a delta exactly when it differs from the full snapshot's (per the log).
      const replayed = must(
        replay(createThreadMachine(), entries.slice(0, Number(delta.log_index))),
      ).state;
      const run = replayed.runs.get(runId);
      const changed = canonicalJson(run ?? null) !== canonicalJson(runAtFull as JsonValue);
      changedSome ||= changed;
      expect(parsed.runs).toEqual(changed ? [[runId, run]] : []);
    }
    expect(changedSome).toBe(true);
    // Every 2nd snapshot full: the ones at 8 (and the node points in between) are full again.
    const everyOther = await openEngine(backend, { snapshots: { ...POLICY, fullEvery: 2 } });
    try {
      const other = await populate(everyOther, 'other');
      const formats = (
        await sql<SnapshotRowText>(
          everyOther,
          'SELECT "log_index", "state_hash", "checksum", "state" FROM "snapshot" WHERE "thread_id" = ? ORDER BY "log_index"',
          other,
        )
      ).map((r) => [Number(r.log_index), formatOf(r)]);
      expect(formats).toContainEqual([8, THREAD_SNAPSHOT_FORMAT]);
      expect(formats.filter(([, f]) => f === THREAD_SNAPSHOT_DELTA_FORMAT).length).toBeGreaterThan(
        0,
      );
    } finally {
      await everyOther.close();
    }
  });

  it('reads full-only snapshots (the format of migration 0003) alike', async () => {
    const legacy = createEngine({
      store: engine.store,
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds('legacy'),
      snapshots: { ...POLICY, fullEvery: 1 },
    });
    const id = await populate(legacy, 'legacy');
    const written = await rows(id);
    expect(written.length).toBeGreaterThanOrEqual(4);
    expect(written.every((r) => formatOf(r) === THREAD_SNAPSHOT_FORMAT)).toBe(true);
    const withSnapshots = await allStates(POLICY, id);
    expect(rejected).toEqual([]);
    expect(found).toBeGreaterThan(written.length);
    await sql(engine, 'DELETE FROM "snapshot" WHERE "thread_id" = ?', id);
    expect(await allStates(POLICY, id)).toEqual(withSnapshots);
  });

  it('writes a full snapshot first after a restart, then deltas against that one', async () => {
    const before = (await rows()).length;
    const restarted = createEngine({
      store: engine.store,
      clock: createSimulatedClock('2026-03-02T00:00:00.000Z', 1000),
      ids: createSequentialIds('restart'),
      snapshots: POLICY,
    });
    for (let i = 0; i < 8; i++) {
      must(await restarted.appendNodes({ threadId, nodes: [{ kind: 'answer', payload: { i } }] }));
    }
    const added = (await rows()).slice(before);
    expect(added.map(formatOf)).toEqual([
      THREAD_SNAPSHOT_FORMAT,
      ...added.slice(1).map(() => THREAD_SNAPSHOT_DELTA_FORMAT),
    ]);
    expect(added.length).toBeGreaterThanOrEqual(2);
    const base = (JSON.parse(added[1]!.state) as ThreadSnapshotDelta).base;
    expect(base).toEqual({ length: Number(added[0]!.log_index), checksum: added[0]!.checksum });
    const withSnapshots = await allStates();
    expect(rejected).toEqual([]);
    await sql(engine, 'DELETE FROM "snapshot"');
    expect(await allStates()).toEqual(withSnapshots);
  });

  it('ignores a delta that names another delta as its base', async () => {
    const reference = await allStates();
    const [, second, third] = await rows();
    const chained = JSON.parse(third!.state) as ThreadSnapshotDelta;
    chained.base = { length: Number(second!.log_index), checksum: second!.checksum };
    const text = canonicalJson(chained as unknown as JsonValue);
    const { sha256Hex } = await import('../../src/core/hash.js');
    await sql(
      engine,
      'UPDATE "snapshot" SET "state" = ?, "checksum" = ? WHERE "thread_id" = ? AND "log_index" = ?',
      text,
      sha256Hex(text),
      threadId,
      third!.log_index,
    );
    rejected = [];
    expect(await allStates()).toEqual(reference);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((r) => /not full/.test(r.reason))).toBe(true);
  });

  it('ignores deltas whose full snapshot is gone or changed, answering from the log', async () => {
    const reference = await allStates();
    const [full, second] = await rows();
    // Changed: the full row rewritten as a valid full snapshot of the same state, other bytes.
    const rewritten = `${full!.state.slice(0, -1)},"note":"x"}`;
    const { sha256Hex } = await import('../../src/core/hash.js');
    await sql(
      engine,
      'UPDATE "snapshot" SET "state" = ?, "checksum" = ? WHERE "thread_id" = ? AND "log_index" = ?',
      rewritten,
      sha256Hex(rewritten),
      threadId,
      full!.log_index,
    );
    rejected = [];
    expect(await allStates()).toEqual(reference);
    expect(rejected.some((r) => r.index === Number(second!.log_index))).toBe(true);
    expect(rejected.every((r) => /has changed/.test(r.reason))).toBe(true);
    // Gone.
    await sql(
      engine,
      'DELETE FROM "snapshot" WHERE "thread_id" = ? AND "log_index" = ?',
      threadId,
      full!.log_index,
    );
    rejected = [];
    expect(await allStates()).toEqual(reference);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((r) => /is missing/.test(r.reason))).toBe(true);
  });

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
