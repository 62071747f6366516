/**
 * `runApiSubscribersBench()`: the subscriber half of `npm run bench -- api`. N
 * graphql-ws clients (default 1,000, `WEFT_BENCH_SUBSCRIBERS`) subscribe to `threadEvents` of one
 * thread; appends go through the `appendNodes` mutation over HTTP, one after another; each
 * client records when each entry arrives. Delivery latency = arrival − the moment the engine
 * published the committed entry (what the subscription path adds); end-to-end = arrival − the
 * moment the mutation was sent (adds the HTTP request and the commit). Baseline in the same run:
 * the same appends with one subscriber. Server and clients share this process (the clients'
 * parsing is in the figures).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Client, createClient } from 'graphql-ws';
import { WebSocket } from 'ws';
import { createEngine } from '../src/engine/index.js';
import { createEventHub } from '../src/events/index.js';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { migrate } from '../src/store/migrate/index.js';
import { openThreadStore } from '../src/store/read-model/index.js';
import { fmt, percentile, printTable } from './harness.js';

const SUBSCRIBERS = Number(process.env.WEFT_BENCH_SUBSCRIBERS ?? 1000);
const APPENDS = Number(process.env.WEFT_BENCH_APPENDS ?? 100);
const TARGET_P99_MS = 100;
const CONNECT_BATCH = 100;

const APPEND = `mutation ($threadId: ID!, $i: Int!) {
  appendNodes(input: { threadId: $threadId, nodes: [{ kind: INFERENCE, payload: { i: $i } }] }) {
    __typename
  }
}`;
const SUBSCRIBE = `subscription ($threadId: ID!, $afterIndex: Int) {
  threadEvents(threadId: $threadId, afterIndex: $afterIndex) { index }
}`;

interface Round {
  /** Publish (after commit) → arrival. */
  latencies: number[];
  /** Mutation sent → arrival. */
  endToEnd: number[];
  received: number;
  expected: number;
  appendMs: number;
}

export async function runApiSubscribersBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'weft-bench-subs-'));
  const databaseUrl = `file:${join(root, 'weft.db')}`;
  await migrate(databaseUrl);
  const store = openThreadStore(databaseUrl);
  const hub = createEventHub({ store, bufferSize: 4096 });
  // When each entry was committed and handed to the hub, by thread and index.
  const publishedAt = new Map<string, number[]>();
  const engine = createEngine({
    store,
    publisher: {
      publish(event) {
        const times = publishedAt.get(event.threadId) ?? [];
        publishedAt.set(event.threadId, times);
        for (const entry of event.entries) times[entry.index] = performance.now();
        return hub.publish(event);
      },
    },
  });
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_REQUEST_LOG: process.env.WEFT_REQUEST_LOG ?? 'off',
  });
  const app = buildApp({ config, engine, extendContext: () => ({ events: hub }) });
  const url = await app.start();
  try {
    const baseline = await round(url, engine, publishedAt, 'baseline', 1);
    const many = await round(url, engine, publishedAt, 'many', SUBSCRIBERS);
    const p = (r: Round, q: number) => percentile(r.latencies, q);
    const complete = many.received === many.expected;
    printTable(
      `API subscribers: ${fmt(SUBSCRIBERS)} graphql-ws subscribers on one thread, ${APPENDS} appendNodes over HTTP`,
      [
        {
          measure: 'events delivered / expected',
          value: `${fmt(many.received)} / ${fmt(many.expected)}`,
          target: 'all',
          verdict: complete ? 'ok' : 'MISSED',
        },
        {
          measure: `delivery latency p50 (${SUBSCRIBERS} subscribers)`,
          value: `${fmt(p(many, 50), 1)} ms`,
          target: '',
          verdict: '',
        },
        {
          measure: `delivery latency p99 (${SUBSCRIBERS} subscribers)`,
          value: `${fmt(p(many, 99), 1)} ms`,
          target: `≤ ${TARGET_P99_MS} ms`,
          verdict: p(many, 99) <= TARGET_P99_MS ? 'ok' : 'MISSED',
        },
        {
          measure: 'delivery latency max',
          value: `${fmt(Math.max(...many.latencies), 1)} ms`,
          target: '',
          verdict: '',
        },
        {
          measure: 'end-to-end p50 / p99 (mutation sent → event received)',
          value: `${fmt(percentile(many.endToEnd, 50), 1)} / ${fmt(percentile(many.endToEnd, 99), 1)} ms`,
          target: '',
          verdict: '',
        },
        {
          measure: 'baseline p50 / p99 (1 subscriber, same run)',
          value: `${fmt(p(baseline, 50), 1)} / ${fmt(p(baseline, 99), 1)} ms`,
          target: '',
          verdict: '',
        },
        {
          measure: 'p99 ratio (many / one)',
          value: `${fmt(p(many, 99) / Math.max(0.001, p(baseline, 99)), 1)}×`,
          target: '',
          verdict: '',
        },
        {
          measure: 'append round trip mean (many / one)',
          value: `${fmt(many.appendMs / APPENDS, 1)} / ${fmt(baseline.appendMs / APPENDS, 1)} ms`,
          target: '',
          verdict: '',
        },
      ],
    );
  } finally {
    await app.stop();
    await hub.close();
    await engine.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** One measured round on a fresh thread: `subscribers` clients, APPENDS sequential appends. */
async function round(
  url: string,
  engine: ReturnType<typeof createEngine>,
  publishedAt: Map<string, number[]>,
  threadId: string,
  subscribers: number,
): Promise<Round> {
  const created = await engine.createThread({ threadId });
  if (!created.ok) throw new Error(created.error.message);
  const sentAt: number[] = []; // by log index
  const latencies: number[] = [];
  const endToEnd: number[] = [];
  let received = 0;
  let warm = 0;
  let onWarm: (() => void) | undefined;
  let onDone: (() => void) | undefined;
  const expected = subscribers * APPENDS;
  const clients: Client[] = [];
  // Connect in batches: 1,000 simultaneous handshakes overflow the listen backlog.
  for (let s = 0; s < subscribers; s += CONNECT_BATCH) {
    const batch = Math.min(CONNECT_BATCH, subscribers - s);
    const connecting = Promise.all(
      Array.from({ length: batch }, () => {
        const { client, connected } = connect(url);
        clients.push(client);
        return connected;
      }),
    ).then(() => undefined);
    await withTimeout(connecting, 60_000, () => `cannot connect subscribers ${s}–${s + batch}`);
  }
  for (const client of clients) {
    client.subscribe<{ threadEvents: { index: number } }>(
      { query: SUBSCRIBE, variables: { threadId, afterIndex: 0 } },
      {
        next: (result) => {
          const index = result.data?.threadEvents.index;
          if (index === undefined) return;
          if (index === 1) {
            if (++warm === subscribers) onWarm?.();
            return;
          }
          const now = performance.now();
          latencies.push(now - publishedAt.get(threadId)![index]!);
          endToEnd.push(now - sentAt[index]!);
          if (++received === expected) onDone?.();
        },
        error: (error) => console.error('weft bench: subscriber error', describeError(error)),
        complete: () => undefined,
      },
    );
  }
  const post = (i: number) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: APPEND, variables: { threadId, i } }),
    }).then((r) => r.json());
  // Warm-up append (index 1): every subscriber is attached and has caught up once it arrives.
  const warmed = new Promise<void>((resolve) => {
    onWarm = resolve;
  });
  await post(0);
  await withTimeout(warmed, 120_000, () => `only ${warm} of ${subscribers} subscribers attached`);
  const done = new Promise<void>((resolve) => {
    onDone = resolve;
  });
  const started = performance.now();
  for (let i = 1; i <= APPENDS; i++) {
    sentAt[i + 1] = performance.now();
    await post(i);
  }
  const appendMs = performance.now() - started;
  await withTimeout(done, 60_000, () => `received ${received} of ${expected} events`).catch(
    (error: Error) => console.error(`weft bench: ${error.message}`),
  );
  await Promise.all(clients.map((c) => c.dispose()));
  return { latencies, endToEnd, received, expected, appendMs };
}

/** A graphql-ws client that connects now (retrying a reset handshake); `connected` resolves with it. */
function connect(url: string): { client: Client; connected: Promise<void> } {
  let resolve: () => void = () => undefined;
  const connected = new Promise<void>((done) => {
    resolve = done;
  });
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    lazy: false,
    retryAttempts: 5,
    on: { connected: () => resolve() },
  });
  return { client, connected };
}

const describeError = (error: unknown): string =>
  error instanceof Error
    ? error.message
    : typeof error === 'object' && error !== null && 'code' in error
      ? `closed with code ${String((error as { code: unknown }).code)}`
      : String(error);

function withTimeout(promise: Promise<void>, ms: number, why: () => string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<void>((_, reject) => {
      timer = setTimeout(() => reject(new Error(why())), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

if (import.meta.url === `file://${process.argv[1]}`) await runApiSubscribersBench();
