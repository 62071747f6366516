/**
 * How a server authenticates. With any API key in the database (a revoked one included), every
 * operation needs a valid key. With none at all and a loopback HOST it runs open (the `default`
 * tenant, every scope) and says so; with none on any other HOST it refuses to start, saying how
 * to create a key (unless WEFT_ALLOW_OPEN=true asks for an open server on purpose).
 *
 * Revoked keys keep a server keyed so that revoking every key (say, after a leak) locks callers
 * out rather than opening the server at its next start; `weft keys purge` deletes them, the one
 * way back to open mode.
 */
import { existsSync } from 'node:fs';
import { type Authenticator, createAuthenticator } from '../../auth/authenticator.js';
import { apiKeys } from '../../auth/keys.js';
import { migrate, parseDatabaseUrl } from '../../store/migrate/index.js';
import { createPrisma } from '../../store/prisma/index.js';
import { isLoopbackHost } from './loopback.js';

export type ServerAuth = { authenticator: Authenticator; banner: string } | { refused: string };

/** Keys in the database, active and all (a SQLite file that does not exist yet has none). */
export async function countKeys(databaseUrl: string): Promise<{ active: number; all: number }> {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.provider === 'sqlite' && !existsSync(target.path)) return { active: 0, all: 0 };
  await migrate(databaseUrl);
  const db = createPrisma(databaseUrl);
  try {
    const keys = apiKeys(db);
    return { active: await keys.countActive(), all: await keys.countAll() };
  } finally {
    await db.prisma.$disconnect();
  }
}

/** What a running open server logs when a created key ends open mode. */
export const KEYED_NOW =
  'weft: an API key was created: open mode has ended, every request now needs Authorization: Bearer <key>; ' +
  'data written in open mode belongs to tenant "default" (only a key made with --tenant default sees it)';

export async function serverAuth(
  config: { host: string; databaseUrl: string; allowOpen: boolean },
  log: (line: string) => void = () => undefined,
): Promise<ServerAuth> {
  const { active, all } = await countKeys(config.databaseUrl);
  if (all > 0) {
    return {
      authenticator: createAuthenticator({ databaseUrl: config.databaseUrl, mode: 'keys' }),
      banner:
        active > 0
          ? `weft: API keys required (${active} active): send Authorization: Bearer <key>`
          : `weft: API keys required, and all ${all} are revoked: every request is refused. ` +
            'Create a key with `weft keys create`, or run `weft keys purge` and restart to serve open on loopback',
    };
  }
  const loopback = isLoopbackHost(config.host);
  if (!loopback && !config.allowOpen) {
    return {
      refused:
        `HOST=${config.host} is not a loopback address and no API keys are configured, so anyone ` +
        'who can reach it could read and write every thread. Create a key first: ' +
        '`weft keys create --tenant <name> --scopes read,write` (with the same DATABASE_URL), then ' +
        'start again and send it as Authorization: Bearer <key>. Or bind HOST=127.0.0.1, or set ' +
        'WEFT_ALLOW_OPEN=true to serve without keys on purpose.',
    };
  }
  return {
    authenticator: createAuthenticator({
      databaseUrl: config.databaseUrl,
      mode: 'open',
      onKeyed: () => log(KEYED_NOW),
    }),
    banner: loopback
      ? 'weft: no API keys configured: running open, bound to loopback only (every caller is tenant "default" with every scope; open mode ends once a key is created with `weft keys create`)'
      : `weft: WARNING: serving without API keys on ${config.host} (WEFT_ALLOW_OPEN=true)`,
  };
}
