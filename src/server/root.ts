/**
 * The composition root: what a process running Weft opens, each database once, and closes, once,
 * in the reverse order. A database is opened as one `Database`: migrated, one Prisma client (with
 * the read connection of SQLite or the read pool of Postgres beside it) and the thread store on
 * that client (whose writer, on SQLite, is a connection of its own). Everything else is handed
 * that handle: the engine and its event hub write and replay through the store; a server's read
 * queries and its authenticator's key store run on the client; the deadline and retention
 * sweepers run through the engine. Nothing below opens a database by URL here.
 *
 * `openEngineWithEvents` is what a process embedding Weft (a LangGraph agent's WeftSaver, the
 * CLI) opens; `openServerRoot` is what `weft serve` opens (serve.ts builds the app on it).
 */
import { existsSync } from 'node:fs';
import type { Authenticator } from '../auth/authenticator.js';
import { apiKeys } from '../auth/keys.js';
import {
  type CommittedEvent,
  createEngine,
  type Engine,
  type EngineOptions,
  type Publisher,
  type RetentionSweeper,
  type RetentionSweeperStats,
  resolveEngineOptions,
  startDeadlineScheduler,
  startRetentionSweeper,
} from '../engine/index.js';
import { createEventHub } from '../events/hub.js';
import type { EventHub, EventHubOptions } from '../events/types.js';
import { migrate, parseDatabaseUrl } from '../store/migrate/index.js';
import { createPrisma, type WeftPrisma } from '../store/prisma/index.js';
import {
  openThreadStoreOn,
  type ThreadStore,
  type ThreadStoreOptions,
} from '../store/read-model/index.js';
import { createReadQueries, type ReadQueries } from '../store/read-model/queries.js';
import { decideAuth, NO_KEYS, serverAuth } from './auth/startup.js';
import type { ServerConfig } from './config.js';

/** A start refused for its configuration: `weft serve` prints the message and exits 2. */
export class StartupRefused extends Error {
  override name = 'StartupRefused';
}

/** A process's one handle on a database. */
export interface Database {
  readonly url: string;
  /** The one client on it, with its read connection (SQLite) or read pool (Postgres). */
  readonly weft: WeftPrisma;
  /** The thread store on that client. */
  readonly store: ThreadStore;
  /** Closes the store (its writer, its search thread), then the client; once. */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  store?: ThreadStoreOptions | undefined;
  /** The caller migrated the database already (and reported a failure its own way). */
  migrated?: boolean;
}

/**
 * Migrates `databaseUrl` (unless `migrated`) and opens it once. Resolves once the database's
 * encryption marker agrees with the store's key; rejects, having closed everything, otherwise.
 */
export async function openDatabase(
  databaseUrl: string,
  options: DatabaseOptions = {},
): Promise<Database> {
  if (options.migrated !== true) await migrate(databaseUrl);
  const weft = createPrisma(databaseUrl, { queryTimeoutMs: options.store?.queryTimeoutMs });
  const store = openThreadStoreOn(weft, options.store);
  let closing: Promise<void> | undefined;
  const database: Database = {
    url: databaseUrl,
    weft,
    store,
    close() {
      closing ??= (async () => {
        await store.close();
        await weft.prisma.$disconnect();
      })();
      return closing;
    },
  };
  try {
    await store.ready(); // a missing or wrong encryption key fails here, at open
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

export interface EventedEngine {
  engine: Engine;
  /** The engine's publisher; give it to the app as the context's `events`. */
  hub: EventHub;
  /** Closes the hub (ending every open stream), then the engine (and the database it opened). */
  close(): Promise<void>;
}

export interface EventedEngineOptions {
  redisUrl?: string | undefined;
  /** The Redis channel of the wake-ups (default `weft:commits`, what `weft serve` uses). */
  redisChannel?: string | undefined;
  engine?: Omit<EngineOptions, 'databaseUrl' | 'store' | 'publisher'>;
  hub?: Omit<EventHubOptions, 'store' | 'redis' | 'machineOptions'>;
  /** Also told of every commit, after the hub (Weft's own tracing: server/tracing.ts). */
  observe?: ((event: CommittedEvent) => void) | undefined;
}

/**
 * Migrates `databaseUrl`, opens it once, and an engine that publishes every commit to a hub on
 * its store — fanned out through Redis when `redisUrl` is set (resolves once the Redis
 * subscription is confirmed; rejects, having closed everything, when it cannot be). A process
 * embedding Weft (a LangGraph agent's WeftSaver) opens its engine this way to wake the live
 * subscribers of a `weft serve` on the same database and Redis.
 */
export async function openEngineWithEvents(
  databaseUrl: string,
  options: EventedEngineOptions = {},
): Promise<EventedEngine> {
  const database = await openDatabase(databaseUrl, { store: options.engine?.storeOptions });
  let evented: EventedEngine;
  try {
    evented = await openEventedEngine(database, options);
  } catch (error) {
    await database.close();
    throw error;
  }
  return {
    ...evented,
    async close() {
      await evented.close();
      await database.close();
    },
  };
}

/**
 * An engine on `database`'s store, publishing to a hub on the same store. The engine's options
 * are resolved once and the hub re-derives effects with the very machine options the engine
 * applies. `close()` closes the hub, then the engine; the database stays its opener's.
 */
export async function openEventedEngine(
  database: Database,
  options: EventedEngineOptions = {},
): Promise<EventedEngine> {
  const resolved = resolveEngineOptions(options.engine);
  const hub = createEventHub({
    ...options.hub,
    store: database.store,
    ...(options.redisUrl === undefined
      ? {}
      : {
          redis: {
            url: options.redisUrl,
            ...(options.redisChannel === undefined ? {} : { channel: options.redisChannel }),
          },
        }),
    machineOptions: resolved.machineOptions,
  });
  try {
    await hub.ready;
  } catch (error) {
    await hub.close();
    throw error;
  }
  const observe = options.observe;
  const publisher: Publisher =
    observe === undefined
      ? hub
      : {
          publish(event) {
            const published = hub.publish(event);
            observe(event);
            return published;
          },
        };
  const engine = createEngine({ ...resolved, store: database.store, publisher });
  return {
    engine,
    hub,
    async close() {
      await hub.close();
      await engine.close();
    },
  };
}

/** What `weft serve` runs on: one database, and every part of the server on it. */
export interface ServerRoot {
  readonly database: Database;
  readonly engine: Engine;
  readonly hub: EventHub;
  readonly authenticator: Authenticator;
  /** What the server says at start of how it authenticates. */
  readonly authBanner: string;
  /** The read queries on the database's client, opened with the store's codec. */
  readonly queries: ReadQueries;
  /** The retention sweeper's running totals (undefined when it is off). */
  retentionStats(): RetentionSweeperStats | undefined;
  /** Stops the sweepers (a sweep in progress finishes), then closes the hub (ending streams). */
  stopBackground(): Promise<void>;
  /** After stopBackground: closes the engine, the authenticator, then the database; once. */
  close(): Promise<void>;
}

/** The engine's options a server's configuration gives. */
function engineOptionsOf(config: ServerConfig): NonNullable<EventedEngineOptions['engine']> {
  return {
    cacheBytes: config.cacheBytes,
    ...(config.retention.days === undefined ? {} : { retentionDays: config.retention.days }),
    maxPayloadBytes: config.limits.maxPayloadBytes,
    machineOptions: {
      importLimits: {
        maxBytes: config.limits.maxImportBytes,
        maxNodes: config.limits.maxImportNodes,
      },
    },
  };
}

/** A sweep's failure as one log line: an engine error's code and message, else the error. */
const describeFailure = (error: unknown): string => {
  if (typeof error !== 'object' || error === null) return String(error);
  const e = error as { code?: unknown; message?: unknown; threadId?: unknown; error?: unknown };
  if (e.threadId !== undefined && e.error !== undefined) {
    return `thread ${String(e.threadId)}: ${describeFailure(e.error)}`;
  }
  return typeof e.code === 'string' ? `${e.code}: ${String(e.message)}` : String(error);
};

/**
 * Opens what a server runs on, in order: its database (migrated; a wrong encryption key fails
 * here), its authenticator on the database's key store (a start without keys on a public HOST
 * is refused, with StartupRefused, before a missing SQLite file is created), the engine and its
 * event hub (fanned out through Redis when REDIS_URL is set), the read queries, then the
 * sweepers: the deadline scheduler times out overdue runs and the retention sweeper deletes
 * expired threads, each once, whichever instance sees them first. A failure closes what was
 * opened.
 */
export async function openServerRoot(
  config: ServerConfig,
  log: (line: string) => void,
  observe?: (event: CommittedEvent) => void,
): Promise<ServerRoot> {
  const target = parseDatabaseUrl(config.databaseUrl);
  if (target.provider === 'sqlite' && !existsSync(target.path)) {
    const decided = decideAuth(config, NO_KEYS);
    if ('refused' in decided) throw new StartupRefused(decided.refused);
  }
  const database = await openDatabase(config.databaseUrl, {
    store: {
      encryptionKey: config.encryptionKey,
      searchPlaintextIndex: config.searchPlaintextIndex,
      queryTimeoutMs: config.queryTimeoutMs,
    },
  });
  let evented: EventedEngine | undefined;
  try {
    // API keys: required when any exists; else open on loopback only, or refused.
    const auth = await serverAuth(config, apiKeys(database.weft, database.store.codec), log);
    if ('refused' in auth) throw new StartupRefused(auth.refused);
    evented = await openEventedEngine(database, {
      redisUrl: config.redisUrl,
      engine: engineOptionsOf(config),
      observe,
      hub: { subscriptionCaps: config.subscriptionCaps },
    });
    return withSweepers(config, log, database, evented, auth);
  } catch (error) {
    await evented?.close();
    await database.close();
    throw error;
  }
}

function withSweepers(
  config: ServerConfig,
  log: (line: string) => void,
  database: Database,
  { engine, hub, close: closeEngine }: EventedEngine,
  auth: { authenticator: Authenticator; banner: string },
): ServerRoot {
  const deadlines = startDeadlineScheduler(engine, {
    intervalMs: 1000,
    onError: (error) => log(`weft: deadline sweep failed: ${String(error)}`),
  });
  const retention: RetentionSweeper | undefined =
    config.retention.sweepMs > 0
      ? startRetentionSweeper(engine, {
          intervalMs: config.retention.sweepMs,
          batchSize: config.retention.batch,
          onError: (error) => log(`weft: retention sweep failed: ${describeFailure(error)}`),
        })
      : undefined;
  let stopping: Promise<void> | undefined;
  const stopBackground = () => {
    stopping ??= (async () => {
      await deadlines.stop();
      await retention?.stop();
      await hub.close();
    })();
    return stopping;
  };
  let closing: Promise<void> | undefined;
  return {
    database,
    engine,
    hub,
    authenticator: auth.authenticator,
    authBanner: auth.banner,
    queries: createReadQueries(database.weft, false, database.store.codec),
    retentionStats: () => retention?.stats(),
    stopBackground,
    close() {
      closing ??= (async () => {
        await stopBackground();
        await closeEngine();
        await auth.authenticator.close();
        await database.close();
      })();
      return closing;
    },
  };
}
