/**
 * Payload salt: in a thread created with saltPayloads, every new node with an object payload
 * carries one reserved field, `weft:salt`, keyed by a secret the engine holds. The id stays the
 * plain content hash of the stored (salted) payload, so it verifies anywhere, but guessing a
 * payload from its id needs the secret. The salt covers the node's sequence too: identical content
 * appended again is a new node, so an append never tells its sender whether that content was in
 * the thread already (readable or redacted) — with a deterministic salt, a writer could confirm a
 * guess of a redacted payload by appending it and seeing the same id come back.
 */
import { err, ok, type Result } from '../errors.js';
import { nodeIdentityText } from '../identity.js';
import type { JsonValue } from '../json.js';
import type { GraphState, NodeSalt } from './store.js';

export type { NodeSalt } from './store.js';

/** The reserved payload field of a salted thread's nodes. */
export const SALT_FIELD = 'weft:salt';

/**
 * `graph` as planning sees it in a salted thread: appends previewed on it salt each new node.
 * Planning only; values an append commits carry no salt function. Pure.
 */
export const withSalt = (graph: GraphState, salt: NodeSalt): GraphState =>
  Object.freeze({ ...graph, salt });

/**
 * The payload of draft `index` with its salt field, computed over the node's resolved identity
 * and the sequence it takes.
 * A payload that is not an object cannot carry the field, and one that already has it was not
 * written by this engine: both are VALIDATION_FAILED naming the path, so nothing is stored
 * unsalted in a salted thread. Pure.
 */
export function saltPayload(
  salt: NodeSalt,
  node: {
    kind: string;
    parents: readonly string[];
    payload: JsonValue;
    resourceKey?: string | undefined;
  },
  index: number,
  sequence: number,
): Result<JsonValue> {
  const { payload } = node;
  const path = `$.nodes[${index}].payload`;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return err({
      code: 'VALIDATION_FAILED',
      message: `node ${index}'s payload is not an object, and this thread salts payloads (a "${SALT_FIELD}" field in each): wrap the value in an object, e.g. {"value": ...}`,
      issues: [{ path, message: 'must be an object in a thread that salts payloads' }],
    });
  }
  if (Object.hasOwn(payload, SALT_FIELD)) {
    return err({
      code: 'VALIDATION_FAILED',
      message: `node ${index}'s payload has the field "${SALT_FIELD}", which this thread reserves for the salt it adds itself: remove it (or rename it)`,
      issues: [
        {
          path: `${path}["${SALT_FIELD}"]`,
          message: 'is reserved in a thread that salts payloads',
        },
      ],
    });
  }
  const text = nodeIdentityText({
    kind: node.kind,
    parents: node.parents,
    payload,
    resourceKey: node.resourceKey,
  });
  return ok(Object.freeze({ ...payload, [SALT_FIELD]: salt(text, sequence) }));
}
