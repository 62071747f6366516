/**
 * The `api_key` table (migration 0004): rows of API keys, as stored — the SHA-256 of each key,
 * never the key. What a key looks like, how it is checked and what its scopes mean live with the
 * server's auth (src/server/auth/keys.ts).
 */
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

/** The rows of the `api_key` table of a migrated database. */
export function apiKeyRows(weft: WeftPrisma) {
  const prisma = weft.prisma as unknown as SqlitePrismaClient;
  return {
    insert: (row: ApiKeyRow): Promise<ApiKeyRow> => prisma.apiKey.create({ data: row }),

    /** Every row (of one tenant), oldest first. */
    list: (tenantId?: string): Promise<ApiKeyRow[]> =>
      prisma.apiKey.findMany({
        where: tenantId === undefined ? {} : { tenantId },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),

    find: (id: string): Promise<ApiKeyRow | null> => prisma.apiKey.findUnique({ where: { id } }),

    revoke: (id: string, at: Date): Promise<ApiKeyRow> =>
      prisma.apiKey.update({ where: { id }, data: { revokedAt: at } }),

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
