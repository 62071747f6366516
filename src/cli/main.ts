#!/usr/bin/env node
/**
 * The `weft` command. `migrate` works today; the server and the data commands arrive with the
 * durable engine and the API, and each says so instead of pretending to work.
 */
import { isMigrationError, migrate } from '../store/migrate/index.js';

const DEFAULT_DATABASE_URL = 'file:./data/weft.db';

const PLANNED: Record<string, string> = {
  serve: 'the GraphQL server',
  keys: 'API key management',
  export: 'thread export',
  import: 'thread import',
  verify: 'log verification against a database',
  replay: 'replay from a database',
};

const USAGE = `Usage: weft <command>

Commands:
  migrate   apply pending database migrations (DATABASE_URL, default ${DEFAULT_DATABASE_URL})
  serve     start the GraphQL server (not built yet)
  keys, export, import, verify, replay   (not built yet)`;

async function main(argv: string[]): Promise<number> {
  const [command = 'help'] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return 0;
  }
  if (command === 'migrate') return runMigrate();
  const what = PLANNED[command];
  if (what === undefined) {
    console.error(`weft: unknown command '${command}'. Run 'weft help' for the list.`);
    return 2;
  }
  console.error(
    `weft ${command}: ${what} is not built yet — this version ships Weft's core library and its ` +
      "database migrations (see README.md, 'Status').",
  );
  return 1;
}

async function runMigrate(): Promise<number> {
  const url = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  try {
    const result = await migrate(url, { log: (line) => console.log(`weft migrate: ${line}`) });
    const where = result.target.provider === 'sqlite' ? result.target.path : 'postgres';
    console.log(
      `weft migrate: ${where} is at ${result.known.at(-1) ?? 'no migration'} (${result.applied.length} applied now)`,
    );
    return 0;
  } catch (error) {
    if (isMigrationError(error)) {
      console.error(`weft migrate: ${error.message}`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
