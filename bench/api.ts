/**
 * `npm run bench -- api`: `appendNodes` over HTTP at concurrency 32 against the same server's
 * `{ __typename }` (the cost of HTTP + GraphQL with no work), both measured in this run with
 * p50/p99 latency. One SQLite file (WAL, group commit); 32 agents, each appending to its own
 * thread, one node per request. Best of three rounds each, rounds alternated.
 * (Subscriber fan-out figures belong to the subscriptions benchmark.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine } from '../src/engine/index.js';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { migrate } from '../src/store/migrate/index.js';
import { fmt, percentile, printTable } from './harness.js';

const CONCURRENCY = 32;
const ROUND_MS = Number(process.env.WEFT_BENCH_API_MS ?? 5000);
const ROUNDS = 3;

interface Round {
  requests: number;
  perSec: number;
  p50: number;
  p99: number;
  failures: number;
}

/** `CONCURRENCY` workers, each sending `body(worker, i)` back to back for ROUND_MS. */
async function load(url: string, body: (worker: number, i: number) => string): Promise<Round> {
  const latencies: number[] = [];
  let failures = 0;
  const deadline = performance.now() + ROUND_MS;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t0 = performance.now();
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: body(worker, i),
        });
        const text = await response.text();
        latencies.push(performance.now() - t0);
        if (response.status !== 200 || text.includes('"errors"') || text.includes('Error"')) {
          failures++;
        }
      }
    }),
  );
  const elapsed = performance.now() - started;
  return {
    requests: latencies.length,
    perSec: (latencies.length / elapsed) * 1000,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    failures,
  };
}

const best = (rounds: Round[]) => rounds.reduce((a, b) => (b.perSec > a.perSec ? b : a));

export async function runApiBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-api-'));
  const databaseUrl = `file:${join(dir, 'bench.db')}`;
  await migrate(databaseUrl);
  const engine = createEngine({ databaseUrl });
  const app = buildApp({
    // The server's defaults, but for the JSON request log unless WEFT_REQUEST_LOG says (the
    // bench's own table would drown in it).
    config: {
      ...loadConfig({
        DATABASE_URL: databaseUrl,
        PORT: '0',
        WEFT_REQUEST_LOG: process.env.WEFT_REQUEST_LOG ?? 'off',
      }),
    },
    engine,
  });
  const url = await app.start();
  try {
    for (let w = 0; w < CONCURRENCY; w++) {
      const created = await engine.createThread({ threadId: `agent-${w}` });
      if (!created.ok) throw new Error(created.error.message);
    }
    const typename = JSON.stringify({ query: '{ __typename }' });
    const APPEND =
      'mutation($t: ID!, $p: JSON!) { appendNodes(input: { threadId: $t, nodes: [{ kind: INFERENCE, payload: $p }] }) { __typename ... on AppendNodesSuccess { logIndex } } }';
    let round = 0;
    const append = (worker: number, i: number) =>
      JSON.stringify({
        query: APPEND,
        variables: { t: `agent-${worker}`, p: { round, i, text: 'thinking about the weather' } },
      });
    // Warm-up: JIT, statement caches, the thread cache.
    await load(url, () => typename);
    await load(url, append);
    const baseline: Round[] = [];
    const appends: Round[] = [];
    for (round = 1; round <= ROUNDS; round++) {
      baseline.push(await load(url, () => typename));
      appends.push(await load(url, append));
    }
    const b = best(baseline);
    const a = best(appends);
    const ratio = a.perSec / b.perSec;
    const stats = engine.store.writerStats();
    printTable(
      `API over HTTP (SQLite, ${CONCURRENCY} concurrent clients, best of ${ROUNDS} × ${ROUND_MS / 1000} s)`,
      [
        {
          measure: '{ __typename } throughput',
          value: `${fmt(b.perSec)} req/s (p50 ${fmt(b.p50, 1)} ms, p99 ${fmt(b.p99, 1)} ms)`,
          target: 'baseline',
          verdict: '',
        },
        {
          measure: 'appendNodes throughput (1 node/request)',
          value: `${fmt(a.perSec)} req/s (p50 ${fmt(a.p50, 1)} ms, p99 ${fmt(a.p99, 1)} ms)`,
          target: '',
          verdict: '',
        },
        {
          measure: 'appendNodes / { __typename }',
          value: `${fmt(ratio * 100, 1)}%`,
          target: '≥ 50%',
          verdict: ratio >= 0.5 ? 'ok' : 'MISSED',
        },
        {
          measure: 'failed requests',
          value: `${a.failures + b.failures}`,
          target: '0',
          verdict: a.failures + b.failures === 0 ? 'ok' : 'MISSED',
        },
        {
          measure: 'commits per write transaction (group commit)',
          value: fmt(stats.items / Math.max(1, stats.transactions), 1),
          target: '',
          verdict: '',
        },
      ],
    );
  } finally {
    await app.stop();
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // The realtime half: 1,000 graphql-ws subscribers on one thread.
  if (process.env.WEFT_BENCH_API_SUBSCRIBERS !== 'off') {
    await (await import('./api-subscribers.js')).runApiSubscribersBench();
  }
}
