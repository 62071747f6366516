import { canonicalJson } from '../canonical.js';
import { sha256Hex } from '../hash.js';
import type { LogEntry } from './entry.js';

/** The state hash of an empty log: the chain starts here. */
export const GENESIS_STATE_HASH = '0'.repeat(64);

/**
 * The state hash after one entry: `sha256Hex(previous + "\n" + canonicalJson(delta))`.
 *
 * `delta` is the canonical description of what the entry changed in the derived state (nodes
 * added, run fields set, memory written, spend charged …), built by the thread machine's
 * `apply`. Hashing the delta instead of the whole state keeps the cost O(size of the delta) per
 * entry while still committing to the full history, because `previous` commits to everything
 * before. The delta should be plain JSON (see `findJsonUnsafe`); canonicalJson makes key order
 * irrelevant. Whatever the delta leaves out is not tamper-evident: a machine that wants every
 * envelope field covered includes `entryDigest(entry)` in it. Pure.
 */
export function chainStateHash(previous: string, delta: unknown): string {
  return sha256Hex(previous + '\n' + canonicalJson(delta));
}

/**
 * SHA-256 of the canonical entry without its `verification` (which is derived from it). A
 * machine can put this in its delta so that editing any envelope field — recordedAt, metadata,
 * ids — changes the state hash. Pure.
 */
export function entryDigest(entry: LogEntry): string {
  const { verification: _ignored, ...rest } = entry;
  return sha256Hex(canonicalJson(rest));
}

/**
 * `chainStateHash` for a delta already rendered as canonical JSON text — for machines that
 * write their delta straight to text. Equal to `chainStateHash(previous, JSON.parse(text))`
 * whenever `text` is canonical. Pure.
 */
export function chainStateHashText(previous: string, canonicalDelta: string): string {
  return sha256Hex(previous + '\n' + canonicalDelta);
}
