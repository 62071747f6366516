/**
 * Replays that never block, and slow consumers that are closed instead of buffered (docs/api.md,
 * "Back-pressure and slow consumers"), on a real port, over SQLite files and Postgres:
 *
 * - a replay of a 5,000-entry log delivers every entry once, in order, over graphql-ws and SSE,
 *   while another client's `{ __typename }` is answered before the replay's last event (the
 *   replay yields the event loop between pages and slices; shown by the order of arrivals);
 * - a client that stops reading while large events are appended is closed as a slow consumer
 *   (graphql-ws: close code 4413; SSE: one SLOW_CONSUMER error event, then the end), and
 *   resubscribing from the last index it received gives the rest with no gap and no duplicate.
 *
 * The server's bound is small here (256 KiB) so that a few hundred events overflow it; the
 * replays run under the same bound, which they must never reach (they wait for the drain).
 */
import { once } from 'node:events';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SLOW_CONSUMER_CLOSE } from '../../src/server/send-buffer.js';
import {
  appendMany,
  type Databases,
  must,
  postgresDatabases,
  range,
  sqliteDatabases,
} from '../events/support.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type LiveServer,
  type Payload,
  sseSubscribe,
  startServer,
  takeData,
  wsClient,
  wsSubscribe,
} from './subscriptions-support.js';

const LONG = 5_000;
const BOUND = 256 * 1024;
/** Appends at most this many 16 KiB events waiting for a slow consumer to be closed. */
const MAX_SLOW_APPENDS = 4_000;
const PAD = 'x'.repeat(16 * 1024);

const REPLAY = `subscription($t: ID!, $a: Int) { threadEvents(threadId: $t, afterIndex: $a) { index } }`;
const REPLAY_ENTRIES = `subscription($t: ID!, $a: Int) {
  threadEvents(threadId: $t, afterIndex: $a) { index entry } }`;

function suite(databases: () => Databases) {
  const dbs = databases();
  let server: LiveServer;

  beforeAll(async () => {
    server = await startServer(await dbs.fresh(), { app: { maxSendBufferBytes: BOUND } });
    must(await server.engine.createThread({ threadId: 'long' }));
    await appendMany(server.engine, 'long', LONG - 1);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await dbs.cleanup();
  });

  /** Reads a replay of the long thread, sending `{ __typename }` once the first event is in. */
  async function replayWithQuery(stream: AsyncIterableIterator<Payload>) {
    const indices: number[] = [];
    let answeredAfter: number | undefined;
    let query: Promise<void> | undefined;
    while (indices.length < LONG) {
      const step = await stream.next();
      if (step.done === true) break;
      if (step.value.errors !== undefined) throw new Error(JSON.stringify(step.value.errors));
      indices.push(step.value.data.threadEvents.index);
      query ??= fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ __typename }"}',
      })
        .then((response) => response.json())
        .then((body) => {
          expect(body).toEqual({ data: { __typename: 'Query' } });
          answeredAfter = indices.length;
        });
    }
    await stream.return?.();
    await query;
    return { indices, answeredAfter: answeredAfter! };
  }

  it(`graphql-ws: a replay of ${LONG} entries arrives once, in order, and a query is answered before its end`, async () => {
    const client = wsClient(server.url);
    try {
      const { indices, answeredAfter } = await replayWithQuery(
        wsSubscribe(client, REPLAY, { t: 'long', a: -1 }),
      );
      expect(indices).toEqual(range(0, LONG));
      expect(answeredAfter).toBeLessThan(LONG);
    } finally {
      await client.dispose();
    }
    expect(server.app.slowConsumers.websocket).toBe(0);
  }, 120_000);

  it(`SSE: a replay of ${LONG} entries arrives once, in order, and a query is answered before its end`, async () => {
    const { indices, answeredAfter } = await replayWithQuery(
      sseSubscribe(server.url, REPLAY, { t: 'long', a: -1 }),
    );
    expect(indices).toEqual(range(0, LONG));
    expect(answeredAfter).toBeLessThan(LONG);
    expect(server.app.slowConsumers.sse).toBe(0);
  }, 120_000);

  /** Appends 16 KiB events to `threadId` until the server counts one more slow consumer. */
  async function appendUntilClosed(threadId: string, transport: 'websocket' | 'sse') {
    const before = server.app.slowConsumers[transport];
    let appended = 0;
    while (server.app.slowConsumers[transport] === before && appended < MAX_SLOW_APPENDS) {
      must(
        await server.engine.appendNodes({
          threadId,
          nodes: [{ kind: 'inference', payload: { n: appended, pad: PAD } }],
        }),
      );
      appended++;
    }
    expect(server.app.slowConsumers[transport]).toBe(before + 1);
    return appended;
  }

  /** The rest of the thread's log after `last`, over a new graphql-ws connection. */
  async function resumeOverWs(threadId: string, last: number, total: number) {
    const client = wsClient(server.url);
    try {
      const rest = await takeData(
        wsSubscribe(client, REPLAY, { t: threadId, a: last }),
        total - 1 - last,
      );
      return rest.map((d) => d.threadEvents.index as number);
    } finally {
      await client.dispose();
    }
  }

  async function noListenersLeft() {
    for (let i = 0; i < 200 && server.hub.stats().listeners > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return server.hub.stats().listeners;
  }

  /** The slow-consumer series of the server's /metrics. */
  const slowConsumerMetric = async () => {
    const text = await (await fetch(server.url.replace(/\/graphql$/, '/metrics'))).text();
    return text.split('\n').filter((l) => l.startsWith('weft_slow_consumers_closed_total'));
  };

  it('graphql-ws: a client that stops reading is closed with 4413; from its last index it gets the rest, no gap, no duplicate', async () => {
    const threadId = 'slow-ws';
    must(await server.engine.createThread({ threadId }));
    const socket = new WebSocket(server.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const indices: number[] = [];
    const first = new Promise<void>((resolve) => {
      socket.on('message', (raw) => {
        const message = JSON.parse(String(raw));
        if (message.type === 'connection_ack') {
          socket.send(
            JSON.stringify({
              id: '1',
              type: 'subscribe',
              payload: { query: REPLAY_ENTRIES, variables: { t: threadId, a: -1 } },
            }),
          );
        } else if (message.type === 'next') {
          indices.push(message.payload.data.threadEvents.index);
          resolve();
        }
      });
    });
    const closed = once(socket, 'close');
    await once(socket, 'open');
    socket.send(JSON.stringify({ type: 'connection_init' }));
    await first;
    socket.pause(); // reads nothing more from the TCP socket

    const appended = await appendUntilClosed(threadId, 'websocket');
    socket.resume();
    const [code, reason] = (await closed) as [number, Buffer];
    expect(code).toBe(SLOW_CONSUMER_CLOSE);
    expect(String(reason)).toMatch(/^SLOW_CONSUMER: /);
    expect(await slowConsumerMetric()).toContain(
      'weft_slow_consumers_closed_total{transport="websocket"} 1',
    );
    const total = 1 + appended;
    // What arrived before the close is a prefix of the log, and not all of it.
    expect(indices).toEqual(range(0, indices.length));
    expect(indices.length).toBeLessThan(total);
    expect(await noListenersLeft()).toBe(0);

    const rest = await resumeOverWs(threadId, indices.at(-1)!, total);
    expect([...indices, ...rest]).toEqual(range(0, total));
  }, 300_000);

  it('SSE: a client that stops reading gets one SLOW_CONSUMER event and the end; from its last index it gets the rest', async () => {
    const threadId = 'slow-sse';
    must(await server.engine.createThread({ threadId }));
    const req = request(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    });
    req.end(JSON.stringify({ query: REPLAY_ENTRIES, variables: { t: threadId, a: -1 } }));
    const [res] = (await once(req, 'response')) as [import('node:http').IncomingMessage];
    expect(res.statusCode).toBe(200);
    let text = '';
    res.setEncoding('utf8');
    const first = new Promise<void>((resolve) => {
      res.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('"threadEvents"')) resolve();
      });
    });
    const ended = once(res, 'end');
    await first;
    res.pause();

    const appended = await appendUntilClosed(threadId, 'sse');
    res.resume();
    await ended;
    const events = parseSse(text);
    expect(events.at(-1)).toEqual({ event: 'complete', data: undefined });
    const payloads = events.filter((e) => e.event === 'next').map((e) => e.data as Payload);
    const last = payloads.at(-1)!;
    expect(last.errors?.[0]?.extensions?.code).toBe('SLOW_CONSUMER');
    const indices = payloads.slice(0, -1).map((p) => p.data.threadEvents.index as number);
    const total = 1 + appended;
    expect(indices).toEqual(range(0, indices.length));
    expect(indices.length).toBeLessThan(total);
    expect(await noListenersLeft()).toBe(0);

    const rest = await takeData(
      sseSubscribe(server.url, REPLAY, { t: threadId, a: indices.at(-1)! }),
      total - indices.length,
    );
    const resumed = rest.map((d) => d.threadEvents.index as number);
    expect([...indices, ...resumed]).toEqual(range(0, total));
  }, 300_000);
}

/** The events of an SSE body: `event:` and parsed `data:` of each block (pings dropped). */
function parseSse(text: string): Array<{ event: string | undefined; data: unknown }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines
        .find((l) => l.startsWith('event:'))
        ?.slice(6)
        .trim();
      const data = lines
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n');
      return { event, data: data === '' ? undefined : JSON.parse(data) };
    });
}

describe('back-pressure and slow consumers [sqlite]', () => suite(sqliteDatabases));
describeWithPostgres('back-pressure and slow consumers', () => suite(postgresDatabases));
