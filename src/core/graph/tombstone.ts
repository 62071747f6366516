/**
 * Redaction: a node whose payload was withheld keeps its id, kind, parents, resource key and
 * place in the log; only its payload is replaced by a tombstone, `{"weft:redacted": {reason,
 * redactedAt}}`. The key is reserved: a live write whose payload is a tombstone is refused, so a
 * tombstone in a log was put there by a redaction, never by a client. Pure.
 */
import type { JsonObject, JsonValue } from '../json.js';
import { cloneStore, freezeNode, type GraphState, makeGraph } from './store.js';

export const TOMBSTONE_KEY = 'weft:redacted';

/** What a tombstone says of the redaction. */
export interface RedactionNote {
  reason: string;
  redactedAt: string;
}

/** The payload that replaces a redacted node's. */
export function tombstone(note: RedactionNote): JsonObject {
  return { [TOMBSTONE_KEY]: { reason: note.reason, redactedAt: note.redactedAt } };
}

/** The redaction a payload records, or undefined for a payload that is not a tombstone. */
export function redactionOf(payload: unknown): RedactionNote | undefined {
  // Checked for every node a replay applies: the common payload is refused without allocating.
  if (!hasTombstoneKey(payload)) return undefined;
  const record = payload as Record<string, JsonValue>;
  const keys = Object.keys(record);
  if (keys.length !== 1 || keys[0] !== TOMBSTONE_KEY) return undefined;
  const note = record[TOMBSTONE_KEY];
  if (typeof note !== 'object' || note === null || Array.isArray(note)) return undefined;
  const { reason, redactedAt } = note as Record<string, JsonValue>;
  if (typeof reason !== 'string' || typeof redactedAt !== 'string') return undefined;
  return { reason, redactedAt };
}

const hasTombstoneKey = (payload: unknown): payload is Record<string, unknown> =>
  typeof payload === 'object' &&
  payload !== null &&
  !Array.isArray(payload) &&
  Object.hasOwn(payload, TOMBSTONE_KEY);

export const isTombstone = (payload: unknown): boolean => redactionOf(payload) !== undefined;

/**
 * True for a payload a client may not write: an object whose only key is the reserved one
 * (whatever its value), so that nothing a client wrote can pass for a redaction.
 */
export function isReservedPayload(payload: unknown): boolean {
  if (!hasTombstoneKey(payload)) return false;
  const keys = Object.keys(payload);
  return keys.length === 1 && keys[0] === TOMBSTONE_KEY;
}

/**
 * The graph with the payloads of `ids` replaced by `payload`. The shared store is copied first
 * (O(n)): values that share it, and so the states of other holders, are left as they were.
 * Unknown ids are ignored.
 */
export function withPayloadReplaced(
  graph: GraphState,
  ids: readonly string[],
  payload: JsonValue,
): GraphState {
  const store = cloneStore(graph.store, graph.count);
  const frozen = deepFreeze(payload);
  for (const id of ids) {
    const seq = store.ids.get(store.nodes, id);
    if (seq === undefined || seq > graph.count) continue;
    const node = store.nodes[seq - 1]!;
    store.nodes[seq - 1] = freezeNode({ ...node, parents: [...node.parents], payload: frozen });
  }
  return makeGraph(graph.config, store, graph.count, graph.frontier);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
