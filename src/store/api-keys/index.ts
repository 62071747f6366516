/**
 * The `api_key` table (migration 0004): rows of API keys, as stored — the SHA-256 of each key,
 * never the key. What a key looks like, how it is checked and what its scopes mean live with the
 * server's auth (src/auth/keys.ts). With an encryption key (the codec), the name given to
 * a key is sealed at rest like every other client-supplied text (src/store/crypto); names are
 * never looked up, only listed.
 */
import { type FieldCodec, PLAIN_CODEC } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import type { SqlitePrismaClient } from '../prisma/sqlite.js';

export interface ApiKeyRow {
  id: string;
  tenantId: string;
  /** Comma-separated scopes. */
  scopes: string;
  keyHash: string;
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/**
 * The rows of the `api_key` table of a migrated database; `codec` seals and opens names (pass
 * the thread store's `codec` on a database with encryption at rest).
 */
export function apiKeyRows(weft: WeftPrisma, codec: FieldCodec = PLAIN_CODEC) {
  const prisma = weft.prisma as unknown as SqlitePrismaClient;
  // Names are any text: without a key they are stored and read exactly as given.
  const open = (row: ApiKeyRow): ApiKeyRow =>
    codec.encrypted && row.name !== null ? { ...row, name: codec.openText(row.name) } : row;
  const seal = (row: ApiKeyRow): ApiKeyRow =>
    codec.encrypted && row.name !== null ? { ...row, name: codec.sealText(row.name) } : row;
  return {
    insert: async (row: ApiKeyRow): Promise<ApiKeyRow> =>
      open(await prisma.apiKey.create({ data: seal(row) })),

    /** Every row (of one tenant), oldest first. */
    list: async (tenantId?: string): Promise<ApiKeyRow[]> =>
      (
        await prisma.apiKey.findMany({
          where: tenantId === undefined ? {} : { tenantId },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        })
      ).map(open),

    find: async (id: string): Promise<ApiKeyRow | null> => {
      const row = await prisma.apiKey.findUnique({ where: { id } });
      return row === null ? null : open(row);
    },

    revoke: async (id: string, at: Date): Promise<ApiKeyRow> =>
      open(await prisma.apiKey.update({ where: { id }, data: { revokedAt: at } })),

    /** Whether row `id` exists and is not revoked. */
    async isActive(id: string): Promise<boolean> {
      const row = await prisma.apiKey.findUnique({ where: { id }, select: { revokedAt: true } });
      return row !== null && row.revokedAt === null;
    },

    /** Rows not revoked. */
    countActive: (): Promise<number> => prisma.apiKey.count({ where: { revokedAt: null } }),

    /** Every row, revoked ones included. */
    countAll: (): Promise<number> => prisma.apiKey.count(),

    /** Deletes the revoked rows; resolves with how many there were. */
    deleteRevoked: async (): Promise<number> =>
      (await prisma.apiKey.deleteMany({ where: { revokedAt: { not: null } } })).count,
  };
}
