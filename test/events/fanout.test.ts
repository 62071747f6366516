/**
 * Scale-out: several hubs share one store and one Redis. A subscriber on
 * one instance receives every commit made through another, gap-free, in order, once; it can
 * resume on another instance with its last index; a wake-up Redis never delivered is repaired.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, expect, it } from 'vitest';
import type { CommittedEvent } from '../../src/engine/index.js';
import { createEngine } from '../../src/engine/index.js';
import {
  createEventHub,
  nodeAppended,
  runStatusChanged,
  threadEvents,
} from '../../src/events/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { describeWithPostgresAndRedis, describeWithRedis, REDIS_URL } from '../support/services.js';
import {
  appendMany,
  type Databases,
  must,
  type Node,
  openNode,
  postgresDatabases,
  range,
  sqliteDatabases,
  take,
} from './support.js';

let nodes: Node[] = [];
afterEach(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  nodes = [];
});

/** Two instances on one database and a Redis channel private to the test. */
async function twoInstances(url: string): Promise<[Node, Node]> {
  const channel = `weft:test:${randomBytes(6).toString('hex')}`;
  // Writers on both sides of one thread lose races to each other: let them retry.
  const a = await openNode(url, { channel, engine: { maxAttempts: 1000 } });
  const b = await openNode(url, { channel, engine: { maxAttempts: 1000 } });
  nodes.push(a, b);
  return [a, b];
}

function fanoutSuite(databases: () => Databases) {
  const dbs = databases();
  afterAll(() => dbs.cleanup());

  it('a subscriber on B receives every commit made through A, in order, once — and resumes on A', async () => {
    const [a, b] = await twoInstances(await dbs.fresh());
    const threadId = 'shared';
    const onB = threadEvents(b.hub, { threadId, afterIndex: -1 });
    const nodesOnB = nodeAppended(b.hub, { threadId, afterSequence: 0 });
    must(await a.engine.createThread({ threadId }));
    const writing = appendMany(a.engine, threadId, 300);
    const firstHalf = await take(onB, 151);
    // Disconnect from B, resume on A from the last index seen.
    const resumed = await take(
      threadEvents(a.hub, { threadId, afterIndex: firstHalf.at(-1)!.index }),
      150,
    );
    await writing;
    expect([...firstHalf, ...resumed].map((e) => e.index)).toEqual(range(0, 301));
    const appended = await take(nodesOnB, 300);
    expect(appended.map((e) => e.node.sequence)).toEqual(range(1, 301));
    expect(appended.every((e) => e.threadId === threadId && e.node.kind === 'inference')).toBe(
      true,
    );
  });

  it('writers on both instances: subscribers on each see one gap-free log', async () => {
    const [a, b] = await twoInstances(await dbs.fresh());
    const threadId = 'contended';
    must(await a.engine.createThread({ threadId }));
    const streams = [a, b].map((n) => threadEvents(n.hub, { threadId, afterIndex: 0 }));
    const runs = [a, b].map((n) => runStatusChanged(n.hub, {}));
    // Same thread from both sides (lost races retry), plus a run on B seen by A's global stream.
    await Promise.all([
      appendMany(a.engine, threadId, 60, 'a'),
      appendMany(b.engine, threadId, 60, 'b'),
    ]);
    const total = 121;
    for (const stream of streams) {
      const got = await take(stream, total - 1);
      expect(got.map((e) => e.index)).toEqual(range(1, total));
      const tags = got.map((e) => JSON.stringify(e.entry.event));
      expect(tags.filter((t) => t.includes('"tag":"a"'))).toHaveLength(60);
      expect(tags.filter((t) => t.includes('"tag":"b"'))).toHaveLength(60);
    }
    must(await b.engine.createThread({ threadId: 'runs' }));
    must(await b.engine.startRun({ threadId: 'runs', goal: 'g', runId: 'r1' }));
    for (const stream of runs) {
      const changes = await take(stream, 2);
      expect(changes.map((c) => [c.threadId, c.runId, c.to])).toEqual([
        ['runs', 'r1', 'scheduled'],
        ['runs', 'r1', 'running'],
      ]);
    }
  });

  it('a commit whose wake-up never went out reaches the other instance (periodic check)', async () => {
    const url = await dbs.fresh();
    const channel = `weft:test:${randomBytes(6).toString('hex')}`;
    const b = await openNode(url, { channel });
    nodes.push(b);
    const store = openThreadStore(url);
    const hub = createEventHub({ store, redis: { url: REDIS_URL, channel, pollIntervalMs: 100 } });
    await hub.ready;
    let publish = true;
    const flaky = {
      publish: (event: CommittedEvent) => (publish ? hub.publish(event) : undefined),
    };
    const engine = createEngine({ store, publisher: flaky });
    nodes.push({
      engine,
      hub,
      async close() {
        await hub.close();
        await engine.close();
      },
    });
    must(await engine.createThread({ threadId: 't' }));
    const onB = threadEvents(b.hub, { threadId: 't', afterIndex: 0 });
    await appendMany(engine, 't', 2);
    publish = false; // the last commit is never announced, and nothing follows it
    await appendMany(engine, 't', 1);
    expect((await take(onB, 3)).map((e) => e.index)).toEqual([1, 2, 3]);
  });
}

describeWithRedis('fan-out on SQLite', () => {
  fanoutSuite(sqliteDatabases);

  it('an unreachable Redis makes `ready` reject with a message that names the fix', async () => {
    const dbs = sqliteDatabases();
    const store = openThreadStore(await dbs.fresh());
    const hub = createEventHub({
      store,
      redis: { url: 'redis://127.0.0.1:1', readyTimeoutMs: 300 },
      onError: () => undefined,
    });
    await expect(hub.ready).rejects.toThrow(
      /cannot subscribe to Redis at redis:\/\/127\.0\.0\.1:1.*REDIS_URL/,
    );
    await hub.close();
    await store.close();
    await dbs.cleanup();
  });
});

describeWithPostgresAndRedis('fan-out on Postgres', () => {
  fanoutSuite(postgresDatabases);
});
