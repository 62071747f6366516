/**
 * An app that requires API keys, on a fresh SQLite file: the engine publishes to an event hub
 * (subscriptions over SSE in process, and graphql-ws once `listen()` opened a port), keys are
 * created in the same database, and requests carry `Authorization: Bearer <key>`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createEventHub, type EventHub } from '../../src/events/index.js';
import { type App, buildApp } from '../../src/server/app.js';
import {
  type ApiKeyStore,
  type Authenticator,
  type AuthMode,
  apiKeys,
  createAuthenticator,
} from '../../src/server/auth/index.js';
import { type ServerAuth, serverAuth } from '../../src/server/auth/startup.js';
import { loadConfig } from '../../src/server/config.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { abortable, sseData } from '../api/subscriptions-support.js';
import type { TestDatabase } from '../support/services.js';

// biome-ignore lint/suspicious/noExplicitAny: tests read response data loosely
export type Json = any;

export interface Response {
  status: number;
  data?: Json;
  errors?: Array<{ message: string; extensions?: Json }>;
}

export interface AuthApp {
  app: App;
  engine: Engine;
  hub: EventHub;
  keys: ApiKeyStore;
  authenticator: Authenticator;
  databaseUrl: string;
  /** A key for `tenant` with `scopes` (created in the database). */
  key(tenant: string, scopes: string[]): Promise<{ id: string; key: string }>;
  gql(
    key: string | undefined,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<Response>;
  /** A subscription over SSE in process: resolves once the server answered the request. */
  sse(
    key: string | undefined,
    query: string,
    variables?: Record<string, unknown>,
  ): Promise<AsyncIterableIterator<Response>>;
  /** Listens on a free loopback port; resolves with the GraphQL URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

let root: string | undefined;
let n = 0;
const databases: TestDatabase[] = [];

afterAll(async () => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  await Promise.all(databases.splice(0).map((db) => db.drop()));
});

export async function freshDatabase(): Promise<string> {
  root ??= mkdtempSync(join(tmpdir(), 'weft-auth-'));
  const url = `file:${join(root, `db-${++n}.db`)}`;
  await migrate(url);
  return url;
}

/** A fresh, migrated Postgres database (callers check that Postgres is available). */
async function freshPostgresDatabase(): Promise<string> {
  // Imported here: the services module checks for Postgres when loaded, which SQLite-only
  // suites need not wait for.
  const { createTestDatabase } = await import('../support/services.js');
  const db = await createTestDatabase();
  databases.push(db);
  await migrate(db.url);
  return db.url;
}

export async function createAuthApp(
  options: {
    mode?: AuthMode;
    env?: Record<string, string>;
    revalidateMs?: number;
    backend?: 'sqlite' | 'postgres';
  } = {},
): Promise<AuthApp> {
  const databaseUrl =
    options.backend === 'postgres' ? await freshPostgresDatabase() : await freshDatabase();
  const store = openThreadStore(databaseUrl);
  const hub = createEventHub({ store });
  await hub.ready;
  const engine = createEngine({ store, publisher: hub });
  const db: WeftPrisma = createPrisma(databaseUrl);
  const keys = apiKeys(db);
  const authenticator = createAuthenticator({
    keys,
    mode: options.mode ?? 'keys',
    openCheckMs: 0,
    revalidateMs: options.revalidateMs ?? 50,
  });
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    ...options.env,
  });
  const app = buildApp({
    config,
    engine,
    auth: authenticator,
    extendContext: () => ({ events: hub }),
  });
  const headers = (key: string | undefined): Record<string, string> =>
    key === undefined ? {} : { authorization: `Bearer ${key}` };
  return {
    app,
    engine,
    hub,
    keys,
    authenticator,
    databaseUrl,
    async key(tenant, scopes) {
      const created = await keys.create({ tenant, scopes: scopes as never });
      return { id: created.id, key: created.key };
    },
    async gql(key, query, variables) {
      const response = await app.yoga.fetch('http://weft.test/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...headers(key),
        },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...(await response.json()) };
    },
    async sse(key, query, variables = {}) {
      const controller = new AbortController();
      const response = await app.yoga.fetch('http://weft.test/graphql', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...headers(key),
        },
        body: JSON.stringify({ query, variables }),
        signal: controller.signal,
      });
      return sseEvents(response, controller);
    },
    listen: () => app.start(),
    async close() {
      await app.stop();
      await hub.close();
      await engine.close();
      await db.prisma.$disconnect();
    },
  };
}

/** The `next` payloads of an SSE response; `return()` aborts it. */
function sseEvents(
  response: Response | globalThis.Response,
  controller: AbortController,
): AsyncIterableIterator<Response> {
  const body = (response as globalThis.Response).body;
  async function* run(): AsyncGenerator<Response> {
    if (body === null) return;
    for await (const data of sseData(body, controller.signal)) {
      yield { status: 200, ...(data as object) } as Response;
    }
  }
  return abortable(run(), controller);
}

/** The first payload of a stream (fails when it ends first). */
export async function first(stream: AsyncIterableIterator<Response>): Promise<Response> {
  const step = await stream.next();
  if (step.done === true) throw new Error('the subscription ended without a payload');
  return step.value;
}

/**
 * How a server on `databaseUrl` authenticates (serverAuth), on a client of its own, which the
 * authenticator's `close()` disconnects (a server's is its database's, closed by its root).
 */
export async function serverAuthAt(
  config: { host: string; databaseUrl: string; allowOpen: boolean },
  log?: (line: string) => void,
): Promise<ServerAuth> {
  const db = createPrisma(config.databaseUrl);
  const auth = await serverAuth(config, apiKeys(db), log);
  if ('refused' in auth) {
    await db.prisma.$disconnect();
    return auth;
  }
  const { authenticator } = auth;
  const close = authenticator.close.bind(authenticator);
  authenticator.close = async () => {
    await close();
    await db.prisma.$disconnect();
  };
  return auth;
}
