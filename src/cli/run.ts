/** The `weft` command line, callable in process (tests) and from main.ts. */
import { UsageError } from './args.js';
import { runExport, runImport, runReplay, runVerify } from './data-commands.js';
import { runKeys } from './keys-command.js';
import { runProjection } from './projection-command.js';
import { runMigrate, runServe } from './server-commands.js';

const USAGE = `Usage: weft <command> [options]

Commands:
  serve                          apply migrations, then serve GraphQL (PORT, HOST, DATABASE_URL)
  migrate                        apply pending database migrations
  keys create --tenant T --scopes read,write[,approve,admin] [--name N]
                                 create an API key (printed once; only its hash is stored)
  keys list [--tenant T]         list keys (ids, tenants, scopes, status; never secrets)
  keys revoke <id>               revoke a key at once (also for open subscriptions)
  export <threadId> [--at N] [--out FILE]
                                 write the thread's log (entries [0, N)) as JSON lines
  import <file|-> [--thread-id ID] [--tenant T]
                                 create a thread from an exported log, byte for byte
                                 (in tenant T; default: default)
  verify <threadId>... [--strict | --no-strict]
                                 replay each log and check every state hash (strict: default)
  replay [<threadId>...] [--all] replay logs and compare with the stored read models
  projection <threadId> [--query Q] [--target N] [--max N] [--max-nodes N]
             [--tokenizer chars|o200k|cl100k] [--explain [--omitted N]]
                                 print the thread's prompt view (seed 003); --explain adds
                                 why each node is in it and the best omitted candidates

Environment: DATABASE_URL (default file:./data/weft.db; a postgres:// URL selects Postgres),
PORT (4000), HOST (127.0.0.1), REDIS_URL, WEFT_GRAPHIQL, WEFT_INTROSPECTION, WEFT_MAX_BODY_BYTES.
Exit codes: 0 ok, 1 failed, 2 usage or configuration error.`;

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  serve: runServe,
  migrate: runMigrate,
  keys: runKeys,
  export: runExport,
  import: runImport,
  verify: runVerify,
  replay: runReplay,
  projection: runProjection,
};

/** Runs one `weft` command; resolves with its exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [command = 'help', ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return 0;
  }
  const run = COMMANDS[command];
  if (run === undefined) {
    console.error(`weft: unknown command '${command}'. Run 'weft help' for the list.`);
    return 2;
  }
  try {
    return await run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`weft ${command}: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    throw error;
  }
}
