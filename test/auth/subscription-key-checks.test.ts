/**
 * An open subscription's key is checked before each event and by a periodic sweep, but the
 * subscriptions of one key share the lookups: a commit delivered to many of them, or one sweep
 * over them, asks the key store about that key once — and a revocation still ends every one of
 * them at its next event.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type AuthApp, createAuthApp, first, type Json, type Response } from './support.js';

// More than a commit wakes in one turn (16), so that the lookups of one turn cannot share by chance.
const SUBSCRIPTIONS = 64;
const APPEND = (n: number) =>
  `mutation { appendNodes(input: { threadId: "t", nodes: [{ kind: INFERENCE, payload: { n: ${n} } }] }) { __typename } }`;

let t: AuthApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Counts the key store's revocation lookups (the real store answers them). */
function countLookups(app: AuthApp): { calls: number } {
  const counter = { calls: 0 };
  const isActive = app.keys.isActive.bind(app.keys);
  app.keys.isActive = (id: string) => {
    counter.calls++;
    return isActive(id);
  };
  return counter;
}

async function setUp(revalidateMs: number) {
  const app = await createAuthApp({ revalidateMs });
  t = app;
  const admin = (await app.key('acme', ['admin'])).key;
  const reader = await app.key('acme', ['read']);
  const created: Json = await app.gql(
    admin,
    'mutation { createThread(input: { threadId: "t" }) { __typename } }',
  );
  expect(created.data.createThread.__typename).toBe('CreateThreadSuccess');
  const streams: Array<AsyncIterableIterator<Response>> = [];
  for (let i = 0; i < SUBSCRIPTIONS; i++) {
    streams.push(
      await app.sse(reader.key, 'subscription { threadEvents(threadId: "t") { index } }'),
    );
  }
  return { app, admin, reader, streams };
}

describe('key checks of open subscriptions', () => {
  it('one commit to many subscriptions of a key costs one lookup of it, and revocation still ends each', async () => {
    // No sweep during the test: only the per-event checks are counted.
    const { app, admin, reader, streams } = await setUp(0);
    const lookups = countLookups(app);
    await app.gql(admin, APPEND(1));
    const events = await Promise.all(streams.map(first));
    expect(events.map((e) => e.data?.threadEvents?.index)).toEqual(
      Array(SUBSCRIPTIONS).fill(events[0]!.data.threadEvents.index),
    );
    expect(lookups.calls).toBeGreaterThanOrEqual(1);
    expect(lookups.calls).toBeLessThanOrEqual(2);

    await app.keys.revoke(reader.id);
    await app.gql(admin, APPEND(2));
    const after = await Promise.all(streams.map(first));
    for (const payload of after) {
      expect(payload.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
      expect(payload.data).toBeUndefined();
    }
    for (const stream of streams) expect((await stream.next()).done).toBe(true);
  });

  it('a periodic sweep over many idle subscriptions of a key looks it up once', async () => {
    const { app, reader, streams } = await setUp(100);
    const lookups = countLookups(app);
    // About three sweeps of 64 subscriptions each: nearly 200 lookups if each were checked alone.
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(lookups.calls).toBeGreaterThanOrEqual(1);
    expect(lookups.calls).toBeLessThan(SUBSCRIPTIONS);

    await app.keys.revoke(reader.id);
    const ended = await Promise.all(streams.map(first));
    for (const payload of ended) {
      expect(payload.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
  });
});
