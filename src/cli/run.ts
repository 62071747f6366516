/** The `weft` command line, callable in process (tests) and from main.ts. */
import { readFileSync } from 'node:fs';
import { UsageError } from './args.js';
import { runExport, runImport, runReplay, runVerify } from './data-commands.js';
import { configurationFailure } from './failures.js';
import { KEYS_HELP, KEYS_USAGE, runKeys } from './keys-command.js';
import { runProjection } from './projection-command.js';
import { runGc, runRetention } from './retention-commands.js';
import { runMigrate, runServe } from './server-commands.js';

const USAGE = `Usage: weft <command> [options]

Commands:
  serve                          apply migrations, then serve GraphQL
  migrate                        apply pending database migrations
  keys create --tenant T --scopes read,write[,approve,admin] [--name N]
                                 create an API key (printed once; only its hash is stored);
                                 the first key makes the server keyed (see weft keys --help)
  keys list [--tenant T]         list keys (ids, tenants, scopes, status; never secrets)
  keys revoke <id>               revoke a key at once (also for open subscriptions)
  keys purge                     delete revoked keys (with none left, the next start is open)
  export <threadId> [--at N] [--out FILE] [--tenant T]
                                 write the thread's log (entries [0, N)) as JSON lines
  import <file|-> [--thread-id ID] [--tenant T]
                                 create a thread from an exported log, byte for byte
                                 (id ID, default the exported one; the tenant must not
                                 use it yet)
  verify [<threadId>...] [--strict | --no-strict] [--tenant T]
                                 replay each log and check every state hash (strict: default;
                                 none named: every thread, of T with --tenant)
  replay [<threadId>...] [--all] [--tenant T]
                                 replay logs and compare with the stored read models
  projection <threadId> [--query Q] [--target N] [--max N] [--max-nodes N]
             [--tokenizer chars|o200k|cl100k] [--explain [--omitted N]] [--tenant T]
                                 print the thread's prompt view; --explain adds
                                 why each node is in it and the best omitted candidates
  retention [--apply] [--tenant T] [--limit N] [--batch N] [--database URL]
                                 list the threads whose expiresAt has passed (a dry run:
                                 nothing deleted; N listed, 100 by default) and, with
                                 WEFT_RETENTION_DAYS, those older than it without one;
                                 --apply deletes the expired ones as the server's sweeper
                                 does (one audit entry each), N per batch (100)
  gc [--apply] [--database URL]  report the storage no thread needs (rows of deleted threads
                                 no fork reads, orphaned rows; a dry run); --apply removes it
  --version, -v                  print the version

Thread ids are per tenant: two tenants may each have a thread t1. A thread id on the command
line names a thread of tenant T (--tenant T; default: default, the tenant of open mode). A
thread id may not contain control characters (U+0000 to U+001F).

Environment (serve uses all of these; the other commands DATABASE_URL and WEFT_ENCRYPTION_KEY):
  DATABASE_URL            file:./data/weft.db by default; a postgres:// URL selects Postgres
                          (retention and gc also take --database URL)
  WEFT_ENCRYPTION_KEY     encrypt payloads and memory at rest: 32 bytes as 64 hex digits or
                          base64 (openssl rand -base64 32); a database written with a key
                          needs that same key in every command
  PORT                    port to listen on (4000; 0 picks a free one)
  HOST                    address to bind (127.0.0.1)
  WEFT_ALLOW_OPEN         true: serve without API keys on a non-loopback HOST (false)
  REDIS_URL               redis://host:6379: share subscription events between instances
  WEFT_GRAPHIQL           serve GraphiQL on GET /graphql (true)
  WEFT_INTROSPECTION      allow schema introspection (true)
  WEFT_CORS_ORIGINS       comma-separated browser origins allowed to call (CORS) and open
                          WebSockets (*: any; WEFT_ALLOWED_ORIGINS is its older name)
  WEFT_METRICS_TOKEN      with API keys, /metrics needs this bearer token or an admin key
  WEFT_WS_INIT_TIMEOUT_MS, WEFT_WS_MAX_CONNECTIONS, WEFT_WS_MAX_CONNECTIONS_PER_KEY,
  WEFT_WS_MAX_SUBSCRIPTIONS
                          WebSocket limits (see docs/deployment.md)
  WEFT_SUBSCRIPTION_COST_PER_KEY, WEFT_SUBSCRIPTION_COST_TOTAL
                          cost units the live subscriptions of one key (25000) and of the
                          process (100000) may hold
  WEFT_REFUSAL_BURST, WEFT_REFUSAL_RATE, WEFT_REFUSAL_DELAY_MS
                          slow down an address that keeps getting refused: a burst (30),
                          refilled per second (10), then each refusal held this long (250)
  WEFT_METRICS            Prometheus metrics on /metrics (true)
  WEFT_REQUEST_LOG        one JSON line per request on stdout (true)
  WEFT_SHUTDOWN_GRACE_MS  how long SIGTERM waits for in-flight requests (8000)
  WEFT_QUERY_TIMEOUT_MS   how long one read may run before it answers QUERY_TIMEOUT (30000; 0: no
                          limit; Postgres statement_timeout, SQLite searches)
  WEFT_RETENTION_DAYS     new threads created without expiresAt expire this many days after
                          creation (unset: never); existing threads keep theirs
  WEFT_RETENTION_SWEEP_MS time between retention sweeps deleting expired threads (60000; 0: off)
  WEFT_RETENTION_BATCH    expired threads one sweep deletes at most (100)
  WEFT_CACHE_BYTES        bound on the estimated memory of the thread states kept (268435456)
  WEFT_HEAP_GROWTH_PERCENT
                          heap growth past the last full collection before the next (20; 0: V8's)
  WEFT_SEARCH_PLAINTEXT_INDEX
                          with WEFT_ENCRYPTION_KEY: keep the plain-text search index anyway (false)
  WEFT_MAX_SEND_BUFFER_BYTES
                          unsent bytes a subscriber may hold before it is closed (8388608)
  WEFT_MAX_BODY_BYTES     largest request body (16777216)
  WEFT_MAX_DEPTH, WEFT_MAX_COST, WEFT_MAX_ALIASES, WEFT_MAX_TOKENS, WEFT_MAX_DIRECTIVES,
  WEFT_MAX_BATCH, WEFT_MAX_PAYLOAD_BYTES, WEFT_MAX_IMPORT_BYTES, WEFT_MAX_IMPORT_NODES
                          limits on hostile input (see docs/deployment.md)
Exit codes: 0 ok, 1 failed, 2 usage or configuration error (including a database that cannot
be reached, a missing or wrong encryption key, a port in use, a non-loopback HOST without API
keys, another weft serve already running on the SQLite file, an unreachable REDIS_URL, a
database a newer Weft migrated).`;

/** Each command's one-line synopsis: what a usage error prints under the error. */
const SYNOPSIS: Record<string, string> = {
  serve: 'weft serve (no arguments: it reads environment variables)',
  migrate: 'weft migrate (no arguments: it reads environment variables)',
  keys: `weft ${KEYS_USAGE}`,
  export: 'weft export <threadId> [--at N] [--out FILE] [--tenant T]',
  import: 'weft import <file|-> [--thread-id ID] [--tenant T]',
  verify: 'weft verify [<threadId>...] [--strict | --no-strict] [--tenant T]',
  replay: 'weft replay [<threadId>...] [--all] [--tenant T]',
  projection:
    'weft projection <threadId> [--query Q] [--target N] [--max N] [--max-nodes N] [--tokenizer T] [--explain [--omitted N]] [--tenant T]',
  retention: 'weft retention [--apply] [--tenant T] [--limit N] [--batch N] [--database URL]',
  gc: 'weft gc [--apply] [--database URL]',
};

/** The one usage line under a usage error; `weft --help` has the rest. */
const usageLine = (synopsis: string) => `usage: ${synopsis}   (weft --help for more)`;

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  serve: runServe,
  migrate: runMigrate,
  keys: runKeys,
  export: runExport,
  import: runImport,
  verify: runVerify,
  replay: runReplay,
  projection: runProjection,
  retention: runRetention,
  gc: runGc,
};

/** The version of the installed package (package.json is two levels up from src/ and dist/). */
export function weftVersion(): string {
  const manifest = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

/** Runs one `weft` command; resolves with its exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [command = 'help', ...rest] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    console.log(USAGE);
    return 0;
  }
  if (command === '--version' || command === '-v') {
    console.log(weftVersion());
    return 0;
  }
  const run = COMMANDS[command];
  // `weft export --help`: what the usage line under an error points at, per command too.
  if (run !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
    console.log(command === 'keys' ? KEYS_HELP : USAGE);
    return 0;
  }
  if (run === undefined) {
    console.error(`weft: unknown command '${command}'`);
    console.error(usageLine(`weft <${Object.keys(COMMANDS).join('|')}> [options]`));
    return 2;
  }
  try {
    return await run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`weft ${command}: ${error.message}`);
      console.error(usageLine(SYNOPSIS[command] ?? `weft ${command}`));
      return 2;
    }
    const failure = configurationFailure(error);
    if (failure !== undefined) {
      console.error(`weft ${command}: ${failure}`);
      return 2;
    }
    throw error;
  }
}
