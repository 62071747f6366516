/**
 * Two Weft servers on one Postgres and one Redis: a graphql-ws subscriber on B
 * receives every commit made through A's HTTP API, gap-free, and resumes on A with its last
 * index after B goes away.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate/index.js';
import {
  createTestDatabase,
  describeWithPostgresAndRedis,
  REDIS_URL,
  type TestDatabase,
} from '../support/services.js';
import {
  type LiveServer,
  startServer,
  takeData,
  wsClient,
  wsSubscribe,
} from './subscriptions-support.js';

const THREAD_EVENTS = `subscription ($threadId: ID!, $afterIndex: Int) {
  threadEvents(threadId: $threadId, afterIndex: $afterIndex) { index type }
}`;
const APPEND = `mutation ($threadId: ID!, $i: Int!) {
  appendNodes(input: { threadId: $threadId, nodes: [{ kind: INFERENCE, payload: { i: $i } }] }) {
    __typename ... on AppendNodesSuccess { logIndex }
  }
}`;

const databases: TestDatabase[] = [];
let servers: LiveServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});
afterAll(async () => {
  await Promise.all(databases.splice(0).map((db) => db.drop()));
});

describeWithPostgresAndRedis('subscriptions across two servers', () => {
  it('a subscriber on B sees every commit made through A, and resumes on A after B stops', async () => {
    const db = await createTestDatabase();
    databases.push(db);
    await migrate(db.url);
    const redis = { url: REDIS_URL, channel: `weft:test:${randomBytes(6).toString('hex')}` };
    const a = await startServer(db.url, { redis });
    const b = await startServer(db.url, { redis });
    servers.push(a, b);
    const created = await a.engine.createThread({ threadId: 't' });
    expect(created.ok).toBe(true);

    const post = async (i: number) => {
      const response = await fetch(a.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: APPEND, variables: { threadId: 't', i } }),
      });
      const body = (await response.json()) as { data: { appendNodes: { __typename: string } } };
      expect(body.data.appendNodes.__typename).toBe('AppendNodesSuccess');
    };
    const onB = wsClient(b.url);
    const stream = wsSubscribe(onB, THREAD_EVENTS, { threadId: 't', afterIndex: 0 });
    const writing = (async () => {
      for (let i = 0; i < 40; i++) await post(i);
    })();
    const first = (await takeData(stream, 20)).map((d) => d.threadEvents.index);
    await onB.dispose();
    await b.close();
    servers = [a];

    const onA = wsClient(a.url);
    const resumed = wsSubscribe(onA, THREAD_EVENTS, { threadId: 't', afterIndex: first.at(-1) });
    const rest = (await takeData(resumed, 20)).map((d) => d.threadEvents.index);
    await writing;
    await onA.dispose();
    expect([...first, ...rest]).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });
});
