/**
 * The store's side of per-thread data keys (src/store/crypto/thread-keys.ts): reading wrapped
 * keys from `thread_key`, unwrapping them once into a bounded in-memory cache (so a read pays one
 * query per uncached thread, not an unwrap per row), and choosing the key a commit seals with.
 *
 * A thread gets its key in the transaction that creates its row (or its first entries): the
 * commit inserts the wrapped key inside its conflict guard, so of two creators exactly one key
 * is stored, and the loser's commit — and its cached key — are discarded. Threads created before
 * per-thread keys (no row) keep being sealed with the encryption key itself.
 */
import { createCache, createInvalidations } from '../cache.js';
import { type FieldCodec, keyringOf, type ThreadKeyring } from '../crypto/index.js';
import { createKeyWrap, threadCodec } from '../crypto/thread-keys.js';
import type { WeftPrisma } from '../prisma/index.js';
import { type ThreadKeyRow, threadKey } from '../tables/index.js';
import { marks, selectRows } from './select.js';
import type { ScriptRecorder } from './write-script.js';

/** Unwrapped keys kept (32 bytes each, plus the id): enough for the threads being worked on. */
const CACHE_SIZE = 10_000;

/** What sealing one commit's rows needs: its codec, and the key row to insert for a new key. */
export interface CommitKey {
  codec: FieldCodec;
  row?: ThreadKeyRow | undefined;
  /** Call when the commit is written: the new key is cached. */
  written(): void;
}

export interface StoreKeyring extends ThreadKeyring {
  /** The key a commit to `threadId` seals with; `created`: the commit creates the thread. */
  forCommit(threadId: string, created: boolean, at: Date): Promise<CommitKey>;
  /** Drops the thread's cached key (it was deleted; its rows may be gone). */
  forget(threadId: string): void;
}

/**
 * The codec a store hands out: `base` (the key's codec) with its keyring attached; `base` itself
 * without a key.
 */
export function createStoreCodec(
  weft: WeftPrisma,
  base: FieldCodec,
  key: Uint8Array | undefined,
): FieldCodec {
  if (!base.encrypted || key === undefined) return base;
  return { ...base, threads: createStoreKeyring(weft, base, key) };
}

/** The keyring of a store codec (createStoreCodec), or undefined for one without keys. */
export const storeKeyring = (codec: FieldCodec): StoreKeyring | undefined =>
  codec.threads as StoreKeyring | undefined;

function createStoreKeyring(weft: WeftPrisma, base: FieldCodec, key: Uint8Array): StoreKeyring {
  const wrap = createKeyWrap(key);
  // Under the thread's deletion epoch, taken before its key row is read: a key read racing the
  // thread's deletion (forget) is stored where no later lookup goes, so a shredded key is never
  // used again, nor handed to a thread made again under the id.
  const cache = createCache<FieldCodec>({ maxEntries: CACHE_SIZE });
  const invalidations = createInvalidations();
  const cached = (threadId: string) => cache.get(invalidations.keyOf(threadId));

  const load = async (threadIds: Iterable<string>) => {
    const missing = [...new Set(threadIds)].filter((id) => !cache.has(invalidations.keyOf(id)));
    for (let i = 0; i < missing.length; i += 500) {
      const part = missing.slice(i, i + 500);
      const keys = new Map(part.map((id) => [id, invalidations.keyOf(id)]));
      const rows = await selectRows(
        weft,
        threadKey,
        `${threadKey.c.threadId} IN (${marks(part.length)})`,
        part,
      );
      for (const row of rows) {
        const key = keys.get(row.threadId);
        if (key === undefined) continue;
        cache.set(key, threadCodec(base, row.threadId, wrap.unwrap(row.threadId, row.wrapped)));
      }
    }
  };

  return {
    load,
    // A thread without a stored key (older, or deleted) is not cached: its key may appear.
    forThread: (threadId) => cached(threadId) ?? base,
    async forCommit(threadId, created, at) {
      await load([threadId]);
      const key = invalidations.keyOf(threadId);
      const existing = cached(threadId);
      if (existing !== undefined || !created) {
        return { codec: existing ?? base, written: () => undefined };
      }
      const dataKey = wrap.newDataKey();
      const codec = threadCodec(base, threadId, dataKey);
      return {
        codec,
        row: { threadId, wrapped: wrap.wrap(threadId, dataKey), createdAt: at },
        written: () => {
          cache.set(key, codec);
        },
      };
    },
    forget: (threadId) => {
      cache.delete(invalidations.keyOf(threadId));
      invalidations.deleted(threadId);
    },
  };
}

/** Inserts new threads' keys; a key already stored for one of them fails the commit (a race). */
export function insertThreadKeys(script: ScriptRecorder, rows: readonly ThreadKeyRow[]): void {
  for (const row of rows) {
    script.add(
      `${threadKey.insertHead} VALUES ${threadKey.tuple}`,
      threadKey.encode(row, script.provider),
    );
  }
}

/** Opens thread-owned rows: loads their threads' keys, then maps each with its thread's codec. */
export async function openByThread<R>(
  codec: FieldCodec,
  rows: readonly R[],
  threadOf: (row: R) => string,
  open: (codec: FieldCodec, row: R) => R,
): Promise<R[]> {
  if (!codec.encrypted) return rows.map((row) => open(codec, row));
  const keys = keyringOf(codec);
  await keys.load(rows.map(threadOf));
  return rows.map((row) => open(keys.forThread(threadOf(row)), row));
}
