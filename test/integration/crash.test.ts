/**
 * Nothing acknowledged is lost, and the log invariants (contiguous indices, hash chain) hold, under SIGKILL, on SQLite and on
 * Postgres. A child process (children/crash-writer.ts) appends batches of BATCH_SIZE nodes to
 * two threads from several concurrent writers and prints a line after every acknowledged
 * append; the parent SIGKILLs it at a seeded random moment, then — before restarting it on the
 * same database — checks that every batch ever acknowledged is in the log at its index with its
 * node ids, that no batch is partial (in the log or in the node read model), that the log is
 * contiguous and verifies strictly, and that the node read model equals the log's nodes. At the
 * end the read models are compared with a replay of the log into an empty database.
 *
 * Settings: WEFT_CRASH_SEED (replays a kill schedule), WEFT_CRASH_KILLS (default 20).
 */
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/index.js';
import { projectLog } from '../../src/engine/index.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type BackendName,
  engineOn,
  expectSoundLog,
  type FreshDatabase,
  freshDatabase,
  loggedNodes,
  must,
  seededRandom,
  spawnLineChild,
} from './support.js';

const CHILD = join(import.meta.dirname, 'children', 'crash-writer.ts');
const KILLS = Number(process.env.WEFT_CRASH_KILLS ?? 20);
const BATCH_SIZE = 5;
const WRITERS_PER_THREAD = 4;
const THREADS = ['crash-a', 'crash-b'];
const MIN_DELAY_MS = 50;
const MAX_DELAY_MS = 400;
const TIMEOUT_MS = 240_000;

interface Ack {
  t: 'ack';
  threadId: string;
  batch: string;
  index: number;
  nodes: string[];
}

interface BatchInLog {
  indices: Set<number>;
  parts: number[];
  nodes: string[];
}

/** Every check of one restart point; returns the number of batches in the log. */
async function expectDurableAndWhole(
  engine: Engine,
  threadId: string,
  acks: readonly Ack[],
): Promise<{ batches: number; entries: number }> {
  const entries = await expectSoundLog(engine, threadId);
  const nodes = loggedNodes(entries);

  // No partial batch in the log: each batch's BATCH_SIZE parts, all in one entry.
  const batches = new Map<string, BatchInLog>();
  for (const node of nodes) {
    const payload = node.payload as { batch: string; part: number };
    const batch = batches.get(payload.batch) ?? { indices: new Set(), parts: [], nodes: [] };
    batch.indices.add(node.index);
    batch.parts.push(payload.part);
    batch.nodes.push(node.id);
    batches.set(payload.batch, batch);
  }
  const partial = [...batches].filter(
    ([, b]) => b.indices.size !== 1 || b.parts.join() !== [...Array(BATCH_SIZE).keys()].join(),
  );
  expect(
    partial.map(([id]) => id),
    'batches not whole in the log',
  ).toEqual([]);

  // Every acknowledged batch is present, at its acknowledged index, with its node ids.
  const missing = acks
    .filter((ack) => ack.threadId === threadId)
    .filter((ack) => {
      const batch = batches.get(ack.batch);
      return (
        batch === undefined ||
        !batch.indices.has(ack.index) ||
        batch.nodes.join() !== ack.nodes.join()
      );
    });
  expect(missing, 'acknowledged batches missing or different in the log').toEqual([]);

  // The node read model holds exactly the log's nodes, each at the index of its entry, with
  // contiguous sequences — so no partial batch there either.
  const dump = await engine.store.dumpReadModels([threadId]);
  expect(dump.thread.map((t) => t.logLength)).toEqual([entries.length]);
  const rows = dump.node.map((row) => ({ id: row.id, index: row.logIndex }));
  const expected = nodes.map((node) => ({ id: node.id, index: node.index }));
  const byId = (a: { id: unknown }, b: { id: unknown }) =>
    String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0;
  expect(rows.sort(byId)).toEqual(expected.sort(byId));
  expect(dump.node.map((row) => row.sequence as number).sort((a, b) => a - b)).toEqual(
    nodes.map((_, i) => i + 1),
  );
  return { batches: batches.size, entries: entries.length };
}

function crashLoop(backend: BackendName) {
  let db: FreshDatabase;
  let engine: Engine;

  beforeAll(async () => {
    db = await freshDatabase(backend);
    engine = engineOn(db.url);
    for (const threadId of THREADS) must(await engine.createThread({ threadId }));
  });
  afterAll(async () => {
    await engine?.close();
    await db?.drop();
  });

  it(
    `${KILLS} SIGKILLs under load: every acknowledged batch survives, none is partial, the log verifies`,
    async () => {
      const seed = Number(process.env.WEFT_CRASH_SEED ?? randomInt(2 ** 31));
      console.info(`[crash ${backend}] seed ${seed} (replay with WEFT_CRASH_SEED=${seed})`);
      const random = seededRandom(seed);
      const acks: Ack[] = [];
      const perRun: number[] = [];

      for (let run = 0; run < KILLS; run++) {
        const delay = MIN_DELAY_MS + Math.floor(random() * (MAX_DELAY_MS - MIN_DELAY_MS + 1));
        const child = spawnLineChild(CHILD, [
          db.url,
          THREADS.join(','),
          String(WRITERS_PER_THREAD),
          String(BATCH_SIZE),
          `r${run}`,
        ]);
        // The child is appending once its first acknowledgement arrives.
        await child.waitForLine((line) => line.startsWith('{"t":"ack"'));
        await sleep(delay);
        child.process.kill('SIGKILL');
        const exit = await child.exited;
        const messages = child.lines.map((line) => JSON.parse(line) as { t: string });
        const context = `run ${run} (seed ${seed}, kill after ${delay} ms)`;
        expect(
          messages.filter((m) => m.t === 'error'),
          `${context}: child errors; stderr: ${child.stderr()}`,
        ).toEqual([]);
        expect(exit.signal, `${context}: the child ended before the kill`).toBe('SIGKILL');
        const runAcks = messages.filter((m): m is Ack => m.t === 'ack');
        acks.push(...runAcks);
        perRun.push(runAcks.length);

        for (const threadId of THREADS) {
          await expectDurableAndWhole(engine, threadId, acks);
        }
      }

      // The read models equal a replay of the final logs into an empty database.
      const replayDb = await freshDatabase(backend);
      const replayed = engineOn(replayDb.url);
      try {
        for (const threadId of THREADS) {
          const projected = must(projectLog(threadId, await engine.store.readEntries(threadId)));
          must(await replayed.store.commit(projected.changes!));
        }
        expect(await replayed.store.dumpReadModels(THREADS)).toEqual(
          await engine.store.dumpReadModels(THREADS),
        );
      } finally {
        await replayed.close();
        await replayDb.drop();
      }

      const totals = [];
      for (const threadId of THREADS) {
        totals.push(await expectDurableAndWhole(engine, threadId, acks));
      }
      const inLog = totals.reduce((n, t) => n + t.batches, 0);
      console.info(
        `[crash ${backend}] ${KILLS} kills, ${acks.length} acknowledged batches ` +
          `(per run: ${perRun.join(' ')}), ${inLog} batches in the logs ` +
          `(${inLog - acks.length} committed but killed before acknowledging), ` +
          `log lengths ${totals.map((t) => t.entries).join(', ')}`,
      );
      expect(acks.length).toBeGreaterThanOrEqual(KILLS);
    },
    TIMEOUT_MS,
  );
}

describe('crash safety under SIGKILL [sqlite]', () => {
  crashLoop('sqlite');
});

describeWithPostgres('crash safety under SIGKILL', () => {
  crashLoop('postgres');
});
