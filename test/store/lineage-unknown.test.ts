/**
 * A lineage looked up before its thread exists reads nothing, even once the thread is committed
 * as a fork: a reader that resolved the lineage, then read rows after the fork's commit, would
 * otherwise see the fork's own entries without its base's (a subscription waiting for a fork
 * target saw entry 3 alone and waited for 0–2 for ever).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine } from '../../src/engine/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { createThreadStore } from '../../src/store/read-model/index.js';
import { createLineages } from '../../src/store/read-model/lineage.js';
import { readLogEntries } from '../../src/store/read-model/log-reads.js';
import {
  type Backend,
  must,
  postgresBackend,
  sqliteBackend,
  useBackend,
} from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';

function suite(backend: Backend) {
  it('an unknown thread has no lineage; once forked, its whole history', async () => {
    const weft = createPrisma(await backend.freshUrl());
    const store = createThreadStore(weft);
    afterAll(() => store.close());
    const engine = createEngine({
      store,
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds('id'),
    });
    const { threadId } = must(await engine.createThread({ threadId: 'src' }));
    for (let i = 0; i < 2; i++) {
      must(await engine.appendNodes({ threadId, nodes: [{ kind: 'system', payload: { i } }] }));
    }
    const lineages = createLineages(weft);

    const before = await lineages.of('fork');
    expect(before).toEqual([]);
    must(await engine.forkThread({ threadId, upToIndex: 3, newThreadId: 'fork' }));
    // The lineage read before the commit, used to read rows after it: nothing, never a part.
    expect(
      await readLogEntries(weft, store.codec, before, { from: 0, to: 100, limit: 100 }),
    ).toEqual([]);

    const after = await lineages.of('fork');
    expect(after.map((s) => s.threadId)).toEqual(['src', 'fork']);
    const entries = await readLogEntries(weft, store.codec, after, {
      from: 0,
      to: 100,
      limit: 100,
    });
    expect(entries.map((e) => e.index)).toEqual([0, 1, 2, 3]);
  });
}

describe('lineage of a thread not yet there, sqlite', () => {
  suite(useBackend(sqliteBackend()));
});

describeWithPostgres('lineage of a thread not yet there, postgres', () => {
  suite(useBackend(postgresBackend()));
});
