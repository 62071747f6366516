/**
 * `threadActivity` over graphql-ws on a real port, on SQLite and Postgres: one event per
 * committed entry of any of the tenant's threads (new threads included), in commit order;
 * resumed with the last cursor — on the same server, after the server restarted with entries
 * committed while it was down, and on another instance without Redis — with nothing missed or
 * repeated; another tenant's threads never show; a bad cursor is refused.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { must, postgresDatabases, sqliteDatabases } from '../events/support.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type LiveServer,
  type Payload,
  startServer,
  takeData,
  wsClient,
  wsSubscribe,
} from './subscriptions-support.js';

const FEED = `subscription($after: String) {
  threadActivity(after: $after) { threadId index type recordedAt cursor thread { id } } }`;

/** A cursor before the tenant's first entry (activity number 0), as the server writes cursors. */
const FROM_START = Buffer.from(JSON.stringify({ k: 'activity', v: { a: 0 } })).toString(
  'base64url',
);

interface Activity {
  threadId: string;
  index: number;
  type: string;
  cursor: string;
}

const keyOf = (a: Activity) => `${a.threadId}#${a.index}`;

function suite(databases: () => ReturnType<typeof sqliteDatabases>) {
  const dbs = databases();
  const servers: LiveServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
    await dbs.cleanup();
  });
  const start = async (url: string) => {
    const server = await startServer(url);
    servers.push(server);
    return server;
  };
  const feed = async (server: LiveServer, count: number, after?: string) => {
    const client = wsClient(server.url);
    const stream = wsSubscribe(client, FEED, after === undefined ? {} : { after });
    return { client, stream, first: (n = count) => takeData(stream, n) };
  };
  const activities = (data: Array<{ threadActivity: Activity }>) =>
    data.map((d) => d.threadActivity);

  it('delivers every entry of every thread in commit order, new threads included', async () => {
    const server = await start(await dbs.fresh());
    must(await server.engine.createThread({ threadId: 'old' }));
    const { client, stream } = await feed(server, 0);
    // Live only: subscribing takes a moment; the first write after it is the marker.
    const pending = takeData(stream, 5);
    await new Promise((r) => setTimeout(r, 300));
    must(await server.engine.createThread({ threadId: 'new' }));
    must(
      await server.engine.appendNodes({ threadId: 'old', nodes: [{ kind: 'goal', payload: 1 }] }),
    );
    must(
      await server.engine.appendNodes({ threadId: 'new', nodes: [{ kind: 'goal', payload: 2 }] }),
    );
    const { runId } = must(await server.engine.startRun({ threadId: 'new', goal: 'g' }));
    expect(runId).toBeTruthy();
    must(
      await server.engine.appendNodes({ threadId: 'old', nodes: [{ kind: 'goal', payload: 3 }] }),
    );
    const got = activities(await pending);
    expect(got.map((a) => [a.threadId, a.index])).toEqual([
      ['new', 0],
      ['old', 1],
      ['new', 1],
      ['new', 2],
      ['old', 2],
    ]);
    expect(got[0]).toMatchObject({ type: 'thread_created' });
    expect(new Set(got.map((a) => a.cursor)).size).toBe(5);
    await stream.return?.();
    await client.dispose();
  });

  it('resumes after a cursor, across a restart and on another instance, exactly once', async () => {
    const url = await dbs.fresh();
    const first = await start(url);
    const expected: string[] = [];
    const write = async (engine: LiveServer['engine'], thread: string, n: number) => {
      for (let i = 0; i < n; i++) {
        must(await engine.appendNodes({ threadId: thread, nodes: [{ kind: 'goal', payload: i }] }));
      }
    };
    for (const id of ['a', 'b']) must(await first.engine.createThread({ threadId: id }));
    await write(first.engine, 'a', 30);
    await write(first.engine, 'b', 30);

    // From the beginning: every entry so far (2 creations + 60 appends), in order.
    const all = await feed(first, 62, FROM_START);
    const seen = activities(await all.first());
    expected.push(...seen.map(keyOf));
    expect(expected.slice(0, 2)).toEqual(['a#0', 'b#0']);
    expect(new Set(expected).size).toBe(62);

    // Cut after 40 events of a fresh subscription, then restart the server with writes while down.
    const partial = await feed(first, 40, FROM_START);
    const before = activities(await partial.first());
    expect(before.map(keyOf)).toEqual(expected.slice(0, 40));
    await partial.client.dispose();
    await first.close();
    servers.splice(servers.indexOf(first), 1);

    const second = await start(url);
    await write(second.engine, 'b', 5);
    must(await second.engine.createThread({ threadId: 'c' }));
    const resumed = await feed(second, 62 - 40 + 6, before.at(-1)!.cursor);
    const rest = activities(await resumed.first());
    expect(rest.map(keyOf)).toEqual([
      ...expected.slice(40),
      ...[31, 32, 33, 34, 35].map((i) => `b#${i}`),
      'c#0',
    ]);

    // Another instance on the same database, no Redis: its subscriber sees this one's commits.
    const third = await start(url);
    const elsewhere = await feed(third, 3, rest.at(-1)!.cursor);
    const pending = elsewhere.first();
    await write(second.engine, 'c', 3);
    expect(activities(await pending).map(keyOf)).toEqual(['c#1', 'c#2', 'c#3']);
    for (const f of [resumed, elsewhere]) {
      await f.stream.return?.();
      await f.client.dispose();
    }
  });

  it('numbers concurrent commits of many threads without a gap, a repeat or a deadlock', async () => {
    const server = await start(await dbs.fresh());
    const threads = ['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7'];
    const live = await feed(server, threads.length * 26, FROM_START);
    const pending = live.first();
    await Promise.all(
      threads.map(async (id) => {
        must(await server.engine.createThread({ threadId: id }));
        for (let i = 0; i < 25; i++) {
          must(
            await server.engine.appendNodes({
              threadId: id,
              nodes: [{ kind: 'goal', payload: i }],
            }),
          );
        }
      }),
    );
    const got = activities(await pending);
    expect(new Set(got.map(keyOf)).size).toBe(threads.length * 26);
    for (const id of threads) {
      expect(got.filter((a) => a.threadId === id).map((a) => a.index)).toEqual(
        Array.from({ length: 26 }, (_, i) => i),
      );
    }
    await live.stream.return?.();
    await live.client.dispose();
  });

  it('shows only the caller’s tenant and refuses a bad cursor', async () => {
    const server = await start(await dbs.fresh());
    must(await server.engine.forTenant('acme').createThread({ threadId: 'theirs' }));
    must(await server.engine.createThread({ threadId: 'ours' }));
    const { client, first } = await feed(server, 1, FROM_START);
    expect(activities(await first()).map(keyOf)).toEqual(['ours#0']);
    await client.dispose();
    for (const after of ['nope', 'eyJhIjotMX0', 'eyJiIjoxfQ']) {
      const bad = wsClient(server.url);
      const step = await wsSubscribe(bad, FEED, { after }).next();
      const payload = step.value as Payload;
      expect(payload.errors?.[0]?.extensions?.code, JSON.stringify(payload)).toBe('BAD_USER_INPUT');
      await bad.dispose();
    }
  });
}

describe('threadActivity (SQLite)', () => suite(sqliteDatabases));
describeWithPostgres('threadActivity (Postgres)', () => suite(postgresDatabases));
