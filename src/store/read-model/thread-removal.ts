/**
 * Removing threads and their retention, the thread store's side: deleting a thread (removal.ts
 * records the statements), setting when it expires, and finding the threads that have. Every
 * write goes through the store's writer like a commit, with its idempotency record in the same
 * transaction.
 */
import { ok, type Result, type WeftError } from '../../core/errors.js';
import type { FieldCodec } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import type { AuditRow } from '../tables/index.js';
import type { Lineages } from './lineage.js';
import { baseChain, emptyChanges } from './removal.js';
import { type ExpiredThread, type ExpiredThreadQuery, findExpiredThreads } from './retention.js';
import { type IdempotencyRecord, sealRecord } from './sealed-rows.js';
import { storeKeyring } from './thread-keys.js';
import type { Writer } from './writer.js';

/** Two first uses of one idempotency key raced, and this one lost. */
export const keyReused = (key = ''): WeftError => ({
  code: 'IDEMPOTENCY_KEY_REUSED',
  message: `idempotency key ${key} was used concurrently`,
  key,
});

export interface ThreadRemovalStore {
  /**
   * Deletes a live thread and everything only it holds, keeping what its forks still read
   * (removal.ts), with an audit entry and the command's idempotency record, in one transaction.
   * False when the thread is unknown or already deleted (nothing written). With `expiredBy`
   * (retention), only while the thread's expiry is at or before it, checked in the transaction:
   * false when it was cleared or moved later meanwhile.
   */
  removeThread(
    threadId: string,
    removal: { at: Date; audit: AuditRow; expiredBy?: Date | undefined },
    idempotency?: IdempotencyRecord,
  ): Promise<Result<boolean>>;
  /**
   * Sets (null: clears) when a live thread expires, with the command's idempotency record, in
   * one transaction. A thread deleted meanwhile keeps nothing of it.
   */
  setThreadExpiry(
    threadId: string,
    expiresAt: Date | null,
    idempotency?: IdempotencyRecord,
  ): Promise<Result<void>>;
  /** Live threads whose expiry is at or before `now`, soonest first (retention.ts). */
  findExpiredThreads(query: ExpiredThreadQuery): Promise<ExpiredThread[]>;
}

export function createThreadRemovalStore(deps: {
  weft: WeftPrisma;
  writer: Writer;
  codec: FieldCodec;
  lineages: Lineages;
  ready: () => Promise<void>;
}): ThreadRemovalStore {
  const { weft, writer, codec, lineages, ready } = deps;
  const sealed = (record: IdempotencyRecord | undefined) =>
    record === undefined ? undefined : sealRecord(codec, record);
  return {
    async removeThread(threadId, removal, idempotency) {
      await ready();
      const bases = await baseChain(weft, threadId);
      if (bases === undefined) return ok(false);
      const outcome = await writer.submit({
        changes: emptyChanges(threadId),
        entries: [],
        record: sealed(idempotency),
        removal: { threadId, bases, ...removal },
      });
      lineages.forget(threadId);
      storeKeyring(codec)?.forget(threadId);
      if (outcome === 'written') return ok(true);
      // Another deletion of the thread committed first, or its expiry moved (removal.ts).
      return outcome === 'conflict' ? ok(false) : { ok: false, error: keyReused(idempotency?.key) };
    },

    async setThreadExpiry(threadId, expiresAt, idempotency) {
      await ready();
      const outcome = await writer.submit({
        changes: emptyChanges(threadId),
        entries: [],
        record: sealed(idempotency),
        expiry: { threadId, expiresAt },
      });
      return outcome === 'written'
        ? ok(undefined)
        : { ok: false, error: keyReused(idempotency?.key) };
    },

    findExpiredThreads: (query) => findExpiredThreads(weft, query),
  };
}
