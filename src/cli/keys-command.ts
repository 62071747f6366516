/**
 * `weft keys create|list|revoke` (DESIGN §7–8): API keys in the database named by DATABASE_URL.
 * `create` prints the key once — only its SHA-256 is stored; `list` never shows secrets;
 * `revoke` takes effect at once, also on a running server and its open subscriptions.
 */
import { type ApiKeyInfo, ApiKeyInputError, apiKeys, parseScopes } from '../server/auth/index.js';
import { isMigrationError, migrate } from '../store/migrate/index.js';
import { createPrisma } from '../store/prisma/index.js';
import { parseArgs, UsageError } from './args.js';
import { configOrExit } from './server-commands.js';

const USAGE =
  'weft keys create --tenant T --scopes read,write[,approve,admin] [--name N] | list [--tenant T] | revoke <id>';

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
  if (action !== 'create' && action !== 'list' && action !== 'revoke') {
    throw new UsageError(`keys needs create, list or revoke (${USAGE})`);
  }
  const args = parseArgs(rest, { values: ['tenant', 'scopes', 'name'] });
  const config = configOrExit('keys');
  if (config === undefined) return 2;
  try {
    await migrate(config.databaseUrl);
  } catch (error) {
    if (isMigrationError(error)) {
      console.error(`weft keys: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const db = createPrisma(config.databaseUrl);
  const keys = apiKeys(db);
  try {
    if (action === 'create') {
      const tenant = args.options.get('tenant');
      const scopes = args.options.get('scopes');
      if (typeof tenant !== 'string' || typeof scopes !== 'string' || args.positionals.length > 0) {
        throw new UsageError(`keys create needs --tenant and --scopes (${USAGE})`);
      }
      const name = args.options.get('name');
      try {
        const created = await keys.create({
          tenant,
          scopes: parseScopes(scopes),
          name: typeof name === 'string' ? name : undefined,
        });
        console.log(created.key);
        console.error(
          `weft keys: created key ${created.id} for tenant ${created.tenant} with scopes ${created.scopes.join(',')}. ` +
            'The key above is shown only now: store it; send it as Authorization: Bearer <key>.',
        );
        return 0;
      } catch (error) {
        if (error instanceof ApiKeyInputError) throw new UsageError(error.message);
        throw error;
      }
    }
    if (action === 'list') {
      if (args.positionals.length > 0 || args.options.has('scopes') || args.options.has('name')) {
        throw new UsageError(`keys list takes only --tenant (${USAGE})`);
      }
      const tenant = args.options.get('tenant');
      const list = await keys.list({ tenant: typeof tenant === 'string' ? tenant : undefined });
      console.log(['id', 'tenant', 'scopes', 'status', 'created', 'name'].join('\t'));
      for (const k of list) console.log(row(k));
      return 0;
    }
    const [id, ...extra] = args.positionals;
    if (id === undefined || extra.length > 0 || args.options.size > 0) {
      throw new UsageError(`keys revoke needs one key id (${USAGE})`);
    }
    const revoked = await keys.revoke(id);
    if (revoked === undefined) {
      console.error(`weft keys: there is no key ${id} (see weft keys list)`);
      return 1;
    }
    console.log(`weft keys: key ${id} of tenant ${revoked.tenant} is revoked`);
    return 0;
  } finally {
    await db.prisma.$disconnect();
  }
}
