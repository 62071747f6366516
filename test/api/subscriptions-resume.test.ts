/**
 * The resume guarantee, literally: "a subscriber that disconnects at a random moment during 5,000
 * appends and resubscribes with its last index receives every event exactly once, in order
 * (repeat 20 times)". Each of the 20 repeats has its own thread, its own 5,000 appended nodes
 * (committed through the engine in batches of 1–16 nodes, so ~600 log entries) and its own
 * graphql-ws subscriber on a real port, subscribed to both `nodeAppended` (5,000 events) and
 * `threadEvents` (one per entry) from the start. At a random moment — after a random number of
 * nodes received, while the appends go on — the subscriber drops its socket without completing
 * its operations, stays away a random while, and resubscribes on a new connection with the last
 * sequence and index it processed. Both streams must then hold every event exactly once, in
 * order. Repeats run four at a time (each still has its own appends and disconnect), which keeps
 * the file at a few minutes on a loaded two-core machine. Seeded: a failure prints the seed that
 * replays it (WEFT_TEST_SEED).
 */

import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createRandom, must, range, sqliteDatabases } from '../events/support.js';
import {
  type LiveServer,
  type Payload,
  startServer,
  wsSubscribe,
} from './subscriptions-support.js';

const REPEATS = 20;
const NODES = 5_000;
const PARALLEL = 4;
const MAX_BATCH = 16;

const THREAD_EVENTS = `subscription($t: ID!, $a: Int) {
  threadEvents(threadId: $t, afterIndex: $a) { index type } }`;
const NODE_APPENDED = `subscription($t: ID!, $s: Int) {
  nodeAppended(threadId: $t, afterSequence: $s) { sequence logIndex } }`;

const dbs = sqliteDatabases();
let server: LiveServer;

beforeAll(async () => {
  server = await startServer(await dbs.fresh());
});
afterAll(async () => {
  await server?.close();
  await dbs.cleanup();
});

interface Outcome {
  sequences: number[];
  indices: number[];
  entries: number;
  cut: number;
  /** Nodes appended when the subscriber dropped its socket. */
  appendedAtCut: number;
}

/**
 * A graphql-ws client that retries only a connection the server closed before it was
 * initialised (4408: the shared, busy event loop can delay the client's init past the server's
 * 3 s wait). Such a connection delivered nothing, so resubscribing with the same cursor is exact;
 * any other close ends the session.
 */
function connect(url: string): Client {
  return createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    lazy: true,
    retryAttempts: 5,
    shouldRetry: (closed) => (closed as { code?: number } | null)?.code === 4408,
  });
}

/** Batch sizes (1–MAX_BATCH nodes each) adding up to NODES. */
function batches(random: () => number): number[] {
  const sizes: number[] = [];
  for (let left = NODES; left > 0; ) {
    const size = Math.min(left, 1 + Math.floor(random() * MAX_BATCH));
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

/**
 * Reads a stream until `stop()` says so or it ends (the socket went away). It pulls with
 * `next()` and never calls `return()`, which would complete the operation politely: the
 * subscriber must vanish the way a crashed client does.
 */
async function pump(
  stream: AsyncIterableIterator<Payload>,
  onData: (data: Payload['data']) => void,
  stop: () => boolean,
): Promise<void> {
  while (!stop()) {
    const step = await stream.next();
    if (step.done === true) return;
    if (step.value.errors !== undefined) throw new Error(JSON.stringify(step.value.errors));
    onData(step.value.data);
  }
}

async function repeat(threadId: string, random: () => number): Promise<Outcome> {
  must(await server.engine.createThread({ threadId }));
  const sizes = batches(random);
  const entries = 1 + sizes.length; // thread_created, then one entry per batch
  const cut = 1 + Math.floor(random() * (NODES - 1));
  const sequences: number[] = [];
  const indices: number[] = [];
  let lastSequence = 0;
  let lastIndex = -1;
  let appended = 0;
  let appendedAtCut = -1;

  const writing = (async () => {
    for (const [b, size] of sizes.entries()) {
      const nodes = range(0, size).map((i) => ({
        kind: 'inference' as const,
        payload: { threadId, b, i },
      }));
      must(await server.engine.appendNodes({ threadId, nodes }));
      appended += size;
    }
  })();

  /** One connection: both subscriptions from the last sequence / index processed. */
  async function session(disconnectAfter: number): Promise<void> {
    const client = connect(server.url);
    const nodes = wsSubscribe(client, NODE_APPENDED, { t: threadId, s: lastSequence });
    const events = wsSubscribe(client, THREAD_EVENTS, { t: threadId, a: lastIndex });
    let dropped = false;
    const nodePump = pump(
      nodes,
      (data) => {
        lastSequence = data.nodeAppended.sequence;
        sequences.push(lastSequence);
      },
      () => sequences.length >= disconnectAfter || lastSequence === NODES,
    );
    const eventPump = pump(
      events,
      (data) => {
        lastIndex = data.threadEvents.index;
        indices.push(lastIndex);
      },
      () => dropped || lastIndex === entries - 1,
    );
    await nodePump;
    if (sequences.length >= disconnectAfter && lastSequence < NODES) {
      // The random moment: drop the socket without completing either operation.
      dropped = true;
      appendedAtCut = appended;
      await client.dispose();
      await eventPump; // ends with the socket (items already buffered are processed first)
      return;
    }
    await eventPump;
    await client.dispose();
  }

  await session(cut);
  await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 20)));
  while (lastSequence < NODES || lastIndex < entries - 1) {
    await session(Number.POSITIVE_INFINITY);
  }
  await writing;
  return { sequences, indices, entries, cut, appendedAtCut };
}

describe('resume over graphql-ws (acceptance)', () => {
  it(`${REPEATS} repeats: a disconnect at a random moment during ${NODES} appends, then every event once, in order`, async () => {
    const seed = Number(process.env.WEFT_TEST_SEED ?? Date.now() % 1_000_000);
    const random = createRandom(seed);
    const outcomes: Outcome[] = [];
    const started = Date.now();
    for (let wave = 0; wave < REPEATS; wave += PARALLEL) {
      const ids = range(wave, Math.min(REPEATS, wave + PARALLEL));
      const seeds = ids.map(() => Math.floor(random() * 2 ** 31));
      outcomes.push(
        ...(await Promise.all(ids.map((k, i) => repeat(`resume-${k}`, createRandom(seeds[i]!))))),
      );
    }
    const midway = outcomes.filter((o) => o.appendedAtCut >= 0 && o.appendedAtCut < NODES).length;
    console.log(
      `resume: ${REPEATS} repeats in ${Date.now() - started} ms; disconnects after ` +
        `${outcomes.map((o) => o.cut).join(', ')} nodes; ${midway} while the appends were still going`,
    );
    outcomes.forEach((o, k) => {
      const label = `repeat ${k} (seed ${seed}, cut after ${o.cut} nodes)`;
      expect(o.appendedAtCut, label).toBeGreaterThanOrEqual(0); // it did disconnect
      expect(o.sequences, label).toEqual(range(1, NODES + 1));
      expect(o.indices, label).toEqual(range(0, o.entries));
    });
    // The dropped operations were ended by the server: nothing stays attached to the hub.
    for (let i = 0; i < 100 && server.hub.stats().listeners > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(server.hub.stats().listeners).toBe(0);
  }, 1_200_000);
});
