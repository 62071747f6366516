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
import {
  type Authenticator,
  type AuthMode,
  createAuthenticator,
} from '../../auth/authenticator.js';
import type { ApiKeyStore } from '../../auth/keys.js';
import { isLoopbackHost } from './loopback.js';

export type ServerAuth = { authenticator: Authenticator; banner: string } | { refused: string };

/** How a server with these keys in its database authenticates, or why it refuses to start. */
export type AuthDecision = { mode: AuthMode; banner: string } | { refused: string };

/** Keys in the database: active, and all (revoked ones included). */
export interface KeyCounts {
  active: number;
  all: number;
}

/** What a database without keys (one that does not exist yet) counts. */
export const NO_KEYS: KeyCounts = Object.freeze({ active: 0, all: 0 });

/** What a running open server logs when a created key ends open mode. */
export const KEYED_NOW =
  'weft: an API key was created: open mode has ended, every request now needs Authorization: Bearer <key>; ' +
  'data written in open mode belongs to tenant "default" (only a key made with --tenant default sees it)';

/** Keyed when any key exists; else open on loopback (or with allowOpen), refused elsewhere. */
export function decideAuth(
  config: { host: string; allowOpen: boolean },
  { active, all }: KeyCounts,
): AuthDecision {
  if (all > 0) {
    return {
      mode: 'keys',
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
    mode: 'open',
    banner: loopback
      ? 'weft: no API keys configured: running open, bound to loopback only (every caller is tenant "default" with every scope; open mode ends once a key is created with `weft keys create`)'
      : `weft: WARNING: serving without API keys on ${config.host} (WEFT_ALLOW_OPEN=true)`,
  };
}

/** The authenticator of a server on `keys` (the key store on its database), or its refusal. */
export async function serverAuth(
  config: { host: string; allowOpen: boolean },
  keys: ApiKeyStore,
  log: (line: string) => void = () => undefined,
): Promise<ServerAuth> {
  const decided = decideAuth(config, {
    active: await keys.countActive(),
    all: await keys.countAll(),
  });
  if ('refused' in decided) return decided;
  return {
    authenticator: createAuthenticator({
      keys,
      mode: decided.mode,
      ...(decided.mode === 'open' ? { onKeyed: () => log(KEYED_NOW) } : {}),
    }),
    banner: decided.banner,
  };
}
