/** `weft serve` and `weft migrate`. */
import { setFlagsFromString } from 'node:v8';
import { ConfigError, loadConfig, type ServerConfig } from '../server/config.js';
import { StartupRefused, startServer } from '../server/serve.js';
import { isMigrationError, migrate } from '../store/migrate/index.js';
import { parseArgs, UsageError } from './args.js';
import { migrationExitCode } from './failures.js';

/** The configuration, or undefined after printing what is wrong (exit 2). */
export function configOrExit(command: string): ServerConfig | undefined {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      // One problem, one line; several are listed one per line, each naming its variable.
      console.error(
        error.problems.length === 1
          ? `weft ${command}: invalid configuration: ${error.problems[0]}`
          : `weft ${command}: ${error.message}`,
      );
      return undefined;
    }
    throw error;
  }
}

/** `serve` and `migrate` are configured by the environment alone. */
function noArguments(command: string, argv: string[]): void {
  const { positionals } = parseArgs(argv, {});
  if (positionals.length > 0) {
    throw new UsageError(`${command} takes no arguments (got ${positionals.join(' ')})`);
  }
}

export async function runServe(argv: string[]): Promise<number> {
  noArguments('serve', argv);
  const config = configOrExit('serve');
  if (config === undefined) return 2;
  // Read by V8 at each full collection, so setting it now applies to the whole life of the
  // server: its heap stays within this factor of what it holds live (the thread cache, bounded
  // by WEFT_CACHE_BYTES, and the rest) instead of gigabytes of garbage from large reads.
  if (config.heapGrowthPercent > 0) {
    setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
  }
  // Prisma's query compiler is WebAssembly, compiled once on the first query. On V8's background
  // threads the compiler's scratch memory stays in their malloc arenas after it is freed (20-40
  // MiB of RSS for good); compiled on the main thread, it is reused by the rest of the process.
  setFlagsFromString('--wasm-num-compilation-tasks=0');
  let app: Awaited<ReturnType<typeof startServer>>;
  try {
    app = await startServer(config);
  } catch (error) {
    // Refused for its configuration (a public HOST without keys, another server on the SQLite
    // file): 2, like every configuration error.
    if (error instanceof StartupRefused) {
      console.error(`weft serve: ${error.message}`);
      return 2;
    }
    if (isMigrationError(error)) {
      console.error(`weft serve: ${error.message}`);
      return migrationExitCode(error);
    }
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      console.error(
        `weft serve: cannot listen on ${config.host}:${config.port} (${code}): choose another PORT`,
      );
      return 2;
    }
    throw error;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      console.log(`weft: ${signal}: stopping`);
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await app.close();
  console.log('weft: stopped');
  return 0;
}

export async function runMigrate(argv: string[]): Promise<number> {
  noArguments('migrate', argv);
  const config = configOrExit('migrate');
  if (config === undefined) return 2;
  try {
    const result = await migrate(config.databaseUrl, {
      log: (line) => console.log(`weft migrate: ${line}`),
    });
    const where = result.target.provider === 'sqlite' ? result.target.path : 'postgres';
    console.log(
      `weft migrate: ${where} is at ${result.known.at(-1) ?? 'no migration'} (${result.applied.length} applied now)`,
    );
    return 0;
  } catch (error) {
    if (isMigrationError(error)) {
      console.error(`weft migrate: ${error.message}`);
      return migrationExitCode(error);
    }
    throw error;
  }
}
