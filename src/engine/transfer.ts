/**
 * Moving a thread's log between databases (`weft export` / `weft import`). An import replays the
 * whole log, checks every state hash, and writes the entries verbatim with their read models in
 * one transaction — the same path a fork takes for the prefix it copies.
 */
import { err, ok, type Result } from '../core/errors.js';
import { type LogEntry, validateEntry } from '../core/log/index.js';
import { projectLog } from './project-log.js';
import { newThreadTenant } from './tenancy.js';
import type { Engine } from './types.js';

export interface ImportedLog {
  threadId: string;
  logLength: number;
  stateHash: string;
}

const invalid = (path: string, message: string) => ({
  code: 'VALIDATION_FAILED' as const,
  message: `${path}: ${message}`,
  issues: [{ path, message }],
});

/**
 * Creates thread `threadId` from `entries` (index 0 first). Refuses (nothing written): an empty
 * log, a malformed or unsigned entry (VALIDATION_FAILED), a log whose replay fails or whose hashes
 * differ (VERIFICATION_FAILED and the core's codes), an existing thread id (CONFLICT).
 */
export async function importThreadLog(
  engine: Engine,
  threadId: string,
  entries: readonly unknown[],
  /** The tenant of the new thread (default `default`; an engine acting for a tenant: its own). */
  tenant?: string,
): Promise<Result<ImportedLog>> {
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
  const projected = projectLog(threadId, checked);
  if (!projected.ok) return projected;
  const changes = projected.value.changes!;
  changes.thread.tenantId = newThreadTenant(engine.tenant ?? tenant);
  const written = await engine.store.commit(changes);
  if (!written.ok) {
    if (written.error.code === 'CONFLICT') {
      return err({
        ...written.error,
        message: `thread ${threadId} already exists: import under another id (--thread-id)`,
      });
    }
    return written;
  }
  return ok({
    threadId,
    logLength: projected.value.state.length,
    stateHash: projected.value.state.stateHash,
  });
}
