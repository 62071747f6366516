/**
 * Direct delivery (src/server/shared-execution.ts): a WebSocket operation's events are written to
 * its socket without graphql-ws's per-operation loop and the plugins' result hooks. What those
 * hooks did must still hold: the key is checked for each event (here with no periodic re-check,
 * so only that per-event check can stop it), errors go out masked and in order, and every
 * subscriber gets exactly what the same subscription over SSE (which is never sent directly)
 * gets: live, from a cursor, and through the end of a deleted thread.
 */
import { type Client, createClient } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type AuthApp, createAuthApp, type Json } from '../auth/support.js';
import { describeWithPostgres } from '../support/services.js';

type Backend = 'sqlite' | 'postgres';

const open: Array<{ t: AuthApp; clients: Client[] }> = [];
afterEach(async () => {
  for (const { t, clients } of open.splice(0)) {
    await Promise.all(clients.map((c) => c.dispose()));
    await t.close();
  }
});

async function setup(backend: Backend) {
  // revalidateMs 0: no periodic sweep, so a revoked key is stopped by the per-event check only.
  const t = await createAuthApp({ mode: 'keys', revalidateMs: 0, backend });
  const clients: Client[] = [];
  open.push({ t, clients });
  const admin = (await t.key('acme', ['admin'])).key;
  const url = (await t.listen()).replace(/^http/, 'ws');
  const client = (key: string) => {
    const c = createClient({
      url,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      lazy: true,
      connectionParams: { authorization: `Bearer ${key}` },
    });
    clients.push(c);
    return c;
  };
  const append = async (n: number) => {
    const r = await t.gql(
      admin,
      `mutation { appendNodes(input: { threadId: "t", nodes: [{ kind: INFERENCE, payload: { n: ${n}, text: "line \\"${n}\\" \\u00e9" } }] }) { __typename } }`,
    );
    expect(r.errors).toBeUndefined();
  };
  expect(
    (await t.gql(admin, 'mutation { createThread(input: { threadId: "t" }) { __typename } }'))
      .errors,
  ).toBeUndefined();
  return { t, admin, client, append };
}

/** Collects a stream's payloads (and its error, if it fails) until it ends. */
function collect(iterable: AsyncIterable<unknown>) {
  const got: unknown[] = [];
  const ended = (async () => {
    try {
      for await (const value of iterable) got.push(value);
    } catch (error) {
      // graphql-ws's client throws an error message's errors; SSE sends them as a payload.
      got.push(Array.isArray(error) ? { errors: error } : { failed: String(error) });
    }
  })();
  return { got, ended };
}

async function until(check: () => boolean, what: string, debug?: () => unknown) {
  for (let i = 0; i < 2_000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!check()) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(debug?.())}`);
}

const EVENTS = `subscription ($after: Int) {
  threadEvents(threadId: "t", afterIndex: $after) { index type entry }
}`;

function suite(backend: Backend) {
  it('sends every subscriber what SSE sends, live and from a cursor, through a deletion', async () => {
    const { t, admin, client, append } = await setup(backend);
    const reader = (await t.key('acme', ['read'])).key;
    await append(0);
    // Read as it comes, as the sockets are: a stream not read is not replayed either.
    const sse = collect(await t.sse(reader, EVENTS, { after: -1 }));
    const socket = client(reader);
    // Twenty identical live subscriptions (one group, one execution per event) and three
    // that replay from cursors first, on one socket.
    const live = Array.from({ length: 20 }, () => collect(socket.iterate({ query: EVENTS })));
    const replayed = [-1, 0, 1].map((after) =>
      collect(socket.iterate({ query: EVENTS, variables: { after } })),
    );
    // A live subscription counts from its first event: wait until all are subscribed.
    await until(() => t.hub.groups.stats().subscribers >= 23, 'the subscriptions');
    for (let n = 1; n <= 12; n++) await append(n);
    expect(
      (await t.gql(admin, 'mutation { deleteThread(input: { threadId: "t" }) { __typename } }'))
        .errors,
    ).toBeUndefined();
    await sse.ended;
    const expected = sse.got.map((payload) => {
      const { status: _status, ...rest } = payload as Json;
      return rest;
    });
    // The last payload is the deletion's error, masked as every error is, then the end.
    const last = expected.at(-1) as { errors?: Array<{ extensions?: Json }> };
    expect(last.errors?.[0]?.extensions?.code).toBe('THREAD_DELETED');
    await Promise.all([...live, ...replayed].map((c) => c.ended));
    // Entries 0 and 1 (the thread, the first append) were committed before the live ones began.
    expect(expected, JSON.stringify(expected)).toHaveLength(2 + 12 + 1);
    for (const c of live) expect(c.got).toEqual(expected.slice(2));
    expect(replayed[0]!.got).toEqual(expected);
    expect(replayed[1]!.got).toEqual(expected.slice(1));
    expect(replayed[2]!.got).toEqual(expected.slice(2));
  });

  it('checks the key for each event: a revoked key gets UNAUTHENTICATED, not the next event', async () => {
    const { t, client, append } = await setup(backend);
    const key = await t.key('acme', ['read']);
    const stream = client(key.key).iterate({ query: EVENTS });
    const first = stream.next();
    await until(() => t.hub.groups.stats().subscribers >= 1, 'the subscription');
    await append(1);
    const delivered = await first;
    expect(JSON.stringify((delivered.value as Json).data.threadEvents.entry)).toContain('"n":1');
    await t.keys.revoke(key.id);
    await append(2);
    const after = await stream.next().catch((error: unknown) => ({ value: error }));
    const text = JSON.stringify(after.value);
    expect(text).toContain('UNAUTHENTICATED');
    expect(text).not.toContain('"n":2');
  });
}

describe('direct delivery over graphql-ws (SQLite)', () => suite('sqlite'));
describeWithPostgres('direct delivery over graphql-ws (Postgres)', () => suite('postgres'));
