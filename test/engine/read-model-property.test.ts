import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine } from '../../src/engine/index.js';
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
import {
  type Backend,
  must,
  postgresBackend,
  rebuildInto,
  sqliteBackend,
  useBackend,
} from './support.js';

/**
 * DESIGN §2.1: the read models are a function of the log. After any sequence of commands, the
 * rows the engine wrote entry by entry equal (a) what the core's readers say about the final
 * state (an oracle independent of the projector) and (b) the rows rebuilt by replaying each
 * thread's log into an empty database; and every log verifies strictly.
 */
function readModelProperty(backend: Backend, numRuns: number) {
  let source: ThreadStore;
  let target: ThreadStore;
  let clearTarget: () => Promise<void>;

  beforeAll(async () => {
    source = openThreadStore(await backend.freshUrl());
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

  it(`read models equal a replay of the log into an empty database (${numRuns} sequences)`, async () => {
    const started = performance.now();
    const outcomes = new Map<string, number>();
    let sequence = 0;
    await fc.assert(
      fc.asyncProperty(sequenceArb(12), async (commands) => {
        sequence++;
        const engine = createEngine({
          store: source,
          clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 60_000),
          ids: createSequentialIds(`s${sequence}`),
        });
        const run = await execute(engine, commands);
        for (const outcome of run.outcomes) {
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        }
        for (const threadId of run.threads) {
          expect(must(await engine.verify(threadId, { strict: true }))).toMatchObject({ ok: true });
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
      }),
      { numRuns },
    );
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const summary = [...outcomes].sort().map(([k, n]) => `${k}=${n}`);
    console.info(`[${backend.name}] ${numRuns} sequences in ${seconds} s; ${summary.join(' ')}`);
  });
}

describe('read-model property [sqlite]', () => {
  readModelProperty(useBackend(sqliteBackend()), 200);
});

describeWithPostgres('read-model property', () => {
  readModelProperty(useBackend(postgresBackend()), 200);
});
