/**
 * Redacting nodes of a thread: what the log records (`nodes_redacted`), how the entries that
 * created the nodes read afterwards, and how strict verification checks them.
 *
 * An entry's state hash commits to its whole text, payloads included, so once a payload is
 * replaced by a tombstone the hash can no longer be recomputed from the entry. Replay takes the
 * hash such an entry records as given (apply.ts), and the chain goes on from it unchanged. What
 * keeps the entry checked is the redaction's own entry, whose hash is computed as any other's:
 * it records, per node, the digest of the redacted entry's text as it now reads. Strict
 * verification recomputes that digest: everything in the entry but the withheld payloads is
 * still covered. Pure.
 */
import { canonicalJson } from '../canonical.js';
import { err, ok, type Result } from '../errors.js';
import { getNode } from '../graph/index.js';
import { isTombstone, tombstone, withPayloadReplaced } from '../graph/tombstone.js';
import { sha256Hex } from '../hash.js';
import type { JsonValue } from '../json.js';
import type { LogEntry } from '../log/index.js';
import { type ApplyContext, invalid } from './apply-context.js';
import type { NodesRedactedEvent } from './events.js';
import { copyThreadState, type ThreadState } from './state.js';
import { unsignedEntryText } from './state-delta.js';

/** Replaces the payloads of the event's nodes in the graph by the redaction's tombstone. */
export function applyRedaction(
  state: ThreadState,
  event: NodesRedactedEvent,
  ctx: ApplyContext,
): Result<ThreadState> {
  const ids: string[] = [];
  for (const { id } of event.nodes) {
    if (getNode(state.graph, id) === undefined) {
      return err(invalid(`nodes_redacted names node ${id}, which is not in the thread`));
    }
    ids.push(id);
  }
  const payload = tombstone({ reason: event.reason, redactedAt: ctx.entry.recordedAt });
  const next = copyThreadState(state);
  next.graph = withPayloadReplaced(state.graph, ids, payload);
  return ok(next);
}

/**
 * The canonical text of an entry with the payloads of the nodes `ids` replaced by `payload`, and
 * how many of them it held (see forEachNode for where nodes are found).
 */
export function redactEntryText(
  text: string,
  ids: ReadonlySet<string>,
  payload: JsonValue,
): { text: string; replaced: number } {
  const entry = JSON.parse(text) as LogEntry;
  let replaced = 0;
  forEachNode(entry.event, (node) => {
    if (!ids.has(node.id)) return;
    node.payload = payload;
    replaced++;
  });
  return { text: canonicalJson(entry), replaced };
}

/**
 * A stored answer (a command's canonical response, kept for idempotent retries) with the
 * payloads of the nodes `ids` replaced by `payload`, wherever it holds them, and how many it
 * held: a retry then answers with the same receipt, its nodes redacted. Pure.
 */
export function redactAnswerText(
  text: string,
  ids: ReadonlySet<string>,
  payload: JsonValue,
): { text: string; replaced: number } {
  const answer = JSON.parse(text) as unknown;
  let replaced = 0;
  forEachNode(answer, (node) => {
    if (!ids.has(node.id)) return;
    node.payload = payload;
    replaced++;
  });
  return { text: canonicalJson(answer), replaced };
}

/** The digest a redaction records for an entry's text (without its signature). */
export const redactionDigest = (text: string): string =>
  sha256Hex(unsignedEntryText(JSON.parse(text) as LogEntry, text));

/** A redacted node as strict verification reports it. */
export interface RedactedNodeReport {
  nodeId: string;
  /** The entry that created it. */
  index: number;
  /**
   * Whether a redaction recorded in this log covers the entry (its digest was checked). False
   * for a fork made after the redaction from a point before the source recorded it.
   */
  recorded: boolean;
}

/**
 * Strict verification's part for redactions: every node whose payload is a tombstone, and the
 * first entry whose text no longer matches the digest its latest redaction recorded.
 */
export function checkRedactions(
  entries: readonly LogEntry[],
  texts?: readonly string[],
): { redacted: RedactedNodeReport[]; bad?: { index: number; message: string } } {
  const digests = new Map<number, string>();
  for (const entry of entries) {
    const event = entry.event as { type: string; nodes?: unknown };
    if (event.type !== 'nodes_redacted') continue;
    for (const node of (event as unknown as NodesRedactedEvent).nodes) {
      digests.set(node.index, node.digest);
    }
  }
  const redacted: RedactedNodeReport[] = [];
  let bad: { index: number; message: string } | undefined;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const ids = tombstonedIds(entry.event);
    if (ids.length === 0) continue;
    const recorded = digests.get(entry.index);
    for (const nodeId of ids) {
      redacted.push({ nodeId, index: entry.index, recorded: recorded !== undefined });
    }
    if (recorded === undefined || bad !== undefined) continue;
    const text = texts?.[i] ?? canonicalJson(entry);
    if (redactionDigest(text) !== recorded) {
      bad = {
        index: entry.index,
        message: `entry ${entry.index} was changed after its nodes were redacted: its text no longer matches the digest the redaction recorded`,
      };
    }
  }
  return bad === undefined ? { redacted } : { redacted, bad };
}

/** The ids of the nodes in an event whose payload is a tombstone. */
function tombstonedIds(event: unknown): string[] {
  const found: string[] = [];
  // Only events that create nodes hold payloads; a redaction's own entry names ids only.
  if ((event as { type?: unknown }).type === 'nodes_redacted') return found;
  forEachNode(event, (node) => {
    if (isTombstone(node.payload)) found.push(node.id);
  });
  return found;
}

/**
 * Calls `visit` with every recorded node an event holds, wherever it holds them (a list of
 * nodes, a run's memory nodes, a goal node): any object with a string `id` and `kind` and a
 * `payload`. The objects themselves, so `visit` may change them.
 */
function forEachNode(
  event: unknown,
  visit: (node: { id: string; kind: string; payload: unknown }) => void,
): void {
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const record = value as Record<string, unknown>;
    if (typeof record.id === 'string' && typeof record.kind === 'string' && 'payload' in record) {
      visit(record as { id: string; kind: string; payload: unknown });
      return;
    }
    for (const child of Object.values(record)) walk(child);
  };
  walk(event);
}
