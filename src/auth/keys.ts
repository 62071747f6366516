/**
 * API keys: a tenant and scopes, stored as the SHA-256 of the key, never the key.
 * A key reads `weft_<id>_<secret>`: 16 hex digits of id (finds the row; shown by `keys list`) and
 * 256 random bits of secret (base64url). The hash of the whole text is compared in constant time.
 * The key text is returned once, by `createApiKey`; it cannot be recovered afterwards.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type ApiKeyRow, apiKeyRows } from '../store/api-keys/index.js';
import type { FieldCodec } from '../store/crypto/index.js';
import type { WeftPrisma } from '../store/prisma/index.js';
import { SCOPES, type Scope } from './types.js';

export const KEY_PREFIX = 'weft_';
const KEY_TEXT = /^weft_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
/** A tenant name: what `--tenant` accepts. */
export const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface ApiKeyInfo {
  id: string;
  tenant: string;
  scopes: Scope[];
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface CreatedApiKey extends ApiKeyInfo {
  /** The key itself: shown once, stored nowhere. */
  key: string;
}

/** A key lookup: the row's tenant and scopes when the key is valid and not revoked. */
export type KeyCheck =
  | { ok: true; key: ApiKeyInfo }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' };

export class ApiKeyInputError extends Error {
  override name = 'ApiKeyInputError';
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Scopes from `read,write` (order and repeats do not matter); throws ApiKeyInputError. */
export function parseScopes(text: string): Scope[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (names.length === 0) {
    throw new ApiKeyInputError(`give at least one scope of ${SCOPES.join(', ')}`);
  }
  for (const name of names) {
    if (!(SCOPES as readonly string[]).includes(name)) {
      throw new ApiKeyInputError(`unknown scope '${name}': scopes are ${SCOPES.join(', ')}`);
    }
  }
  return SCOPES.filter((s) => names.includes(s));
}

const infoOf = (row: ApiKeyRow): ApiKeyInfo => ({
  id: row.id,
  tenant: row.tenantId,
  scopes: parseScopes(row.scopes),
  name: row.name,
  createdAt: row.createdAt,
  revokedAt: row.revokedAt,
});

/**
 * The key store on a migrated database. With encryption at rest, pass the store's codec: key
 * names are sealed with it (the authenticator never reads names, so it needs none).
 */
export function apiKeys(weft: WeftPrisma, codec?: FieldCodec) {
  const rows = apiKeyRows(weft, codec);
  return {
    async create(input: {
      tenant: string;
      scopes: readonly Scope[];
      name?: string | undefined;
      now?: Date;
    }): Promise<CreatedApiKey> {
      if (!TENANT_NAME.test(input.tenant)) {
        throw new ApiKeyInputError(
          `tenant '${input.tenant}' is not a tenant name: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit`,
        );
      }
      const scopes = parseScopes(input.scopes.join(','));
      const id = randomBytes(8).toString('hex');
      const key = `${KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
      const row = await rows.insert({
        id,
        tenantId: input.tenant,
        scopes: scopes.join(','),
        keyHash: sha256(key),
        name: input.name ?? null,
        createdAt: input.now ?? new Date(),
        revokedAt: null,
      });
      return { ...infoOf(row), key };
    },

    /** Every key (of one tenant), oldest first; never the secret nor its hash. */
    async list(filter: { tenant?: string | undefined } = {}): Promise<ApiKeyInfo[]> {
      return (await rows.list(filter.tenant)).map(infoOf);
    },

    /** Revokes a key at once; false when there is no such key. Revoking twice keeps the first time. */
    async revoke(id: string, now: Date = new Date()): Promise<ApiKeyInfo | undefined> {
      const row = await rows.find(id);
      if (row === null) return undefined;
      if (row.revokedAt !== null) return infoOf(row);
      return infoOf(await rows.revoke(id, now));
    },

    /** Checks a presented key text. */
    async check(text: string): Promise<KeyCheck> {
      const match = KEY_TEXT.exec(text);
      if (match === null) return { ok: false, reason: 'malformed' };
      const row = await rows.find(match[1]!);
      const presented = Buffer.from(sha256(text), 'hex');
      // Compared even for an unknown id, so the answer takes the same work either way.
      const stored = Buffer.from(row?.keyHash ?? '0'.repeat(64), 'hex');
      const same = stored.length === presented.length && timingSafeEqual(stored, presented);
      if (row === null || !same) return { ok: false, reason: 'unknown' };
      if (row.revokedAt !== null) return { ok: false, reason: 'revoked' };
      return { ok: true, key: infoOf(row) };
    },

    /** Whether the key `id` exists and is not revoked (the per-event check of subscriptions). */
    isActive: rows.isActive,

    /** Keys not revoked. */
    countActive: rows.countActive,

    /**
     * Keys in the database, revoked ones included: with none, a loopback server runs open. A
     * revoked key still counts, so revoking every key locks callers out instead of opening the
     * server; `purgeRevoked` is the explicit way back.
     */
    countAll: rows.countAll,

    /** Deletes every revoked key (their ids and tenants are forgotten); resolves with how many. */
    purgeRevoked: rows.deleteRevoked,
  };
}

export type ApiKeyStore = ReturnType<typeof apiKeys>;
