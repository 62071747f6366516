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
 * one. The subscribers run in a process of their own (subscribers-clients.ts), as they would
 * on other machines; the writer and the probes run in the server's process. CPU and RSS are
 * the server process's.
 */

import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createEngine, type Engine } from '../src/engine/index.js';
import { createEventHub, type EventHub } from '../src/events/index.js';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { migrate } from '../src/store/migrate/index.js';
import { openThreadStore } from '../src/store/read-model/index.js';
import { fmt, percentile, printTable } from './harness.js';
import type { ClientRequest, Samples } from './subscribers-clients.js';

const SUBSCRIPTIONS = Number(process.env.WEFT_BENCH_SUBSCRIPTIONS ?? 10_000);
const THREADS = 100;
const PER_SOCKET = 100;
const RATE = 100;
const LOAD_SECONDS = Number(process.env.WEFT_BENCH_SECONDS ?? 10);

const APPEND = `mutation ($t: ID!, $i: Int!) {
  appendNodes(input: { threadId: $t, nodes: [{ kind: INFERENCE, payload: { i: $i } }] }) { __typename }
}`;

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
  /** Events received since the last call, and the delivery latencies of the sampled ones. */
  take(): Promise<{ received: number; latencies: number[]; cores: number }>;
  close(): Promise<void>;
}

/**
 * Opens `count` subscriptions (the bench's mix, or threadActivity only) over sockets of
 * PER_SOCKET in the clients' process (subscribers-clients.ts); resolves once the server holds
 * them all.
 */
async function subscribe(b: Bench, count: number, mix: 'mix' | 'activity'): Promise<Load> {
  const child: ChildProcess = fork(
    fileURLToPath(new URL('./subscribers-clients.ts', import.meta.url)),
    [],
    {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  let next = 0;
  const pending = new Map<number, (reply: unknown) => void>();
  child.on('message', (reply: { id: number }) => {
    pending.get(reply.id)?.(reply);
    pending.delete(reply.id);
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the clients' process exited (${code})`))),
  );
  exited.catch(() => undefined);
  const ask = <T>(request: ClientRequest): Promise<T> =>
    Promise.race([
      new Promise<T>((resolve) => {
        const id = ++next;
        pending.set(id, resolve as (reply: unknown) => void);
        child.send({ ...request, id });
      }),
      exited,
    ]);
  const before = b.hub.groups.stats().subscribers;
  await ask({ op: 'subscribe', url: b.url, count, perSocket: PER_SOCKET, threads: THREADS, mix });
  while (b.hub.groups.stats().subscribers < before + count) await sleep(50);
  return {
    async take() {
      const samples = await ask<Samples>({ op: 'samples' });
      if (samples.errors.length > 0) console.error('subscription errors', samples.errors);
      const latencies: number[] = [];
      const { arrivals } = samples;
      for (let i = 0; i < arrivals.length; i += 3) {
        const at = b.publishedAt.get(`t${arrivals[i]}`)?.[arrivals[i + 1]!];
        if (at !== undefined) latencies.push(arrivals[i + 2]! - at);
      }
      return { received: samples.received, latencies, cores: samples.cores };
    },
    async close() {
      await ask({ op: 'close' });
      child.disconnect();
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
        // Wall-clock milliseconds, which the clients' process shares.
        const at = performance.timeOrigin + performance.now();
        for (const entry of event.entries) times[entry.index] = at;
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
    const load = await subscribe(b, SUBSCRIPTIONS, 'mix');
    const openMs = performance.now() - opened;
    // Every member meets its group at its thread's first commit.
    await paced(b, RATE, 2);
    await load.take();
    const loaded = await measured(() => probes(url, paced(b, RATE, LOAD_SECONDS)));
    const rssLoaded = process.memoryUsage().rss;
    const { received: delivered, latencies, cores: clientsLoaded } = await load.take();
    const loadedWriter = await writerRate(b, 5);
    const clientsWriter = (await load.take()).cores;
    const groups = hub.groups.stats();
    await load.close();
    while (hub.groups.stats().subscribers > 0) await sleep(50);

    // Hostile: one caller, 20 sockets × 100 threadActivity, another appending 20/s.
    const hostile = await subscribe(b, 2_000, 'activity');
    await paced(b, 20, 2);
    await hostile.take();
    const attacked = await measured(() => probes(url, paced(b, 20, LOAD_SECONDS)));
    const hostileDelivered = (await hostile.take()).received;
    await hostile.close();

    const probeIdle = percentile(idle.value, 99);
    const probeLoaded = percentile(loaded.value, 99);
    const probeAttacked = percentile(attacked.value, 99);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
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
          // On a machine of few cores the subscribers' own process takes a share of the same
          // cores: what is left for the server, and so for the writer, is what this shows.
          measure: "subscribers' process CPU (cores busy): loaded / writer",
          value: `${fmt(clientsLoaded, 2)} / ${fmt(clientsWriter, 2)}`,
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
