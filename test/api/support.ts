/**
 * In-process API tests: an app on a fresh database (real SQLite files; Postgres where asked),
 * requests through `yoga.fetch`, and a read API wrapped to count its calls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createReads, type Reads } from '../../src/reads/index.js';
import { type App, buildApp } from '../../src/server/app.js';
import { loadConfig, type ServerConfig } from '../../src/server/config.js';
import type { Tracing } from '../../src/server/tracing.js';
import { migrate } from '../../src/store/migrate/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { createTestDatabase, type TestDatabase } from '../support/services.js';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  data?: T | null;
  errors?: Array<{ message: string; path?: string[]; extensions?: Record<string, unknown> }>;
  headers: Headers;
  text: string;
}

export interface TestApp {
  app: App;
  engine: Engine;
  reads: Reads;
  url: string;
  /** Read-API calls by method since the last `resetCalls()`. */
  calls: Map<string, number>;
  resetCalls(): void;
  totalCalls(): number;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response data loosely by default
  gql<T = any>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse<T>>;
  post(body: string, headers?: Record<string, string>): Promise<GraphQLResponse>;
  close(): Promise<void>;
}

let root: string | undefined;
let n = 0;
const databases: TestDatabase[] = [];

afterAll(async () => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  await Promise.all(databases.splice(0).map((db) => db.drop()));
});

export async function freshSqliteUrl(): Promise<string> {
  root ??= mkdtempSync(join(tmpdir(), 'weft-api-'));
  const url = `file:${join(root, `db-${++n}.db`)}`;
  await migrate(url);
  return url;
}

export async function freshPostgresUrl(): Promise<string> {
  const db = await createTestDatabase();
  databases.push(db);
  await migrate(db.url);
  return db.url;
}

/** Counts every call of every method of `reads`; the `failing` ones throw an unexpected error. */
function counted(reads: Reads, calls: Map<string, number>, failing: readonly string[] = []): Reads {
  return new Proxy(reads, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(prop, (calls.get(prop) ?? 0) + 1);
        if (failing.includes(prop)) throw new Error(`${prop}: disk on fire at /secret/path`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export async function createTestApp(
  options: {
    backend?: 'sqlite' | 'postgres';
    config?: Partial<ServerConfig>;
    engine?: Partial<Parameters<typeof createEngine>[0]>;
    plugins?: Parameters<typeof buildApp>[0]['plugins'];
    /** Read-API methods that throw a plain Error (an unexpected failure). */
    failing?: string[];
    /** Encryption at rest with this key. */
    encryptionKey?: Uint8Array;
    /** Weft's own traces (server/tracing.ts). */
    tracing?: Tracing;
  } = {},
): Promise<TestApp> {
  const url = options.backend === 'postgres' ? await freshPostgresUrl() : await freshSqliteUrl();
  const engine = createEngine({
    store: openThreadStore(
      url,
      options.encryptionKey === undefined ? {} : { encryptionKey: options.encryptionKey },
    ),
    clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
    ids: createSequentialIds('id'),
    ...options.engine,
  });
  const calls = new Map<string, number>();
  const reads = counted(createReads(engine, { databaseUrl: url }), calls, options.failing);
  const config = {
    ...loadConfig({ DATABASE_URL: url, PORT: '0', WEFT_REQUEST_LOG: 'off' }),
    ...options.config,
  };
  const app = buildApp({
    config,
    engine,
    reads,
    ...(options.plugins === undefined ? {} : { plugins: options.plugins }),
    tracing: options.tracing,
  });
  const request = async (body: string, headers: Record<string, string> = {}) => {
    const response = await app.yoga.fetch('http://weft.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body,
    });
    const text = await response.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = {};
    }
    return { status: response.status, headers: response.headers, text, ...parsed };
  };
  return {
    app,
    engine,
    reads,
    url,
    calls,
    resetCalls: () => calls.clear(),
    totalCalls: () => [...calls.values()].reduce((a, b) => a + b, 0),
    gql: (query, variables) => request(JSON.stringify({ query, variables })) as never,
    post: request as never,
    async close() {
      await app.stop();
      await reads.close();
      await engine.close();
    },
  };
}
