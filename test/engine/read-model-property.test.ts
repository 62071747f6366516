import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type EngineOptions, type SnapshotPolicy } from '../../src/engine/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import {
  createThreadStore,
  openThreadStore,
  type ReadModelDump,
  type ThreadStore,
} from '../../src/store/read-model/index.js';
import { describeWithPostgres } from '../support/services.js';
import { execute, sequenceArb } from './commands-model.js';
import { comparable, expectedReadModels, sortedLikeDump } from './oracle.js';
import { comparableState } from './snapshot-support.js';
import {
  type Backend,
  must,
  postgresBackend,
  rebuildInto,
  sqliteBackend,
  useBackend,
} from './support.js';

/** 200 generated sequences, each also answered twice with and without snapshots: minutes. */
const PROPERTY_TIMEOUT_MS = 900_000;

/** Snapshots every 2 entries or 3 nodes: the generated logs (up to ~12 commands) get several. */
const DENSE_SNAPSHOTS: SnapshotPolicy = { entries: 2, nodes: 3 };

/**
 * The read models are a function of the log. After any sequence of commands, the
 * rows the engine wrote entry by entry equal (a) what the core's readers say about the final
 * state (an oracle independent of the projector) and (b) the rows rebuilt by replaying each
 * thread's log into an empty database; and every log verifies strictly. Snapshots are caches:
 * the state at random indexes and the loaded state are the same after `DELETE FROM snapshot`.
 */
function readModelProperty(backend: Backend, numRuns: number) {
  let sourceUrl: string;
  let source: ThreadStore;
  let target: ThreadStore;
  let clearTarget: () => Promise<void>;

  beforeAll(async () => {
    sourceUrl = await backend.freshUrl();
    source = openThreadStore(sourceUrl);
    const weft = createPrisma(await backend.freshUrl());
    target = createThreadStore(weft);
    const prisma = weft.prisma as unknown as {
      thread: { deleteMany(): Promise<unknown> };
      idempotencyRecord: { deleteMany(): Promise<unknown> };
    };
    clearTarget = async () => {
      // Every read-model table cascades from thread.
      await prisma.thread.deleteMany();
      await prisma.idempotencyRecord.deleteMany();
    };
  });
  afterAll(async () => {
    await source?.close();
    await target?.close();
  });

  it(
    `read models equal a replay of the log into an empty database (${numRuns} sequences)`,
    async () => {
      const started = performance.now();
      const outcomes = new Map<string, number>();
      const rejected: string[] = [];
      let sequence = 0;
      let snapshotsDropped = 0;
      let snapshotsRead = 0;
      // Counts the snapshot rows the engines get from the store (so the test knows they are used).
      const counting: ThreadStore = {
        ...source,
        findSnapshots: async (threadId, atMost, limit) => {
          const rows = await source.findSnapshots(threadId, atMost, limit);
          snapshotsRead += rows.length;
          return rows;
        },
      };
      const engineOptions = (): EngineOptions => ({
        store: counting,
        clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 60_000),
        ids: createSequentialIds(`s${sequence}`),
        snapshots: DENSE_SNAPSHOTS,
        onSnapshotRejected: (threadId, index, reason) =>
          rejected.push(`${threadId}@${index}: ${reason}`),
      });
      const picks = fc.array(fc.nat(), { minLength: 3, maxLength: 3 });
      await fc.assert(
        fc.asyncProperty(sequenceArb(12), picks, async (commands, indexPicks) => {
          sequence++;
          const engine = createEngine(engineOptions());
          const run = await execute(engine, commands);
          for (const outcome of run.outcomes) {
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          }
          for (const threadId of run.threads) {
            expect(must(await engine.verify(threadId, { strict: true }))).toMatchObject({
              ok: true,
            });
          }
          const oracle: ReadModelDump[] = [];
          for (const threadId of run.threads) {
            oracle.push(expectedReadModels(threadId, must(await engine.getState(threadId))));
          }
          const merged = Object.fromEntries(
            Object.keys(oracle[0]!).map((table) => [
              table,
              oracle.flatMap((d) => d[table as keyof ReadModelDump]),
            ]),
          ) as ReadModelDump;
          expect(comparable(await source.dumpReadModels(run.threads))).toEqual(
            sortedLikeDump(merged),
          );
          await clearTarget();
          await rebuildInto(source, target, run.threads);
          expect(await target.dumpReadModels()).toEqual(await source.dumpReadModels(run.threads));

          // Snapshots change no answer: the states at random indexes and the loaded state are the
          // same before and after dropping every snapshot (each time from a cold cache).
          const answers = async () => {
            const fresh = createEngine(engineOptions());
            const out: unknown[] = [];
            for (const threadId of run.threads) {
              const loaded = must(await fresh.getState(threadId));
              out.push(comparableState(loaded));
              for (const pick of indexPicks) {
                const at = pick % (loaded.length + 1);
                out.push(at, comparableState(must(await fresh.stateAt(threadId, at)).state));
              }
            }
            return out;
          };
          const withSnapshots = await answers();
          snapshotsDropped += await dropSnapshots(sourceUrl, run.threads);
          expect(await answers()).toEqual(withSnapshots);
        }),
        { numRuns },
      );
      expect(rejected).toEqual([]);
      expect(snapshotsDropped).toBeGreaterThan(numRuns / 2);
      expect(snapshotsRead).toBeGreaterThan(numRuns / 2);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const summary = [...outcomes].sort().map(([k, n]) => `${k}=${n}`);
      console.info(
        `[${backend.name}] ${numRuns} sequences in ${seconds} s; ${summary.join(' ')}; ` +
          `${snapshotsDropped} snapshots dropped, ${snapshotsRead} read`,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
}

/** `DELETE FROM snapshot` for the given threads; returns the number of rows deleted. */
async function dropSnapshots(url: string, threadIds: readonly string[]): Promise<number> {
  const { prisma } = createPrisma(url);
  try {
    const raw = prisma as unknown as {
      $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
    };
    const marks = threadIds.map((_, i) => (url.startsWith('file:') ? '?' : `$${i + 1}`));
    return await raw.$executeRawUnsafe(
      `DELETE FROM "snapshot" WHERE "thread_id" IN (${marks.join(', ')})`,
      ...threadIds,
    );
  } finally {
    await prisma.$disconnect();
  }
}

describe('read-model property [sqlite]', () => {
  readModelProperty(useBackend(sqliteBackend()), 200);
});

describeWithPostgres('read-model property', () => {
  readModelProperty(useBackend(postgresBackend()), 200);
});
