/**
 * A replaying subscription checks its key once per page of events, not once per event: the
 * events of one page were read before the check that covers them began. The hub is kept busy
 * meanwhile (another key's live events arrive between the replay's events), which is what used
 * to cost one key lookup per replayed event. A revoked key still ends the replay at the next page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appendMany, must, range } from '../events/support.js';
import { type AuthApp, createAuthApp, first, type Response } from './support.js';

const ENTRIES = 1_001; // thread_created + 1,000 appends: sixteen replay pages of 64
const PAGE = 64;
const REPLAY = 'subscription { threadEvents(threadId: "t", afterIndex: -1) { index } }';

let t: AuthApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function countLookups(app: AuthApp, keyId: string): { calls: number } {
  const counter = { calls: 0 };
  const isActive = app.keys.isActive.bind(app.keys);
  app.keys.isActive = (id: string) => {
    if (id === keyId) counter.calls++;
    return isActive(id);
  };
  return counter;
}

async function setUp() {
  // No idle sweep: only the checks before events are counted.
  const app = await createAuthApp({ revalidateMs: 0 });
  t = app;
  must(await app.engine.createThread({ threadId: 't' }));
  must(await app.engine.createThread({ threadId: 'busy' }));
  await appendMany(app.engine, 't', ENTRIES - 1);
  const replayer = await app.key('default', ['read']);
  const other = await app.key('default', ['read']);
  const busy = await app.sse(
    other.key,
    'subscription { threadEvents(threadId: "busy") { index } }',
  );
  return { app, replayer, busy };
}

/** One live event of another key's subscription, delivered (it moves the hub's clock). */
async function liveElsewhere(app: AuthApp, busy: AsyncIterableIterator<Response>, n: number) {
  must(
    await app.engine.appendNodes({
      threadId: 'busy',
      nodes: [{ kind: 'inference', payload: { n } }],
    }),
  );
  expect((await first(busy)).data?.threadEvents?.index).toBe(n + 1);
}

describe('key checks of replays', () => {
  it(`a replay of ${ENTRIES} entries looks its key up once per page while the hub is busy`, async () => {
    const { app, replayer, busy } = await setUp();
    const lookups = countLookups(app, replayer.id);
    const replay = await app.sse(replayer.key, REPLAY);
    const indices: number[] = [];
    while (indices.length < ENTRIES) {
      const payload = await first(replay);
      indices.push(payload.data?.threadEvents?.index);
      // Another key's live event between the replay's events moves the hub's clock.
      if (indices.length % 8 === 0) await liveElsewhere(app, busy, indices.length / 8 - 1);
    }
    await replay.return?.();
    await busy.return?.();
    expect(indices).toEqual(range(0, ENTRIES));
    // One per page (sixteen), and the short read that ends the replay.
    expect(lookups.calls).toBeGreaterThanOrEqual(1);
    expect(lookups.calls).toBeLessThanOrEqual(Math.ceil(ENTRIES / PAGE) + 1);
  }, 120_000);

  it('a key revoked during a replay ends it within a page', async () => {
    const { app, replayer, busy } = await setUp();
    const replay = await app.sse(replayer.key, REPLAY);
    expect((await first(replay)).data?.threadEvents?.index).toBe(0);
    await app.keys.revoke(replayer.id);
    let delivered = 1;
    for (;;) {
      const payload = await first(replay);
      if (payload.errors !== undefined) {
        expect(payload.errors[0]?.extensions?.code).toBe('UNAUTHENTICATED');
        break;
      }
      delivered++;
    }
    // The rest of the first page at most: the next page is read after the revocation.
    expect(delivered).toBeLessThanOrEqual(PAGE);
    expect((await replay.next()).done).toBe(true);
    await busy.return?.();
  }, 120_000);
});
