import { randomBytes } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  describeWithPostgresAndRedis,
  REDIS_URL,
  type TestDatabase,
} from '../support/services.js';
import {
  freshSqliteUrl,
  type LiveServer,
  type Payload,
  removeSqliteFiles,
  sseSubscribe,
  startServer,
  takeData,
  wsClient,
  wsSubscribe,
} from './subscriptions-support.js';

const EVENTS = `subscription ($threadId: ID!) {
  threadEvents(threadId: $threadId, afterIndex: -1) { index type }
}`;
const NODES = `subscription ($threadId: ID!) {
  nodeAppended(threadId: $threadId, afterSequence: 0) { sequence }
}`;
const RUNS = `subscription ($threadId: ID!) {
  runStatusChanged(threadId: $threadId, afterIndex: -1) { runId to }
}`;

async function deleteThread(server: LiveServer, threadId: string) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `mutation ($input: DeleteThreadInput!) {
        deleteThread(input: $input) {
          __typename
          ... on DeleteThreadSuccess { threadId stateHash }
          ... on Error { code message }
        }
      }`,
      variables: { input: { threadId, idempotencyKey: `delete-${threadId}` } },
    }),
  });
  return ((await response.json()) as Payload).data!.deleteThread;
}

/** The next payload after the data seen: the deletion's error, then the end. */
async function endsDeleted(stream: AsyncIterableIterator<Payload>) {
  const step = await stream.next();
  expect(step.done).toBe(false);
  expect(step.value.errors?.[0]?.extensions?.code).toBe('THREAD_DELETED');
  expect((await stream.next()).done).toBe(true);
}

/**
 * A subscriber attached to a thread that is deleted gets what was committed before, then one
 * error with code THREAD_DELETED, and its stream ends (graphql-ws and SSE; `writer` deletes,
 * `reader` serves the subscribers: the same server, or another one behind Redis).
 */
function deletionEndsSubscribers(open: () => Promise<{ writer: LiveServer; reader: LiveServer }>) {
  let servers: LiveServer[] = [];
  let client: Client | undefined;
  afterEach(async () => {
    await client?.dispose();
    for (const s of servers) await s.close();
    servers = [];
  });

  it('ends with THREAD_DELETED after the events committed before', async () => {
    const { writer, reader } = await open();
    servers = [...new Set([writer, reader])];
    const { engine } = writer;
    const created = await engine.createThread({ threadId: 'doomed' });
    expect(created.ok).toBe(true);
    await engine.appendNodes({ threadId: 'doomed', nodes: [{ kind: 'goal', payload: { a: 1 } }] });
    expect((await engine.startRun({ threadId: 'doomed', goal: 'g', runId: 'r' })).ok).toBe(true);
    const running = await engine.dispatch({
      runId: 'r',
      threadId: 'doomed',
      action: { type: 'set_status', payload: { status: 'running' } },
    });
    expect(running.ok).toBe(true);
    client = wsClient(reader.url);
    const ws = wsSubscribe(client, EVENTS, { threadId: 'doomed' });
    const sse = sseSubscribe(reader.url, NODES, { threadId: 'doomed' });
    const runs = wsSubscribe(client, RUNS, { threadId: 'doomed' });
    expect((await takeData(ws, 4)).map((d) => d.threadEvents.index)).toEqual([0, 1, 2, 3]);
    // The run's start appended its goal node.
    expect((await takeData(sse, 2)).map((d) => d.nodeAppended.sequence)).toEqual([1, 2]);
    // pending → running passes through scheduled: two changes.
    expect((await takeData(runs, 2)).map((d) => d.runStatusChanged.to)).toEqual([
      'SCHEDULED',
      'RUNNING',
    ]);
    expect(await deleteThread(writer, 'doomed')).toMatchObject({
      __typename: 'DeleteThreadSuccess',
      threadId: 'doomed',
    });
    await endsDeleted(ws);
    await endsDeleted(sse);
    await endsDeleted(runs);
    // Deleted means gone: a new subscription is refused like one to an unknown thread.
    const again = wsSubscribe(client, EVENTS, { threadId: 'doomed' });
    const step = await again.next();
    expect(step.value?.errors?.[0]?.extensions?.code ?? step.value?.errors?.[0]?.message).toMatch(
      /NOT_FOUND|not found/,
    );
  });
}

describe('deleting a thread ends its subscriptions [sqlite]', () => {
  afterEach(() => removeSqliteFiles());
  deletionEndsSubscribers(async () => {
    const server = await startServer(await freshSqliteUrl());
    return { writer: server, reader: server };
  });
});

describeWithPostgres('deleting a thread ends its subscriptions', () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
  });
  deletionEndsSubscribers(async () => {
    db = await createTestDatabase();
    await migrate(db.url);
    const server = await startServer(db.url);
    return { writer: server, reader: server };
  });
});

describeWithPostgresAndRedis('deleting a thread ends its subscriptions on another server', () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
  });
  deletionEndsSubscribers(async () => {
    db = await createTestDatabase();
    await migrate(db.url);
    const redis = { url: REDIS_URL, channel: `weft:test:${randomBytes(6).toString('hex')}` };
    return {
      writer: await startServer(db.url, { redis }),
      reader: await startServer(db.url, { redis }),
    };
  });
});
