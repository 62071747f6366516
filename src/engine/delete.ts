/**
 * Deleting a thread. The store removes it and everything only it holds in one transaction,
 * keeping the rows its forks still read (store/read-model/removal.ts), and writes the tenant's
 * audit entry; the engine then forgets the thread (state cache, tenant directory). The retention
 * sweeper (retention.ts) deletes expired threads here too, with `expiredBy`: the store deletes
 * only while the thread's expiry is at or before it (NOT_FOUND otherwise, nothing written).
 */

import { canonicalJson } from '../core/canonical.js';
import { err, ok, type Result } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { threadNotFound } from './checks.js';
import type { Runtime } from './engine.js';
import type { IdempotencyClaim } from './idempotency.js';
import { answeredAs, locateThread, publicThreadId, threadTenant } from './tenancy.js';
import type { DeleteThreadInput, DeleteThreadResult } from './types.js';

export async function deleteThread(
  rt: Runtime,
  input: DeleteThreadInput,
  claim: IdempotencyClaim | undefined,
  tenant: string | undefined,
  checkRef: (value: unknown, path: string) => Result<string>,
  expiredBy?: Date,
): Promise<Result<DeleteThreadResult>> {
  const checked = checkRef(input.threadId, '$.threadId');
  if (!checked.ok) return checked;
  const located = await locateThread(rt.tenants, input.threadId, tenant);
  if (!located.ok) return located;
  const at = located.value;
  return rt.exclusive(at.key, async () => {
    const latest = await rt.load(at.key, true);
    if (!latest.ok) return answeredAs(latest, at);
    const owner = tenant ?? (await threadTenant(rt.tenants, at.key)) ?? 'default';
    const now = rt.clock.now();
    const response: DeleteThreadResult = {
      threadId: at.id,
      logLength: latest.value.length,
      stateHash: latest.value.stateHash,
    };
    const removed = await rt.store.removeThread(
      at.key,
      {
        at: new Date(now),
        expiredBy,
        audit: {
          id: auditEntryId(at.key, latest.value.config?.createdAt ?? ''),
          tenantId: owner,
          recordedAt: new Date(now),
          actor: input.actor ?? 'system',
          action: 'thread_deleted',
          // The owner reads its trail by its own ids, whoever deleted (the sweeper holds keys).
          threadId: publicThreadId(at.key),
          logLength: response.logLength,
          stateHash: response.stateHash,
        },
      },
      // Not tied to the thread: the records of its commands go with it, this one stays.
      claim === undefined
        ? undefined
        : { ...claim, response: canonicalJson(response), threadId: null, createdAt: new Date(now) },
    );
    rt.cache.delete(at.key);
    rt.tenants.forget(at.key);
    if (!removed.ok) return removed;
    if (!removed.value) return err(threadNotFound(at.id));
    await rt.publishDeleted(at.key);
    return ok(response);
  });
}

/**
 * The id of the audit entry of deleting the thread stored under `key` and created at
 * `createdAt`. One per thread, so that of two deletions racing the other loses at this id
 * (removal.ts); a digest, because the id is shown to the tenant and a storage key would show
 * the tenant's name, and whether another tenant holds a thread by that id. A thread id holds no
 * control character, so the newline separates the two unambiguously.
 */
const auditEntryId = (key: string, createdAt: string): string =>
  `thread_deleted:${sha256Hex(`${key}\n${createdAt}`).slice(0, 32)}`;
