import { ok, type Result } from '../errors.js';
import { Batch } from './batch.js';
import { type Failure, invalid, isTimestamp, prepareDraft, type Recorded } from './draft.js';
import type { GraphState } from './store.js';
import type { CausalNode, NodeDraft } from './types.js';

export { MAX_RESOURCE_KEY_BYTES } from './draft.js';

export interface AppendResult {
  graph: GraphState;
  /** One node per draft, in draft order: the new node, or the existing one with the same id. */
  nodes: CausalNode[];
  /** Per draft: false when identical content already existed (nothing was created). */
  created: boolean[];
}

/**
 * Appends drafts in order, all or nothing. Pure: `graph` is left untouched and
 * stays fully readable. For each draft:
 * - parents default to the whole frontier as it is after the earlier drafts; an unknown parent
 *   fails with UNKNOWN_PARENT naming it;
 * - with a resourceKey, the current head of that key becomes a parent too;
 * - parents are de-duplicated and sorted with the default sort, then the content id is computed;
 * - when that id already exists nothing is created and the existing node is returned
 *   (`created: false`, no state change);
 * - `advance` (default true) removes the parents (hence the previous resource head) from the
 *   frontier and adds the new node at its end; semantic nodes (`semantic:` resource keys) never
 *   enter the frontier and leave it unchanged;
 * - a `semantic` draft's payload is normalised to `{type, key, content}` and its resource key set
 *   to (or checked against) `semantic:<type>:<key>`; then every draft must obey the node rules
 *   (node-rules.ts) every path into a graph shares: a type outside the vocabulary fails with
 *   SEMANTIC_TYPE_NOT_ALLOWED unless dynamic types are allowed, any other rule with
 *   VALIDATION_FAILED naming the field.
 * `createdAt` must parse as a date; sequences continue 1-based and contiguous.
 * Cost: O(parents + frontier + payload) per draft plus O(log n); O(n) once if `graph` is an older
 * value whose store has moved on (see store.ts).
 */
export function appendNodes(
  graph: GraphState,
  drafts: readonly NodeDraft[],
  createdAt: string,
  options: AppendOptions = {},
): Result<AppendResult> {
  const batch = stage(graph, drafts, createdAt, options.knownIds);
  if (!(batch instanceof Batch)) return batch;
  return ok({ graph: batch.commit(), nodes: batch.nodes, created: batch.created });
}

/**
 * `appendNodes` for recorded nodes (those of a log entry being replayed), which must come out of
 * the append exactly as recorded: nothing is normalised or repaired. Each node must obey the node
 * rules as given (NODE_RESOURCE_KEY_INVALID, NODE_SEMANTIC_INVALID,
 * NODE_SEMANTIC_TYPE_NOT_ALLOWED) and its recorded parents must be the ones the append resolves
 * — sorted, unique, with the previous version of its resource key (NODE_PARENTS_INVALID); each
 * error names the node (`label(index)`, its recorded id) and the field. With `trustIds` the
 * recorded id is taken as the node's id instead of being recomputed (see AppendOptions.knownIds):
 * only for logs whose content ids were computed by this code. Internal to the core.
 */
export function appendRecordedNodes(
  graph: GraphState,
  drafts: readonly (NodeDraft & { id: string })[],
  createdAt: string,
  options: { trustIds: boolean; label: (index: number) => string },
): Result<AppendResult> {
  const batch = stage(graph, drafts, createdAt, options.trustIds ? OWN_IDS : undefined, options);
  if (!(batch instanceof Batch)) return batch;
  return ok({ graph: batch.commit(), nodes: batch.nodes, created: batch.created });
}

/** Tells `stage` to read each draft's known id from its own `id` field. */
const OWN_IDS: unique symbol = Symbol('own ids');

export interface AppendOptions {
  /**
   * Content ids already known for the drafts, in draft order — for replaying a verified log,
   * whose hash chain already commits to each recorded node's content and id. Skips recomputing
   * the id (the costliest step of an append). Never pass ids that were not computed by `nodeId`
   * from the same content: they are trusted as given.
   */
  knownIds?: readonly string[];
}

/**
 * What `appendNodes` would return, without creating a new value: the nodes (ids, resolved
 * parents, normalised payloads) and which of them would be created. Leaves the shared store
 * untouched, so planning a command never forces a later append to copy the store.
 */
export function previewAppend(
  graph: GraphState,
  drafts: readonly NodeDraft[],
  createdAt: string,
): Result<Omit<AppendResult, 'graph'>> {
  const batch = stage(graph, drafts, createdAt);
  if (!(batch instanceof Batch)) return batch;
  return ok({ nodes: batch.nodes, created: batch.created });
}

function stage(
  graph: GraphState,
  drafts: readonly NodeDraft[],
  createdAt: string,
  knownIds?: readonly string[] | typeof OWN_IDS,
  recorded?: Recorded,
): Batch | Failure {
  if (!Array.isArray(drafts)) return invalid([{ path: '$', message: 'drafts must be an array' }]);
  if (!isTimestamp(createdAt)) {
    return invalid([
      { path: 'createdAt', message: 'createdAt must be an ISO 8601 / RFC 3339 timestamp' },
    ]);
  }
  const count = drafts.length;
  const batch = new Batch(graph, count);
  for (let i = 0; i < count; i++) {
    const draft = drafts[i];
    const prepared = prepareDraft(graph, draft, i, recorded);
    if (!prepared.ok) return prepared;
    const knownId =
      knownIds === OWN_IDS ? (draft as { id: string }).id : (knownIds as string[] | undefined)?.[i];
    const failed = batch.add(prepared.value, createdAt, i, knownId, recorded);
    if (failed !== undefined) return failed;
  }
  return batch;
}
