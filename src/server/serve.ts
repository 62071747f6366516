/**
 * `weft serve` / `npm start`: takes the SQLite file's server lock, opens what the server runs on
 * through the composition root (root.ts: the database, migrated and opened once, the
 * authenticator, the engine with its event hub, the read queries and the sweepers), builds the
 * app on it and serves until SIGINT/SIGTERM.
 */
import { parseDatabaseUrl } from '../store/migrate/index.js';
import { acquireServerLock, type ServerLock } from '../store/server-lock.js';
import { type App, buildApp } from './app.js';
import type { ServerConfig } from './config.js';
import { CONSOLE_PATH, isConsoleBuilt } from './console.js';
import { openServerRoot, StartupRefused } from './root.js';
import { startTracing } from './tracing.js';

export { StartupRefused };

/** Where Redis sits, without the credentials a URL may carry. */
const redisHost = (url: string): string => {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'Redis';
  }
};

/** What a started server tells its operator: where everything is, and how it is set up. */
export function startupBanner(config: ServerConfig, graphqlUrl: string): string[] {
  const origin = new URL(graphqlUrl).origin;
  const target = parseDatabaseUrl(config.databaseUrl);
  const consoleAt = isConsoleBuilt()
    ? `console at ${origin}${CONSOLE_PATH}/`
    : 'console not built (npm run console:build)';
  const database =
    target.provider === 'sqlite'
      ? `${target.path} (migrated, this server's alone)`
      : 'postgres (migrated)';
  const fanOut =
    config.redisUrl === undefined
      ? 'Redis fan-out off (no REDIS_URL): subscribers hear of commits made through this server only'
      : `Redis fan-out on (${redisHost(config.redisUrl)}): subscribers also hear of commits made elsewhere`;
  return [
    `weft: ${consoleAt}; GraphiQL ${config.graphiql ? `at ${graphqlUrl}` : 'off'}; ` +
      `health at /healthz, /readyz${config.metrics ? '; metrics at /metrics' : ''}`,
    `weft: database ${database}; ${fanOut}`,
    `weft: limits: depth ${config.limits.maxDepth}, tokens ${config.limits.maxTokens}, ` +
      `aliases ${config.limits.maxAliases}, batch ${config.limits.maxBatch}, body ${config.maxBodyBytes} bytes`,
  ];
}

/** Starts a server for `config`; resolves once it listens. */
export async function startServer(
  config: ServerConfig,
  log: (line: string) => void = console.log,
): Promise<App & { close(): Promise<void> }> {
  // First, before migrating anything: one server per SQLite file (src/store/server-lock.ts).
  const locked = acquireServerLock(config.databaseUrl);
  if (!locked.ok) throw new StartupRefused(locked.message);
  try {
    return await startLocked(config, log, locked.lock);
  } catch (error) {
    locked.lock.release();
    throw error;
  }
}

async function startLocked(
  config: ServerConfig,
  log: (line: string) => void,
  lock: ServerLock,
): Promise<App & { close(): Promise<void> }> {
  // Each database opened once, every part of the server handed its handles (root.ts).
  // Off, and the OTel SDK never loaded, unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
  const tracing = await startTracing(process.env, log);
  const root = await openServerRoot(config, log, tracing?.committed);
  const { engine, hub } = root;
  tracing?.attach(engine);
  const app = buildApp({
    tracing,
    config,
    engine,
    log,
    auth: root.authenticator,
    queries: root.queries,
    extendContext: () => ({ events: hub }),
    subscriptionStats: () => hub.stats(),
    groupStats: () => hub.groups.stats(),
    retentionStats: () => root.retentionStats(),
  });
  // Graceful shutdown: stop accepting and answer every in-flight query and mutation, stop the
  // sweepers (a sweep in progress finishes), end subscriptions (their streams complete;
  // WebSockets close with 1001), close the connections, then what the root opened.
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const drained = await app.drain(config.shutdownGraceMs);
      if (!drained)
        log(`weft: in-flight requests still running after ${config.shutdownGraceMs} ms`);
      await root.stopBackground(); // ends open streams, so SSE responses finish within the grace period
      await app.stop(1000); // only streams remain, and the hub has just ended them
      await root.close();
      await tracing?.shutdown();
      lock.release();
    })();
    return closing;
  };
  // ws forwards the HTTP server's 'error' events to graphql-ws, which prints them with a stack
  // trace as an internal error. A failed listen (a busy port) is start()'s to report, so the
  // forwarding is held back until the server listens.
  const forwarders = app.server.listeners('error') as Array<(error: Error) => void>;
  for (const forward of forwarders) app.server.off('error', forward);
  const restore = () => {
    for (const forward of forwarders) app.server.on('error', forward);
  };
  try {
    await app.start();
  } catch (error) {
    restore();
    await close();
    throw error;
  }
  restore();
  for (const line of startupBanner(config, app.url!)) log(line);
  log(root.authBanner);
  return Object.assign(app, { close });
}
