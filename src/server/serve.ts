/**
 * `weft serve` / `npm start`: checks the configuration, applies migrations (creating ./data for
 * the default SQLite database), opens the engine and serves until SIGINT/SIGTERM.
 */
import { openEngine } from '../engine/index.js';
import { parseDatabaseUrl } from '../store/migrate/index.js';
import { type App, buildApp } from './app.js';
import { isLoopbackHost, type ServerConfig } from './config.js';

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
  const engine = await openEngine(config.databaseUrl);
  const app = buildApp({ config, engine, log });
  try {
    await app.start();
  } catch (error) {
    await app.stop();
    await engine.close();
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
  return Object.assign(app, {
    async close() {
      await app.stop();
      await engine.close();
    },
  });
}
