/**
 * `weft keys create|list|revoke|purge`: API keys in the database named by DATABASE_URL.
 * `create` prints the key once (only its SHA-256 is stored) and, for the first key, says that
 * the server is keyed from now on; `list` never shows secrets; `revoke` takes effect at once, also
 * on a running server and its open subscriptions; `purge` deletes revoked keys, the explicit way
 * back to open mode.
 */
import { type ApiKeyInfo, ApiKeyInputError, apiKeys, parseScopes } from '../server/auth/index.js';
import { openDatabase } from '../server/root.js';
import { isMigrationError, migrate } from '../store/migrate/index.js';
import type { WeftPrisma } from '../store/prisma/index.js';
import { countTenantThreads, DEFAULT_TENANT } from '../store/read-model/index.js';
import { parseArgs, UsageError } from './args.js';
import { migrationExitCode } from './failures.js';
import { configOrExit } from './server-commands.js';

export const KEYS_USAGE =
  'keys create --tenant T --scopes read,write[,approve,admin] [--name N] | list [--tenant T] | revoke <id> | purge';

export const KEYS_HELP = `Usage: weft keys <action> [options]   (on the database named by DATABASE_URL)

Actions:
  create --tenant T --scopes read,write[,approve,admin] [--name N]
                    create an API key; it is printed once (only its hash is stored)
  list [--tenant T] list keys: id, tenant, scopes, status, creation time, name (never secrets)
  revoke <id>       revoke a key at once, also on a running server and its open subscriptions
  purge             delete every revoked key (refused while any key is active)

Open and keyed mode:
  A server whose database holds no API key at all, bound to a loopback HOST, runs open: every
  caller acts as tenant "default" with every scope, and everything written then belongs to
  tenant "default". Creating the first key makes the server keyed: a running server stops
  accepting calls without a key within a second, no restart needed. A key sees only its own
  tenant's threads, so to keep access to the data written in open mode, create a key with
  --tenant default.

  Revoked keys keep the server keyed: revoking every key refuses every request, it does not
  reopen the server. To go back to open mode, revoke every key, run \`weft keys purge\`, and
  restart the server (a running server stays keyed until it restarts). Open mode is only ever
  served on a loopback HOST, or with WEFT_ALLOW_OPEN=true.`;

/** Threads of tenant `default`: what open-mode callers wrote. */
const defaultTenantThreads = (db: WeftPrisma): Promise<number> =>
  countTenantThreads(db, DEFAULT_TENANT);

const row = (k: ApiKeyInfo) =>
  [
    k.id,
    k.tenant,
    k.scopes.join(','),
    k.revokedAt === null ? 'active' : `revoked ${k.revokedAt.toISOString()}`,
    k.createdAt.toISOString(),
    k.name ?? '',
  ].join('\t');

export async function runKeys(argv: string[]): Promise<number> {
  const [action, ...rest] = argv;
  if (action === 'help' || action === '--help' || action === '-h') {
    console.log(KEYS_HELP);
    return 0;
  }
  if (action !== 'create' && action !== 'list' && action !== 'revoke' && action !== 'purge') {
    throw new UsageError('keys needs create, list, revoke or purge');
  }
  const args = parseArgs(rest, { values: ['tenant', 'scopes', 'name'] });
  const config = configOrExit('keys');
  if (config === undefined) return 2;
  try {
    await migrate(config.databaseUrl);
  } catch (error) {
    if (isMigrationError(error)) {
      console.error(`weft keys: ${error.message}`);
      return migrationExitCode(error);
    }
    throw error;
  }
  // The store is opened for its codec: key names are sealed like everything else a user
  // supplies, and a missing or wrong WEFT_ENCRYPTION_KEY is refused here as by every other command.
  const database = await openDatabase(config.databaseUrl, {
    migrated: true,
    store: { encryptionKey: config.encryptionKey },
  });
  const db = database.weft;
  const keys = apiKeys(db, database.store.codec);
  try {
    if (action === 'create') {
      const tenant = args.options.get('tenant');
      const scopes = args.options.get('scopes');
      if (typeof tenant !== 'string' || typeof scopes !== 'string' || args.positionals.length > 0) {
        throw new UsageError('keys create needs --tenant and --scopes');
      }
      const name = args.options.get('name');
      try {
        const parsedScopes = parseScopes(scopes);
        const first = (await keys.countAll()) === 0;
        const created = await keys.create({
          tenant,
          scopes: parsedScopes,
          name: typeof name === 'string' ? name : undefined,
        });
        console.log(created.key);
        console.error(
          `weft keys: created key ${created.id} for tenant ${created.tenant} with scopes ${created.scopes.join(',')}. ` +
            'The key above is shown only now: store it; send it as Authorization: Bearer <key>.',
        );
        if (first) console.error(await firstKeyNotice(db, created.tenant));
        return 0;
      } catch (error) {
        if (error instanceof ApiKeyInputError) throw new UsageError(error.message);
        throw error;
      }
    }
    if (action === 'list') {
      if (args.positionals.length > 0 || args.options.has('scopes') || args.options.has('name')) {
        throw new UsageError('keys list takes only --tenant');
      }
      const tenant = args.options.get('tenant');
      const list = await keys.list({ tenant: typeof tenant === 'string' ? tenant : undefined });
      console.log(['id', 'tenant', 'scopes', 'status', 'created', 'name'].join('\t'));
      for (const k of list) console.log(row(k));
      return 0;
    }
    if (action === 'purge') {
      if (args.positionals.length > 0 || args.options.size > 0) {
        throw new UsageError('keys purge takes no arguments');
      }
      const active = await keys.countActive();
      if (active > 0) {
        console.error(
          `weft keys: ${active} key(s) are still active, so nothing was purged: revoke each (see weft keys list, then weft keys revoke <id>) and run purge again`,
        );
        return 1;
      }
      const purged = await keys.purgeRevoked();
      console.log(
        `weft keys: deleted ${purged} revoked key(s); no key remains, so the next \`weft serve\` on a loopback HOST runs open ` +
          '(every caller is tenant "default" with every scope). A server running now stays keyed until it restarts.',
      );
      return 0;
    }
    const [id, ...extra] = args.positionals;
    if (id === undefined || extra.length > 0 || args.options.size > 0) {
      throw new UsageError('keys revoke needs one key id');
    }
    const revoked = await keys.revoke(id);
    if (revoked === undefined) {
      console.error(`weft keys: there is no key ${id} (see weft keys list)`);
      return 1;
    }
    console.log(`weft keys: key ${id} of tenant ${revoked.tenant} is revoked`);
    return 0;
  } finally {
    await database.close();
  }
}

/** What the first key changes, for whoever created it. */
async function firstKeyNotice(db: WeftPrisma, tenant: string): Promise<string> {
  const threads = await defaultTenantThreads(db);
  const data =
    threads === 0
      ? 'Data written without a key belongs to tenant "default".'
      : `The ${threads} thread(s) already here were written without a key and belong to tenant "default".`;
  const access =
    tenant === 'default'
      ? 'This key is for tenant "default", so it sees them.'
      : `This key (tenant ${tenant}) does not see them: to keep access, also create a key with --tenant default.`;
  return (
    'weft keys: this is the first API key, so this database is now KEYED: a running server stops accepting ' +
    `requests without a key within a second, and every start from now on requires keys. ${data} ${access} ` +
    'To go back to open mode, see `weft keys --help`.'
  );
}
