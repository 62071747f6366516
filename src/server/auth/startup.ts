/**
 * How a server authenticates (DESIGN §8): with API keys in the database, every operation needs
 * one; with none and a loopback HOST it runs open (the `default` tenant, every scope) and says
 * so; with none on any other HOST it refuses to start, saying how to create a key (unless
 * WEFT_ALLOW_OPEN=true asks for an open server on purpose).
 */
import { existsSync } from 'node:fs';
import { migrate, parseDatabaseUrl } from '../../store/migrate/index.js';
import { createPrisma } from '../../store/prisma/index.js';
import { isLoopbackHost } from '../config.js';
import { type Authenticator, createAuthenticator } from './authenticator.js';
import { apiKeys } from './keys.js';

export type ServerAuth = { authenticator: Authenticator; banner: string } | { refused: string };

/** Keys not revoked in the database (a SQLite file that does not exist yet has none). */
export async function countActiveKeys(databaseUrl: string): Promise<number> {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.provider === 'sqlite' && !existsSync(target.path)) return 0;
  await migrate(databaseUrl);
  const db = createPrisma(databaseUrl);
  try {
    return await apiKeys(db).countActive();
  } finally {
    await db.prisma.$disconnect();
  }
}

export async function serverAuth(config: {
  host: string;
  databaseUrl: string;
  allowOpen: boolean;
}): Promise<ServerAuth> {
  const active = await countActiveKeys(config.databaseUrl);
  if (active > 0) {
    return {
      authenticator: createAuthenticator({ databaseUrl: config.databaseUrl, mode: 'keys' }),
      banner: `weft: API keys required (${active} active): send Authorization: Bearer <key>`,
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
    authenticator: createAuthenticator({ databaseUrl: config.databaseUrl, mode: 'open' }),
    banner: loopback
      ? 'weft: no API keys configured: running open, bound to loopback only (every caller is tenant "default" with every scope; open mode ends once a key is created with `weft keys create`)'
      : `weft: WARNING: serving without API keys on ${config.host} (WEFT_ALLOW_OPEN=true)`,
  };
}
