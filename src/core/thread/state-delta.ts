/**
 * The canonical delta of one entry that the state hash chains onto the previous hash: the entry
 * itself (less its signature) and what it did to the runs it touched.
 */
import { canonicalJson, canonicalObject, isCanonicallyOrdered, OMIT } from '../canonical.js';
import type { LogEntry } from '../log/index.js';
import type { ApplyContext } from './apply-context.js';
import type { ThreadState } from './state.js';

/**
 * Canonical `{runId: delta}` of the runs an entry touched: the facts the reducer emitted, in
 * order, plus the run's headline counters after the entry. O(what changed) — the run state
 * itself (memory, histories) is never rehashed: the state hash covers what identifies the state, not what grows with it.
 */
export function runDeltasText(
  state: ThreadState,
  touched: readonly string[],
  ctx: ApplyContext,
): string {
  if (touched.length === 0) return '{}';
  const runs: Record<string, unknown> = {};
  for (const runId of touched) {
    const run = state.runs.get(runId)!;
    runs[runId] = {
      events: ctx.runEvents?.get(runId) ?? [],
      status: run.status,
      iteration_count: run.iteration_count,
      retry_count: run.retry_count,
      total_tokens_used: run.total_tokens_used,
      total_cost_usd: run.total_cost_usd,
      updated_at: run.updated_at,
    };
  }
  return canonicalJson(runs);
}

/**
 * The canonical text of the entry less its signature, which is what the state hash commits to:
 * editing any field of an entry — payloads included — changes the hash. With the stored text at
 * hand (replay from a store) nothing is serialised at all. Entries read back from the log are
 * already in canonical key order, so otherwise their text is one native stringify; the
 * signature is the last key in canonical order (`verification` sorts after `schemaVersion`), and
 * a quote inside a string value is always escaped, so the last `,"verification":` in the text is
 * the signature's.
 */
export function unsignedEntryText(entry: LogEntry, stored?: string): string {
  if (stored !== undefined) return withoutSignature(stored, entry);
  if (!isCanonicallyOrdered(entry)) {
    return canonicalObject(entry as unknown as Record<string, unknown>, (key) =>
      key === 'verification' ? OMIT : undefined,
    );
  }
  return withoutSignature(JSON.stringify(entry), entry);
}

function withoutSignature(text: string, entry: LogEntry): string {
  if (entry.verification === undefined) return text;
  // The text ends with `,"verification":{"stateHash":<hash>}}`. For a hash that needs no
  // escaping its start is known; a match there cannot be anything else, since `,"` never occurs
  // inside a JSON string. Otherwise search for it.
  const at = text.length - SIGNATURE_OVERHEAD - entry.verification.stateHash.length;
  const cut =
    at > 0 && text.startsWith(SIGNATURE_START, at) ? at : text.lastIndexOf(',"verification":');
  return text.slice(0, cut) + '}';
}

const SIGNATURE_START = ',"verification":{"stateHash":"';
/** Characters of the signature besides the hash: its start, the closing quote and two braces. */
const SIGNATURE_OVERHEAD = SIGNATURE_START.length + 3;
