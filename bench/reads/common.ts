/**
 * What every section of `npm run bench -- reads` shares: the backends (a fresh SQLite file or a
 * fresh Postgres database per section, dropped at the end), a raw driver connection on the same
 * database (the baseline), an in-process server over HTTP, thread building through the engine's
 * batch append, and the table rows.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { JsonValue } from '../../src/core/json.js';
import type { Engine } from '../../src/engine/index.js';
import { type App, buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { migrate } from '../../src/store/migrate/index.js';
import { fmt, percentile, type Row } from '../harness.js';

export const POSTGRES_URL =
  process.env.WEFT_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type BackendName = 'sqlite' | 'postgres';

export const log = (message: string) => console.log(`  [reads] ${message}`);

export function must<T>(
  result: { ok: true; value: T } | { ok: false; error: { message: string } },
): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/** A database of its own for one section on one backend. */
export interface BenchDb {
  backend: BackendName;
  url: string;
  /** A raw driver connection (better-sqlite3 / pg) on the same database. */
  raw(): Promise<RawDb>;
  drop(): Promise<void>;
}

/** The baseline: statements with `$n` placeholders (turned into `?` on SQLite, in order). */
export interface RawDb {
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** Why Postgres cannot be used, or undefined when it answers. */
export async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A migrated database for `label`: a file under `root`, or a fresh Postgres database. */
export async function openBenchDb(
  backend: BackendName,
  root: string,
  label: string,
): Promise<BenchDb> {
  if (backend === 'sqlite') {
    const path = join(root, `${label}.db`);
    const url = `file:${path}`;
    await migrate(url);
    return {
      backend,
      url,
      raw: async () => rawSqlite(path),
      drop: async () => undefined, // the root directory is removed at the end
    };
  }
  const name = `weft_bench_reads_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const u = new URL(POSTGRES_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  await migrate(url);
  return {
    backend,
    url,
    raw: () => rawPostgres(url),
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await client.end();
    },
  };
}

function rawSqlite(path: string): RawDb {
  const db = new Database(path, { readonly: true });
  const statements = new Map<string, Database.Statement>();
  return {
    query: async (sql, params = []) => {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql.replace(/\$\d+/g, '?'));
        statements.set(sql, statement);
      }
      return statement.all(...params) as Record<string, unknown>[];
    },
    close: async () => {
      db.close();
    },
  };
}

async function rawPostgres(url: string): Promise<RawDb> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    query: async (sql, params = []) => (await client.query(sql, params)).rows,
    close: () => client.end(),
  };
}

/** A server in this process on `engine`, over HTTP on a loopback port. */
export async function startApp(
  databaseUrl: string,
  engine: Engine,
  extendContext?: () => Record<string, unknown>,
): Promise<{ url: string; app: App }> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_REQUEST_LOG: process.env.WEFT_REQUEST_LOG ?? 'off',
  });
  const app = buildApp({
    config,
    engine,
    ...(extendContext === undefined ? {} : { extendContext }),
  });
  return { url: await app.start(), app };
}

/**
 * The raw baseline served the way the API is: a bare `node:http` server in this process that
 * answers each POST by running `read` (the raw driver's statements) on the request's variables
 * and writing `{ data }` as JSON, timed with the same client (`gql`). No server answers over
 * HTTP in less, so API / this is the cost of Weft's layers (GraphQL, the store, the views) on top
 * of the same rows over the same transport; the in-process raw read is shown beside it.
 */
export async function startRawServer(
  read: (variables: Record<string, unknown>) => Promise<unknown>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        variables?: Record<string, unknown>;
      };
      read(body.variables ?? {}).then(
        (data) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ data }));
        },
        (error: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ errors: [{ message: String(error) }] }));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** POSTs one GraphQL operation; throws on a non-200 answer or GraphQL errors. */
export async function gql(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ data: Record<string, unknown>; bytes: number }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  const body = JSON.parse(text) as { data?: Record<string, unknown>; errors?: unknown[] };
  if (response.status !== 200 || body.errors !== undefined || body.data === undefined) {
    throw new Error(`GraphQL answered ${response.status}: ${text.slice(0, 300)}`);
  }
  return { data: body.data, bytes: text.length };
}

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const WORDS = ['agent', 'file', 'read', 'config', 'plan', 'result', 'tool', 'call', 'user', 'goal'];
const KINDS = ['inference', 'tool_call', 'tool_result', 'answer'] as const;

/** `count` nodes of ~250 B canonical payloads, deterministic per seed. */
export function benchNodes(count: number, seed: number, from = 0) {
  const rand = lcg(seed);
  return Array.from({ length: count }, (_, i) => ({
    kind: KINDS[(from + i) % KINDS.length]!,
    payload: {
      step: from + i,
      text: Array.from({ length: 28 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' '),
      ok: rand() > 0.5,
      tags: ['bench', `s${seed}`],
    } as JsonValue,
  }));
}

/** Creates `threadId` and appends `nodes` nodes to it, `batch` per appendNodes. */
export async function buildThread(
  engine: Engine,
  threadId: string,
  nodes: number,
  batch = 1_000,
): Promise<void> {
  must(await engine.createThread({ threadId }));
  for (let done = 0; done < nodes; done += batch) {
    const size = Math.min(batch, nodes - done);
    must(await engine.appendNodes({ threadId, nodes: benchNodes(size, done + 1, done) }));
  }
}

/**
 * How long a section may spend building at most (WEFT_BENCH_READS_BUILD_CAP_S scales every cap;
 * default 1 = the seconds given): on a slow disk or a loaded machine a build stops starting new
 * work at the cap, and the section measures what was built and says so.
 */
export const buildCapMs = (seconds: number) =>
  seconds * 1000 * Number(process.env.WEFT_BENCH_READS_BUILD_CAP_SCALE ?? 1);

/**
 * Builds the threads of `ids` with `nodes` nodes, `parallel` threads at a time (their commits
 * share write transactions), printing progress every `everyMs`; no thread is started after
 * `capMs`. Returns the milliseconds taken and how many threads (the first of `ids`) were built.
 */
export async function buildThreadsCapped(
  engine: Engine,
  ids: readonly string[],
  nodes: number,
  parallel: number,
  label: string,
  capMs: number,
  everyMs = 10_000,
): Promise<{ ms: number; built: number }> {
  const started = performance.now();
  let next = 0;
  let built = 0;
  let lastReport = started;
  await Promise.all(
    Array.from({ length: Math.min(parallel, ids.length) }, async () => {
      while (next < ids.length && performance.now() - started < capMs) {
        const id = ids[next++]!;
        await buildThread(engine, id, nodes);
        built++;
        if (performance.now() - lastReport >= everyMs) {
          lastReport = performance.now();
          const s = (lastReport - started) / 1000;
          log(
            `${label}: ${fmt(built)}/${fmt(ids.length)} threads (${fmt(built * nodes)} nodes) in ${fmt(s, 1)} s, ${fmt((built * nodes) / s)} nodes/s`,
          );
        }
      }
    }),
  );
  return { ms: performance.now() - started, built: next };
}

/** buildThreadsCapped with no cap; returns the milliseconds taken. */
export async function buildThreads(
  engine: Engine,
  ids: readonly string[],
  nodes: number,
  parallel: number,
  label: string,
  everyMs = 10_000,
): Promise<number> {
  return (await buildThreadsCapped(engine, ids, nodes, parallel, label, Infinity, everyMs)).ms;
}

/** Times `fn`, in milliseconds. */
export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export const p = (values: number[], q: number) => percentile(values, q);

export const ms = (value: number) => `${fmt(value, value < 10 ? 2 : 1)} ms`;

export const verdict = (okay: boolean): Row['verdict'] => (okay ? 'ok' : 'MISSED');

/**
 * The rows comparing an API's p50 with the raw read's: over HTTP (the verdict) and in process
 * (context: no server of any kind answers within a few times an in-process read of a few rows).
 */
export function rawRatioRows(
  what: string,
  api: number[],
  rawHttp: number[],
  rawInProcess: number[],
  target = 0.25,
): Row[] {
  const overHttp = p(rawHttp, 50) / p(api, 50);
  const inProcess = p(rawInProcess, 50) / p(api, 50);
  return [
    row(
      `${what}, raw over HTTP p50 / p99 (the raw read behind a bare node:http server, same client)`,
      `${ms(p(rawHttp, 50))} / ${ms(p(rawHttp, 99))}`,
      'baseline',
    ),
    row(
      `${what}, raw over HTTP / API at p50`,
      `${fmt(overHttp * 100, 1)}% (p99: ${fmt((p(rawHttp, 99) / p(api, 99)) * 100, 1)}%)`,
      `≥ ${fmt(target * 100)}%`,
      verdict(overHttp >= target),
    ),
    row(
      `${what}, raw in process / API at p50 (no transport on the raw side)`,
      `${fmt(inProcess * 100, 1)}% (p99: ${fmt((p(rawInProcess, 99) / p(api, 99)) * 100, 1)}%)`,
      `(context; ≥ ${fmt(target * 100)}% would need the whole HTTP request within ${ms(p(rawInProcess, 50) / target)})`,
    ),
  ];
}

export const row = (
  measure: string,
  value: string,
  target = '',
  result: Row['verdict'] = '',
): Row => ({ measure, value, target, verdict: result });

/** A section's rows and timings, printed together by bench/reads.ts. */
export interface SectionResult {
  rows: Row[];
  notes: string[];
}

/** Sizes: the full run's, or smaller ones for a smoke check (--quick). */
export interface ReadsSizes {
  quick: boolean;
  /** Section 1: the two thread sizes, threads built of each, samples per size. */
  smallThread: number;
  bigThread: number;
  smallThreads: number;
  bigThreads: number;
  threadSamples: number;
  /** Section 2. */
  listThreads: number;
  listSamples: number;
  /** Section 3. */
  replayEntries: number;
  replaySubscribers: number;
  pausedSubscribers: number;
  probeBaselineMs: number;
  /** Section 4. */
  rssThreads: number;
  rssThreadNodes: number;
  cacheBytes: number;
  /** Section 5. */
  approvals: number;
  searchNodes: number;
}

export function readsSizes(quick: boolean): ReadsSizes {
  const cacheBytes = Number(process.env.WEFT_CACHE_BYTES ?? 256 * 2 ** 20);
  return quick
    ? {
        quick,
        smallThread: 1_000,
        bigThread: 10_000,
        smallThreads: 2,
        bigThreads: 1,
        threadSamples: 10,
        listThreads: 2_000,
        listSamples: 30,
        replayEntries: 5_000,
        replaySubscribers: 16,
        pausedSubscribers: 4,
        probeBaselineMs: 2_000,
        rssThreads: 20,
        rssThreadNodes: 2_000,
        cacheBytes,
        approvals: 200,
        searchNodes: 10_000,
      }
    : {
        quick,
        smallThread: 1_000,
        bigThread: 100_000,
        smallThreads: 4,
        bigThreads: 1,
        threadSamples: 200,
        listThreads: 100_000,
        listSamples: 200,
        replayEntries: 100_000,
        replaySubscribers: 16,
        pausedSubscribers: 4,
        probeBaselineMs: 5_000,
        rssThreads: 200,
        rssThreadNodes: 10_000,
        cacheBytes,
        approvals: 10_000,
        searchNodes: 1_000_000,
      };
}
