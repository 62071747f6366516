import type { Client } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import {
  freshSqliteUrl,
  type LiveServer,
  removeSqliteFiles,
  startServer,
  takeData,
  wsClient,
  wsSubscribe,
} from './subscriptions-support.js';

const EVENTS = `subscription ($threadId: ID!) {
  threadEvents(threadId: $threadId, afterIndex: -1) { index type entry }
}`;

/**
 * A fork's log is its source's entries up to the fork point, then its own: a subscription
 * replaying the fork from the start gets that one log (the shared entries as the source has
 * them), then the fork's live entries, while the source grows apart.
 */
function forkStreamsOneLog(open: () => Promise<LiveServer>) {
  let server: LiveServer | undefined;
  let client: Client | undefined;
  afterEach(async () => {
    await client?.dispose();
    await server?.close();
  });

  it('replays the shared entries, its own, then live', async () => {
    server = await open();
    const { engine } = server;
    expect((await engine.createThread({ threadId: 's' })).ok).toBe(true);
    for (let i = 0; i < 4; i++) {
      await engine.appendNodes({ threadId: 's', nodes: [{ kind: 'goal', payload: { i } }] });
    }
    expect((await engine.forkThread({ threadId: 's', upToIndex: 3, newThreadId: 'f' })).ok).toBe(
      true,
    );
    await engine.appendNodes({ threadId: 's', nodes: [{ kind: 'goal', payload: { later: 1 } }] });
    client = wsClient(server.url);
    const stream = wsSubscribe(client, EVENTS, { threadId: 'f' });
    const replayed = (await takeData(stream, 4)).map((d) => d.threadEvents);
    expect(replayed.map((e) => [e.index, e.type])).toEqual([
      [0, 'thread_created'],
      [1, 'nodes_appended'],
      [2, 'nodes_appended'],
      [3, 'thread_forked'],
    ]);
    const source = await engine.store.readEntries('s', 0, 3);
    expect(replayed.slice(0, 3).map((e) => e.entry)).toEqual(
      source.map((e) => JSON.parse(JSON.stringify(e))),
    );
    await engine.appendNodes({ threadId: 'f', nodes: [{ kind: 'goal', payload: { own: 1 } }] });
    const [live] = (await takeData(stream, 1)).map((d) => d.threadEvents);
    expect([live.index, live.type]).toEqual([4, 'nodes_appended']);
  });
}

describe('a fork streams as one log [sqlite]', () => {
  afterEach(() => removeSqliteFiles());
  forkStreamsOneLog(async () => startServer(await freshSqliteUrl()));
});

describeWithPostgres('a fork streams as one log', () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
  });
  forkStreamsOneLog(async () => {
    db = await createTestDatabase();
    await migrate(db.url);
    return startServer(db.url);
  });
});
