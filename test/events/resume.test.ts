/**
 * Gap-free resumption at the hub: 20 subscribers of one thread's stream, each disconnecting (return())
 * at up to 3 random moments during 2,000 appends and resubscribing with its last index, receive
 * every entry exactly once, in order — over SQLite and Postgres. The resume acceptance test proper
 * (20 repeats of 5,000 appends, each with a graphql-ws subscriber on a real port) is
 * test/api/subscriptions-resume.test.ts. Seeded: a failure prints the seed that replays it
 * (WEFT_TEST_SEED).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type EventHub, threadEvents } from '../../src/events/index.js';
import { describeWithPostgres } from '../support/services.js';
import {
  appendMany,
  createRandom,
  type Databases,
  must,
  openNode,
  postgresDatabases,
  range,
  sqliteDatabases,
} from './support.js';

const APPENDS = 2_000;
const THREADS = 1;
const SUBSCRIBERS_PER_THREAD = 20;

/**
 * One trial: reads the thread's events from the start, disconnecting (return()) after a random
 * number of events up to 3 times, staying away a random while, then resubscribing with the last
 * index it received. Stops once it has the whole log. Returns every index received, in order.
 */
async function trial(
  hub: EventHub,
  threadId: string,
  total: number,
  random: () => number,
): Promise<{ indices: number[]; reconnects: number }> {
  const indices: number[] = [];
  let reconnects = 0;
  let last = -1;
  while (last < total - 1) {
    const cutAfter =
      reconnects < 3 ? 1 + Math.floor(random() * (total / 2)) : Number.POSITIVE_INFINITY;
    let received = 0;
    const stream = threadEvents(hub, { threadId, afterIndex: last });
    for await (const event of stream) {
      indices.push(event.index);
      last = event.index;
      if (++received >= cutAfter || last === total - 1) break;
    }
    if (last < total - 1) {
      reconnects++;
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 30)));
    }
  }
  return { indices, reconnects };
}

function resumeSuite(label: string, databases: () => Databases, appends = APPENDS) {
  const dbs = databases();
  afterAll(() => dbs.cleanup());

  it(`${label}: 20 subscribers disconnecting at random during ${appends} appends get every event once, in order`, async () => {
    const seed = Number(process.env.WEFT_TEST_SEED ?? Date.now() % 1_000_000);
    const random = createRandom(seed);
    const node = await openNode(await dbs.fresh());
    try {
      const threadIds = range(0, THREADS).map((i) => `resume-${i}`);
      for (const threadId of threadIds) must(await node.engine.createThread({ threadId }));
      const total = appends + 1; // thread_created + the appends
      const trials = threadIds.flatMap((threadId) =>
        range(0, SUBSCRIBERS_PER_THREAD).map(() => {
          const own = createRandom(Math.floor(random() * 2 ** 31));
          return trial(node.hub, threadId, total, own);
        }),
      );
      const started = Date.now();
      await Promise.all(threadIds.map((threadId) => appendMany(node.engine, threadId, appends)));
      console.log(`${label}: ${THREADS * appends} appends in ${Date.now() - started} ms`);
      const results = await Promise.all(trials);
      const expected = range(0, total);
      results.forEach((result, i) => {
        expect(result.indices, `trial ${i} (seed ${seed})`).toEqual(expected);
      });
      // The trials did disconnect, several times each on average.
      const reconnects = results.reduce((sum, r) => sum + r.reconnects, 0);
      expect(reconnects, `seed ${seed}`).toBeGreaterThanOrEqual(results.length);
      expect(node.hub.stats().listeners).toBe(0);
    } finally {
      await node.close();
    }
  }, 600_000);
}

describe('resumable threadEvents', () => {
  resumeSuite('sqlite', sqliteDatabases);
});

// The same algorithm over Postgres reads; 1,000 appends, as a single Postgres commit costs several
// times a SQLite one and the stream code does not depend on the backend beyond its reads.
describeWithPostgres('resumable threadEvents', () => {
  resumeSuite('postgres', postgresDatabases, 1_000);
});
