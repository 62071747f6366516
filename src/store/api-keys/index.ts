/**
 * The `api_key` table (migration 0004): rows of API keys, as stored — the SHA-256 of each key,
 * never the key. What a key looks like, how it is checked and what its scopes mean live with the
 * server's auth (src/auth/keys.ts). With an encryption key (the codec), the name given to
 * a key is sealed at rest like every other client-supplied text (src/store/crypto); names are
 * never looked up, only listed.
 */
import { type FieldCodec, PLAIN_CODEC } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import { rawExecute } from '../prisma/raw.js';
import { countRows, selectRows } from '../read-model/select.js';
import { type ApiKeyRow, apiKey } from '../tables/index.js';

export type { ApiKeyRow } from '../tables/index.js';

/**
 * The rows of the `api_key` table of a migrated database; `codec` seals and opens names (pass
 * the thread store's `codec` on a database with encryption at rest).
 */
export function apiKeyRows(weft: WeftPrisma, codec: FieldCodec = PLAIN_CODEC) {
  const K = apiKey.c;
  // Names are any text: without a key they are stored and read exactly as given.
  const open = (row: ApiKeyRow): ApiKeyRow =>
    codec.encrypted && row.name !== null ? { ...row, name: codec.openText(row.name) } : row;
  const seal = (row: ApiKeyRow): ApiKeyRow =>
    codec.encrypted && row.name !== null ? { ...row, name: codec.sealText(row.name) } : row;
  const find = async (id: string): Promise<ApiKeyRow | null> => {
    const [row] = await selectRows(weft, apiKey, `${K.id} = ?`, [id]);
    return row === undefined ? null : open(row);
  };
  return {
    insert: async (row: ApiKeyRow): Promise<ApiKeyRow> => {
      await rawExecute(
        weft,
        `${apiKey.insertHead} VALUES ${apiKey.tuple}`,
        apiKey.encode(seal(row), weft.provider),
      );
      return row;
    },

    /** Every row (of one tenant), oldest first. */
    list: async (tenantId?: string): Promise<ApiKeyRow[]> =>
      (
        await selectRows(
          weft,
          apiKey,
          tenantId === undefined ? '' : `${K.tenantId} = ?`,
          tenantId === undefined ? [] : [tenantId],
          ` ORDER BY ${K.createdAt}, ${K.id}`,
        )
      ).map(open),

    find,

    /** Marks row `id` revoked at `at`; rejects when there is no such row. */
    revoke: async (id: string, at: Date): Promise<ApiKeyRow> => {
      const changed = await rawExecute(
        weft,
        `UPDATE ${apiKey.sql} SET ${K.revokedAt} = ? WHERE ${K.id} = ?`,
        [apiKey.encodeField('revokedAt', at, weft.provider), id],
      );
      const row = changed === 0 ? null : await find(id);
      if (row === null) throw new Error(`api key ${id} does not exist`);
      return row;
    },

    /** Whether row `id` exists and is not revoked. */
    async isActive(id: string): Promise<boolean> {
      const [row] = await selectRows(weft, apiKey, `${K.id} = ?`, [id], '', ['revokedAt']);
      return row !== undefined && row.revokedAt === null;
    },

    /** Rows not revoked. */
    countActive: (): Promise<number> => countRows(weft, apiKey, `${K.revokedAt} IS NULL`, []),

    /** Every row, revoked ones included. */
    countAll: (): Promise<number> => countRows(weft, apiKey, '1 = 1', []),

    /** Deletes the revoked rows; resolves with how many there were. */
    deleteRevoked: (): Promise<number> =>
      rawExecute(weft, `DELETE FROM ${apiKey.sql} WHERE ${K.revokedAt} IS NOT NULL`),
  };
}
