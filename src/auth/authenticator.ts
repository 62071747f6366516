/**
 * Who is calling: an `Authorization: Bearer <key>` (HTTP and SSE) or the graphql-ws
 * `connectionParams.authorization` becomes the caller's tenant and scopes.
 *
 * - `keys`: every operation needs a valid, unrevoked key.
 * - `open` (no keys in the database, loopback HOST): callers without a key act as the `default`
 *   tenant with every scope. A key, when sent, is still checked. Open mode ends by itself as soon
 *   as a key exists (checked at most once a second), without a restart, so that creating a key
 *   protects a running server at once; `onKeyed` is told, once. It never comes back while the
 *   server runs: only a start with no keys at all (revoked ones included) runs open.
 *
 * Keys are looked up on every request (a primary-key read), and again before each subscription
 * event, so a revoked key stops at once; the subscriptions of one key share a lookup begun after
 * the event they are checked for (see `stillValid`).
 */
import { performance } from 'node:perf_hooks';
import { createCache } from '../store/cache.js';
import type { ApiKeyStore } from './keys.js';
import { type AuthInfo, OPEN_AUTH, unauthenticated } from './types.js';

export type AuthMode = 'open' | 'keys';

export interface Authenticator {
  readonly mode: AuthMode;
  /** The caller of a request carrying `authorization` (the header value, or undefined). */
  authenticate(authorization: string | undefined): Promise<AuthInfo>;
  /**
   * Whether `auth` may still receive events (its key not revoked since). With `notBefore` (a
   * performance.now() time), a check of the same key begun at or after it is answered again
   * instead of asking the store: the events of one commit to a hundred subscriptions of a key
   * cost one lookup, and an event committed after a revocation still meets a check begun after it.
   */
  stillValid(auth: AuthInfo, notBefore?: number): Promise<boolean>;
  /** How often (ms) idle subscriptions are checked too, so a revoked key's ones end without an event. */
  readonly revalidateMs: number;
  close(): Promise<void>;
}

/** No keys, no database: every caller is the default tenant with every scope (buildApp's default). */
export function openAuthenticator(): Authenticator {
  return {
    mode: 'open',
    authenticate: async () => OPEN_AUTH,
    stillValid: async () => true,
    revalidateMs: 0,
    close: async () => undefined,
  };
}

export interface KeyAuthenticatorOptions {
  /**
   * The key store, on the database client of whoever opened it (the composition root): the
   * authenticator opens no connection of its own and closes none.
   */
  keys: ApiKeyStore;
  mode: AuthMode;
  /** How long open mode trusts "no keys exist" (ms). Default 1,000. */
  openCheckMs?: number;
  /** How often idle subscriptions are re-checked (ms; 0: only at their events). Default 5,000. */
  revalidateMs?: number;
  /** Called once when open mode ends because a key was created. */
  onKeyed?: () => void;
}

const MAX_REMEMBERED_CHECKS = 10_000;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export function createAuthenticator(options: KeyAuthenticatorOptions): Authenticator {
  const { keys } = options;
  /** The latest check of each key: when it began, its answer, and whether that is still pending. */
  const checks = createCache<{ startedAt: number; value: Promise<boolean>; pending: boolean }>({
    maxEntries: MAX_REMEMBERED_CHECKS,
  });
  const openCheckMs = options.openCheckMs ?? 1000;
  let stillOpen: { until: number; value: Promise<boolean> } | undefined;
  let mode: AuthMode = options.mode;

  /** Open mode lasts while no key exists (a revoked one counts: it was created on purpose). */
  const isOpen = async (): Promise<boolean> => {
    if (mode !== 'open') return false;
    const now = Date.now();
    if (stillOpen === undefined || stillOpen.until < now) {
      stillOpen = { until: now + openCheckMs, value: keys.countAll().then((n) => n === 0) };
    }
    const open = await stillOpen.value;
    if (!open && mode === 'open') {
      mode = 'keys';
      options.onKeyed?.();
    }
    return open;
  };

  const active = (keyId: string, notBefore?: number): Promise<boolean> => {
    const last = checks.get(keyId);
    if (
      last !== undefined &&
      (notBefore === undefined ? last.pending : last.startedAt >= notBefore)
    ) {
      return last.value;
    }
    const check = { startedAt: performance.now(), value: keys.isActive(keyId), pending: true };
    const settled = () => {
      check.pending = false;
    };
    void check.value.then(settled, settled);
    checks.set(keyId, check);
    return check.value;
  };

  return {
    revalidateMs: options.revalidateMs ?? 5000,
    get mode() {
      return mode;
    },
    async authenticate(authorization) {
      if (authorization === undefined || authorization.trim() === '') {
        if (await isOpen()) return OPEN_AUTH;
        return unauthenticated(
          'send an API key as Authorization: Bearer <key> (over graphql-ws: connectionParams.authorization); create one with `weft keys create --tenant <name> --scopes read,write`',
        );
      }
      const bearer = BEARER.exec(authorization);
      if (bearer === null) {
        return unauthenticated('the Authorization header must be "Bearer <API key>"');
      }
      const checked = await keys.check(bearer[1]!);
      if (!checked.ok) {
        return unauthenticated(
          checked.reason === 'revoked' ? 'this API key was revoked' : 'this is not a valid API key',
        );
      }
      return {
        authenticated: true,
        tenant: checked.key.tenant,
        scopes: new Set(checked.key.scopes),
        keyId: checked.key.id,
      };
    },
    async stillValid(auth, notBefore) {
      if (!auth.authenticated) return false;
      // An open-mode caller lasts as long as open mode does.
      return auth.keyId === null ? isOpen() : active(auth.keyId, notBefore);
    },
    // Nothing of its own to close: the key store's client is its opener's.
    close: async () => undefined,
  };
}
