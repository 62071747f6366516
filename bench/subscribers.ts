/**
 * `npm run bench -- subscribers`: realtime at dashboard scale on one instance (SQLite file).
 * 10,000 graphql-ws subscriptions (`WEFT_BENCH_SUBSCRIPTIONS`) over 100 threads, 100 per socket:
 * 49% `threadEvents(threadId)`, 49% `runStatusChanged(threadId)`, 2% `threadActivity` (every
 * commit of the tenant), while a writer appends 100 times a second (appendNodes over HTTP).
 * The database file is on tmpfs when there is one (/dev/shm): synchronous=FULL on a shared
 * disk caps the writer below 100 appends/s by itself. Measured in this run against the same
 * server with no subscribers: delivery commit → client
 * (threadEvents, p50/p99), `{ __typename }` probe p99, writer throughput (sequential appends for
 * 5 s), CPU and RSS. The hostile row: one caller with 20 sockets × 100 `threadActivity`
 * subscriptions while another appends 20 times a second; others' probe p99 against the idle
 * one. Clients and server share this process (the clients' parsing is in the figures).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Client, createClient } from 'graphql-ws';
import { WebSocket } from 'ws';
import { createEngine, type Engine } from '../src/engine/index.js';
import { createEventHub, type EventHub } from '../src/events/index.js';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { migrate } from '../src/store/migrate/index.js';
import { openThreadStore } from '../src/store/read-model/index.js';
import { fmt, percentile, printTable } from './harness.js';

const SUBSCRIPTIONS = Number(process.env.WEFT_BENCH_SUBSCRIPTIONS ?? 10_000);
const THREADS = 100;
const PER_SOCKET = 100;
const RATE = 100;
const LOAD_SECONDS = Number(process.env.WEFT_BENCH_SECONDS ?? 10);

const APPEND = `mutation ($t: ID!, $i: Int!) {
  appendNodes(input: { threadId: $t, nodes: [{ kind: INFERENCE, payload: { i: $i } }] }) { __typename }
}`;
const THREAD_EVENTS = 'subscription ($t: ID!) { threadEvents(threadId: $t) { index } }';
const RUN_STATUS = 'subscription ($t: ID!) { runStatusChanged(threadId: $t) { status logIndex } }';
const ACTIVITY = 'subscription { threadActivity { threadId index cursor } }';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Bench {
  url: string;
  hub: EventHub;
  engine: Engine;
  publishedAt: Map<string, number[]>;
}

async function post(url: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { errors?: unknown[] };
  if (body.errors !== undefined) throw new Error(JSON.stringify(body.errors));
}

/** Appends at `rate` per second for `seconds` (round robin over the threads); returns the count. */
async function paced(b: Bench, rate: number, seconds: number, threads = THREADS): Promise<number> {
  const start = performance.now();
  let sent = 0;
  const inflight: Promise<void>[] = [];
  while (performance.now() - start < seconds * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    while (sent < due) {
      const i = sent++;
      inflight.push(post(b.url, APPEND, { t: `t${i % threads}`, i }));
    }
    await sleep(2);
  }
  await Promise.all(inflight);
  return sent;
}

/** Sequential appends as fast as they go for `seconds`: appends per second. */
async function writerRate(b: Bench, seconds: number): Promise<number> {
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < seconds * 1000) {
    await post(b.url, APPEND, { t: `t${n % THREADS}`, i: n });
    n++;
  }
  return n / ((performance.now() - start) / 1000);
}

/** `{ __typename }` every 20 ms while `during` runs: the latencies. */
async function probes(url: string, during: Promise<unknown>): Promise<number[]> {
  let done = false;
  void during.finally(() => {
    done = true;
  });
  const out: number[] = [];
  while (!done) {
    const t = performance.now();
    await post(url, '{ __typename }');
    out.push(performance.now() - t);
    await sleep(20);
  }
  return out;
}

interface Load {
  clients: Client[];
  latencies: number[];
  received: () => number;
  close(): void;
}

/** Opens `count` subscriptions of `pick(i)` over sockets of PER_SOCKET. */
async function subscribe(
  b: Bench,
  count: number,
  pick: (i: number) => { query: string; variables?: Record<string, unknown> },
): Promise<Load> {
  const clients: Client[] = [];
  const latencies: number[] = [];
  let received = 0;
  const before = b.hub.groups.stats().subscribers;
  for (let i = 0; i < count; i++) {
    if (i % PER_SOCKET === 0) {
      clients.push(
        createClient({
          url: b.url.replace(/^http/, 'ws'),
          webSocketImpl: WebSocket,
          retryAttempts: 0,
          lazy: false,
        }),
      );
    }
    const { query, variables } = pick(i);
    const sample = query === THREAD_EVENTS && i % 7 === 0;
    const threadId = variables?.t as string | undefined;
    clients.at(-1)!.subscribe(
      { query, ...(variables === undefined ? {} : { variables }) },
      {
        next: (result) => {
          received++;
          if (!sample || threadId === undefined) return;
          const index = (result.data as { threadEvents?: { index: number } })?.threadEvents?.index;
          const at = index === undefined ? undefined : b.publishedAt.get(threadId)?.[index];
          if (at !== undefined) latencies.push(performance.now() - at);
        },
        error: (error) => console.error('subscription error', error),
        complete: () => undefined,
      },
    );
  }
  while (b.hub.groups.stats().subscribers < before + count) await sleep(50);
  return {
    clients,
    latencies,
    received: () => received,
    close: () => {
      for (const client of clients) void client.dispose();
    },
  };
}

async function measured<T>(run: () => Promise<T>): Promise<{ value: T; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = await run();
  const used = process.cpuUsage(cpu);
  return { value, cpu: (used.user + used.system) / 1000 / (performance.now() - start) };
}

export async function runSubscribersBench(): Promise<void> {
  // On tmpfs when there is one: the figures are the subscription path's, not fsync's.
  const root = mkdtempSync(
    join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'weft-bench-dash-'),
  );
  const databaseUrl = `file:${join(root, 'weft.db')}`;
  await migrate(databaseUrl);
  const store = openThreadStore(databaseUrl);
  const hub = createEventHub({
    store,
    bufferSize: 4096,
    subscriptionCaps: { perHolder: 1_000_000, total: 1_000_000 },
  });
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
    WEFT_REQUEST_LOG: 'off',
    WEFT_WS_MAX_CONNECTIONS: '10000',
  });
  const app = buildApp({ config, engine, extendContext: () => ({ events: hub }) });
  const url = await app.start();
  const b: Bench = { url, hub, engine, publishedAt };
  try {
    for (let t = 0; t < THREADS; t++) {
      await post(url, `mutation { createThread(input: { threadId: "t${t}" }) { __typename } }`);
    }
    // No subscribers: the writer's rate, then probes under the paced writer.
    const idleWriter = await writerRate(b, 5);
    const idle = await measured(() => probes(url, paced(b, RATE, LOAD_SECONDS)));
    const rssIdle = process.memoryUsage().rss;

    const opened = performance.now();
    const load = await subscribe(b, SUBSCRIPTIONS, (i) => {
      const t = `t${i % THREADS}`;
      // Each thread gets every kind: the kind goes by the round of threads, not the thread.
      const slot = Math.floor(i / THREADS) % 100;
      if (slot < 2) return { query: ACTIVITY };
      return { query: slot % 2 === 0 ? THREAD_EVENTS : RUN_STATUS, variables: { t } };
    });
    const openMs = performance.now() - opened;
    // Every member meets its group at its thread's first commit.
    await paced(b, RATE, 2);
    load.latencies.length = 0;
    const receivedBefore = load.received();
    const loaded = await measured(() => probes(url, paced(b, RATE, LOAD_SECONDS)));
    const rssLoaded = process.memoryUsage().rss;
    const delivered = load.received() - receivedBefore;
    const loadedWriter = await writerRate(b, 5);
    const groups = hub.groups.stats();
    load.close();
    while (hub.groups.stats().subscribers > 0) await sleep(50);

    // Hostile: one caller, 20 sockets × 100 threadActivity, another appending 20/s.
    const hostile = await subscribe(b, 2_000, () => ({ query: ACTIVITY }));
    await paced(b, 20, 2);
    const attacked = await measured(() => probes(url, paced(b, 20, LOAD_SECONDS)));
    const hostileDelivered = hostile.received();
    hostile.close();

    const probeIdle = percentile(idle.value, 99);
    const probeLoaded = percentile(loaded.value, 99);
    const probeAttacked = percentile(attacked.value, 99);
    const p50 = percentile(load.latencies, 50);
    const p99 = percentile(load.latencies, 99);
    const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');
    printTable(
      `Dashboard scale: ${fmt(SUBSCRIPTIONS)} subscriptions over ${THREADS} threads, ${RATE} appends/s, one instance (SQLite)`,
      [
        {
          measure: 'subscriptions opened in',
          value: `${fmt(openMs / 1000, 1)} s`,
          target: '',
          verdict: '',
        },
        {
          measure: 'groups / members at the end',
          value: `${fmt(groups.groups)} / ${fmt(groups.subscribers)}`,
          target: '',
          verdict: '',
        },
        {
          measure: 'events delivered while loaded',
          value: fmt(delivered),
          target: '',
          verdict: '',
        },
        {
          measure: 'delivery p50 (commit → client)',
          value: `${fmt(p50, 1)} ms`,
          target: '',
          verdict: '',
        },
        {
          measure: 'delivery p99 (commit → client)',
          value: `${fmt(p99, 1)} ms`,
          target: '≤ 250 ms',
          verdict: verdict(p99 <= 250),
        },
        {
          measure: '{ __typename } p99: loaded / idle',
          value: `${fmt(probeLoaded, 1)} / ${fmt(probeIdle, 1)} ms`,
          target: '≤ 2×',
          verdict: verdict(probeLoaded <= 2 * probeIdle),
        },
        {
          measure: 'writer appends/s: loaded / idle',
          value: `${fmt(loadedWriter)} / ${fmt(idleWriter)} (${fmt((100 * loadedWriter) / idleWriter)}%)`,
          target: '≥ 90%',
          verdict: verdict(loadedWriter >= 0.9 * idleWriter),
        },
        {
          measure: 'RSS: loaded / idle',
          value: `${fmt(rssLoaded / 2 ** 20)} / ${fmt(rssIdle / 2 ** 20)} MiB`,
          target: '≤ 1 GiB',
          verdict: verdict(rssLoaded <= 2 ** 30),
        },
        {
          measure: 'CPU (cores busy): loaded / idle',
          value: `${fmt(loaded.cpu, 2)} / ${fmt(idle.cpu, 2)}`,
          target: '',
          verdict: '',
        },
        {
          measure:
            'hostile: 20 sockets × 100 threadActivity, 20 appends/s: others’ probe p99 / idle',
          value: `${fmt(probeAttacked, 1)} / ${fmt(probeIdle, 1)} ms (CPU ${fmt(attacked.cpu, 2)}, ${fmt(hostileDelivered)} events)`,
          target: '≤ 2×',
          verdict: verdict(probeAttacked <= 2 * probeIdle),
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
