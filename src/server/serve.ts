/**
 * `weft serve` / `npm start`: checks the configuration, applies migrations (creating ./data for
 * the default SQLite database), opens the engine with its event hub and deadline scheduler, and
 * serves until SIGINT/SIGTERM.
 */
import { startDeadlineScheduler } from '../engine/index.js';
import { parseDatabaseUrl } from '../store/migrate/index.js';
import { type App, buildApp } from './app.js';
import { isLoopbackHost, type ServerConfig } from './config.js';
import { openEngineWithEvents } from './events/index.js';

export class StartupRefused extends Error {
  override name = 'StartupRefused';
}

/** Starts a server for `config`; resolves once it listens. */
export async function startServer(
  config: ServerConfig,
  log: (line: string) => void = console.log,
): Promise<App & { close(): Promise<void> }> {
  if (!isLoopbackHost(config.host) && !config.allowOpen) {
    throw new StartupRefused(
      `HOST=${config.host} is not a loopback address and no API keys are configured, so anyone ` +
        'who can reach it could read and write every thread. Bind HOST=127.0.0.1, or set ' +
        'WEFT_ALLOW_OPEN=true to serve without keys on purpose (API keys arrive with tenants).',
    );
  }
  const target = parseDatabaseUrl(config.databaseUrl);
  // Every commit wakes subscribers through the hub (fanned out through Redis when REDIS_URL is
  // set); the deadline scheduler times out overdue runs, once, whichever instance sees them.
  const {
    engine,
    hub,
    close: closeEngine,
  } = await openEngineWithEvents(config.databaseUrl, {
    redisUrl: config.redisUrl,
    engine: { storeOptions: { encryptionKey: config.encryptionKey } },
  });
  const app = buildApp({ config, engine, log, extendContext: () => ({ events: hub }) });
  const deadlines = startDeadlineScheduler(engine, {
    intervalMs: 1000,
    onError: (error) => log(`weft: deadline sweep failed: ${String(error)}`),
  });
  const close = async () => {
    await deadlines.stop();
    await hub.close(); // ends open streams first, so SSE responses finish within the grace period
    await app.stop();
    await closeEngine();
  };
  try {
    await app.start();
  } catch (error) {
    await close();
    throw error;
  }
  log(
    `weft: database ${target.provider === 'sqlite' ? target.path : 'postgres'} (migrated); ` +
      `GraphiQL ${config.graphiql ? `at ${app.url}` : 'off'}; health at /healthz, /readyz`,
  );
  if (isLoopbackHost(config.host)) {
    log('weft: no API keys configured: running open, bound to loopback only');
  } else {
    log(`weft: WARNING: serving without API keys on ${config.host} (WEFT_ALLOW_OPEN=true)`);
  }
  return Object.assign(app, { close });
}
