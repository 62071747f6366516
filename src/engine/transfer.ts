/**
 * Moving a thread's log between databases (`weft export` / `weft import`). An import replays the
 * whole log, checks every state hash, and writes the entries verbatim with their read models in
 * one transaction — the same path a fork takes for the prefix it copies.
 */
import { err, ok, type Result } from '../core/errors.js';
import { type LogEntry, validateEntry } from '../core/log/index.js';
import { findInputIssue } from '../core/text.js';
import { checkNewThreadId } from './checks.js';
import { MAX_REQUEST_DEPTH } from './idempotency.js';
import { projectLog } from './project-log.js';
import { inCallerTerms, newThreadKey, newThreadTenant } from './tenancy.js';
import { threadExists } from './thread-commands.js';
import type { Engine } from './types.js';

export interface ImportedLog {
  /** The id the thread has in its tenant. */
  threadId: string;
  tenant: string;
  logLength: number;
  stateHash: string;
}

const invalid = (path: string, message: string) => ({
  code: 'VALIDATION_FAILED' as const,
  message: `${path}: ${message}`,
  issues: [{ path, message }],
});

const HINT = 'import under another id (--thread-id)';

/**
 * Creates thread `threadId` of a tenant from `entries` (index 0 first). The id is the tenant's
 * own (see tenancy.ts): another tenant's thread by that id does not stand in the way. Refuses
 * (nothing written): an id that is not a new thread id (VALIDATION_FAILED at `$.threadId`), an
 * empty log, a malformed or unsigned entry (VALIDATION_FAILED), a log whose replay fails or whose
 * hashes differ (VERIFICATION_FAILED and the core's codes), an id the tenant already uses
 * (CONFLICT).
 */
export async function importThreadLog(
  engine: Engine,
  threadId: string,
  entries: readonly unknown[],
  /** The tenant of the new thread (default `default`; an engine acting for a tenant: its own). */
  tenant?: string,
): Promise<Result<ImportedLog>> {
  const id = checkNewThreadId(threadId, '$.threadId');
  if (!id.ok) return id;
  if (entries.length === 0) return err(invalid('$', 'the log has no entries'));
  const checked: LogEntry[] = [];
  for (const [i, raw] of entries.entries()) {
    const entry = validateEntry(raw, `$[${i}]`);
    if (!entry.ok) return entry;
    if (entry.value.verification?.stateHash === undefined) {
      return err(invalid(`$[${i}].verification`, 'every imported entry must carry its state hash'));
    }
    checked.push(entry.value);
  }
  const owner = newThreadTenant(engine.tenant ?? tenant);
  const placed = await newThreadKey(engine.tenants, threadId, owner);
  const at = { key: placed.key, id: threadId };
  if (placed.taken) return threadExists(engine, at, HINT);
  // The entries keep naming the thread as they did where they were exported: the log, and so
  // every state hash, is independent of the id and tenant it is imported under.
  // Whoever exported the log could have signed anything: every node id is recomputed from its
  // content, and text and numbers obey the rules a live write does.
  const badValue = findInputIssue(checked, '$', {
    exactNumbers: true,
    maxDepth: MAX_REQUEST_DEPTH,
  });
  if (badValue !== undefined) return err(invalid(badValue.path, badValue.message));
  const projected = projectLog(placed.key, checked, { trustRecordedIds: false });
  if (!projected.ok) return projected;
  const changes = projected.value.changes!;
  changes.thread.tenantId = owner;
  const written = await engine.store.commit(changes);
  if (!written.ok) {
    if (written.error.code === 'CONFLICT') return threadExists(engine, at, HINT);
    return err(inCallerTerms(written.error, at));
  }
  return ok({
    threadId,
    tenant: owner,
    logLength: projected.value.state.length,
    stateHash: projected.value.state.stateHash,
  });
}
