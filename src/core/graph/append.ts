import { err, type ImportRuleCode, ok, type Result, type ValidationIssue } from '../errors.js';
import { isNodeKind, type NodeKind, nodeId } from '../identity.js';
import type { JsonValue } from '../json.js';
import { findJsonProblem, NOT_JSON, tryFrozenJsonCopy } from './json-value.js';
import { type NodeProblem, type NodeRule, nodeProblem } from './node-rules.js';
import { isSemanticResourceKey, resolveSemantic } from './semantic.js';
import {
  cloneStore,
  freezeNode,
  type GraphState,
  headSeq,
  makeGraph,
  nodeAt,
  pushNode,
  seqOf,
} from './store.js';
import type { CausalNode, NodeDraft } from './types.js';

export interface AppendResult {
  graph: GraphState;
  /** One node per draft, in draft order: the new node, or the existing one with the same id. */
  nodes: CausalNode[];
  /** Per draft: false when identical content already existed (nothing was created). */
  created: boolean[];
}

/**
 * Longest resource key a new node may have, in UTF-8 bytes. Keys are indexed; Postgres refuses
 * an index entry over about 2.7 KB, and with encryption at rest a key is stored sealed (a third
 * longer). Checked on live writes only: a recorded node is replayed as it was written.
 */
export const MAX_RESOURCE_KEY_BYTES = 1024;

const utf8Length = (text: string): number => new TextEncoder().encode(text).length;

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

/** How `stage` treats recorded nodes: checked as given, failures named with `label`. */
interface Recorded {
  label: (index: number) => string;
}

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

type Failure = Result<never>;

/** True when `Date.parse(createdAt)` is a number; `Date.parse` is costly, so cheap cases first. */
function isTimestamp(createdAt: unknown): createdAt is string {
  if (typeof createdAt !== 'string') return false;
  return isPlainIsoInstant(createdAt) || !Number.isNaN(Date.parse(createdAt));
}

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ` (what `toISOString` writes) with month 1–12, day 1–28, hour 0–23,
 * minute and second 0–59: a subset that `Date.parse` always accepts. Other valid forms (day 31,
 * offsets, other precisions) take the `Date.parse` path.
 */
function isPlainIsoInstant(text: string): boolean {
  if (text.length !== 24) return false;
  for (let i = 0; i < 24; i++) {
    const c = text.charCodeAt(i);
    const expected = ISO_SHAPE.charCodeAt(i);
    if (expected === DIGIT ? c < 48 || c > 57 : c !== expected) return false;
  }
  const two = (at: number) => (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;
  const month = two(5);
  const day = two(8);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= 28 &&
    two(11) <= 23 &&
    two(14) <= 59 &&
    two(17) <= 59
  );
}

/** The shape of a plain ISO instant, `d` standing for any digit. */
const ISO_SHAPE = 'dddd-dd-ddTdd:dd:dd.dddZ';
const DIGIT = 100; // 'd'

interface PreparedDraft {
  kind: NodeKind;
  payload: JsonValue;
  parents: string[] | undefined;
  resourceKey: string | undefined;
  advance: boolean;
  /** A recorded node's own id, for naming it in errors. */
  recordedId?: string;
}

function prepareDraft(
  graph: GraphState,
  draft: unknown,
  index: number,
  recorded?: Recorded,
): Result<PreparedDraft> {
  if (typeof draft !== 'object' || draft === null) {
    return invalid([
      { path: `$[${index}]`, message: 'a draft must be an object {kind, payload, ...}' },
    ]);
  }
  const d = draft as Partial<Record<keyof NodeDraft, unknown>>;
  // Checked and copied in one pass; the problem is looked for only when the copy is refused.
  const copy = d.payload === undefined ? NOT_JSON : tryFrozenJsonCopy(d.payload);
  const problem =
    d.payload === undefined || copy !== NOT_JSON ? undefined : findJsonProblem(d.payload);
  const recordedId = (draft as { id?: unknown }).id;
  if (recorded !== undefined && isNodeKind(d.kind) && copy !== NOT_JSON) {
    // Checked as recorded, before the draft checks, so a recorded node gets the rule's own code.
    const broken = nodeProblem(
      graph.config,
      d.kind,
      copy,
      d.resourceKey,
      d.resourceKey !== undefined,
    );
    if (broken !== undefined) {
      return recordedFailure(recorded, index, recordedId, RECORDED_CODES[broken.rule], broken);
    }
  }
  if (
    !isNodeKind(d.kind) ||
    d.payload === undefined ||
    problem !== undefined ||
    (d.parents !== undefined && !isStringArray(d.parents)) ||
    (d.resourceKey !== undefined && (typeof d.resourceKey !== 'string' || d.resourceKey === '')) ||
    (d.advance !== undefined && typeof d.advance !== 'boolean')
  ) {
    return invalid(draftIssues(d, problem, `$[${index}]`));
  }
  if (recorded !== undefined) {
    return ok({
      kind: d.kind as NodeKind,
      payload: copy as JsonValue,
      parents: d.parents as string[] | undefined,
      resourceKey: d.resourceKey as string | undefined,
      advance: d.advance !== false,
      ...(typeof recordedId === 'string' ? { recordedId } : {}),
    });
  }
  if (typeof d.resourceKey === 'string' && utf8Length(d.resourceKey) > MAX_RESOURCE_KEY_BYTES) {
    return invalid([
      {
        path: `$[${index}].resourceKey`,
        message: `resourceKey is ${utf8Length(d.resourceKey)} bytes of UTF-8, over the limit of ${MAX_RESOURCE_KEY_BYTES}`,
      },
    ]);
  }
  return resolveDraft(graph, d, index, copy as JsonValue);
}

/** The import rule code a recorded node that breaks a node rule fails with. */
const RECORDED_CODES: Record<NodeRule, ImportRuleCode> = {
  resourceKey: 'NODE_RESOURCE_KEY_INVALID',
  semantic: 'NODE_SEMANTIC_INVALID',
  vocabulary: 'NODE_SEMANTIC_TYPE_NOT_ALLOWED',
};

function recordedFailure(
  recorded: Recorded,
  index: number,
  id: unknown,
  code: ImportRuleCode,
  broken: Pick<NodeProblem, 'field' | 'problem'>,
): Failure {
  const named = typeof id === 'string' ? ` (${id})` : '';
  const message = `${recorded.label(index)}${named}: ${broken.field} ${broken.problem}`;
  return err(typeof id === 'string' ? { code, message, nodeId: id } : { code, message });
}

const isStringArray = (value: unknown): boolean =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Every shape problem of a draft, for the error; only built once a draft is known to be bad. */
function draftIssues(
  d: Partial<Record<keyof NodeDraft, unknown>>,
  problem: ReturnType<typeof findJsonProblem>,
  path: string,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isNodeKind(d.kind)) {
    issues.push({ path: `${path}.kind`, message: `unknown node kind ${JSON.stringify(d.kind)}` });
  }
  if (d.payload === undefined) {
    issues.push({ path: `${path}.payload`, message: 'payload is required (use null for none)' });
  } else if (problem) {
    issues.push({ path: `${path}.payload${problem.path}`, message: problem.reason });
  }
  if (
    d.parents !== undefined &&
    (!Array.isArray(d.parents) || d.parents.some((p) => typeof p !== 'string'))
  ) {
    issues.push({ path: `${path}.parents`, message: 'parents must be an array of node ids' });
  }
  if (d.resourceKey !== undefined && (typeof d.resourceKey !== 'string' || d.resourceKey === '')) {
    issues.push({ path: `${path}.resourceKey`, message: 'resourceKey must be a non-empty string' });
  }
  if (d.advance !== undefined && typeof d.advance !== 'boolean') {
    issues.push({ path: `${path}.advance`, message: 'advance must be a boolean' });
  }
  return issues;
}

/**
 * `copy` is the frozen copy of `d.payload`, which a semantic draft replaces by its normal form
 * (its resource key derived when omitted); the result must then obey the node rules.
 */
function resolveDraft(
  graph: GraphState,
  d: Partial<Record<keyof NodeDraft, unknown>>,
  index: number,
  copy: JsonValue,
): Result<PreparedDraft> {
  const kind = d.kind as NodeKind;
  const path = `$[${index}]`;
  let payload = copy;
  let resourceKey = d.resourceKey as string | undefined;
  if (kind === 'semantic') {
    const semantic = resolveSemantic(graph.config, payload, `${path}.payload`);
    if (!semantic.ok) return semantic;
    // A fresh {type, key, content} around the already frozen copy of the content.
    payload = Object.freeze(semantic.value.payload);
    resourceKey ??= semantic.value.resourceKey;
  }
  const broken = nodeProblem(graph.config, kind, payload, resourceKey, resourceKey !== undefined);
  if (broken?.rule === 'vocabulary') {
    const type = (payload as { type: string }).type;
    return err({
      code: 'SEMANTIC_TYPE_NOT_ALLOWED',
      message: `Semantic type ${broken.problem}`,
      type,
    });
  }
  if (broken !== undefined) {
    return invalid([
      { path: `${path}.${broken.field}`, message: `${broken.field} ${broken.problem}` },
    ]);
  }
  return ok({
    kind,
    payload,
    parents: d.parents as string[] | undefined,
    resourceKey,
    advance: d.advance !== false,
  });
}

/**
 * The drafts of one call, staged on top of the base value without touching the shared store, so
 * a failing draft leaves nothing behind. `commit` pushes them in one go.
 */
class Batch {
  /** The staged nodes (the first `size` slots; sized for the whole call). */
  private readonly staged: CausalNode[];
  /** Per staged node, the sequences of its parents (same order), so commit looks none up. */
  private readonly stagedParentSeqs: number[][];
  /** Number of staged nodes. */
  private size = 0;
  /**
   * Id → sequence of the staged nodes, built only for large batches: most calls stage one node,
   * and a scan of a few staged ids is cheaper than allocating maps per call.
   */
  private stagedSeq: Map<string, number> | undefined;
  /** Resource key → newest staged sequence, built together with `stagedSeq`. */
  private stagedHeads: Map<string, number> | undefined;
  private frontier: readonly string[];
  /** Per draft: its node (new or existing) … */
  readonly nodes: CausalNode[];
  /** … and whether it was created. */
  readonly created: boolean[];

  /** `capacity`: the number of drafts, the most nodes this batch can stage. */
  constructor(
    private readonly base: GraphState,
    capacity: number,
  ) {
    this.frontier = base.frontier;
    this.staged = new Array<CausalNode>(capacity);
    this.stagedParentSeqs = new Array<number[]>(capacity);
    this.nodes = new Array<CausalNode>(capacity);
    this.created = new Array<boolean>(capacity);
  }

  private seqOf(id: string): number | undefined {
    const seq = seqOf(this.base, id);
    if (seq !== undefined || this.size === 0) return seq;
    if (this.stagedSeq !== undefined) return this.stagedSeq.get(id);
    for (let i = 0; i < this.size; i++) {
      if (this.staged[i]!.id === id) return this.base.count + i + 1;
    }
    return undefined;
  }

  /** The sequence of the newest node of `key`: staged first, then the base value's. */
  private headSeq(key: string): number | undefined {
    if (this.stagedHeads !== undefined) return this.stagedHeads.get(key) ?? headSeq(this.base, key);
    for (let i = this.size - 1; i >= 0; i--) {
      if (this.staged[i]!.resourceKey === key) return this.base.count + i + 1;
    }
    return headSeq(this.base, key);
  }

  private index(node: CausalNode): void {
    this.stagedSeq!.set(node.id, node.sequence);
    if (node.resourceKey !== undefined) this.stagedHeads!.set(node.resourceKey, node.sequence);
  }

  private nodeAt(seq: number): CausalNode {
    return seq <= this.base.count
      ? nodeAt(this.base, seq)
      : (this.staged[seq - this.base.count - 1] as CausalNode);
  }

  /** Stages draft `index` (or finds its node), recording it in `nodes`/`created`; or fails. */
  add(
    draft: PreparedDraft,
    createdAt: string,
    index: number,
    knownId?: string,
    recorded?: Recorded,
  ): Failure | undefined {
    const requested = draft.parents ?? this.frontier;
    const { resourceKey } = draft;
    const previousSeq = resourceKey === undefined ? undefined : this.headSeq(resourceKey);
    // Sized exactly: the parents list is kept by the node for the life of the graph.
    const total = requested.length + (previousSeq === undefined ? 0 : 1);
    // The usual node's parents are exactly the base value's frontier, which is frozen and (when
    // sorted) already the parents list the node needs: the node shares it.
    const shared =
      previousSeq === undefined && requested === this.base.frontier && isSortedUnique(requested);
    const parents = shared ? (requested as string[]) : new Array<string>(total);
    const parentSeqs = new Array<number>(total);
    for (let i = 0; i < requested.length; i++) {
      const parent = requested[i] as string;
      const seq = this.seqOf(parent);
      if (seq === undefined) {
        return err({
          code: 'UNKNOWN_PARENT',
          message: `Draft ${index} names parent ${parent}, which is not a node of this graph; use an existing node id`,
          nodeId: parent,
        });
      }
      if (!shared) parents[i] = parent;
      parentSeqs[i] = seq;
    }
    if (previousSeq !== undefined) {
      parents[total - 1] = this.nodeAt(previousSeq).id;
      parentSeqs[total - 1] = previousSeq;
    }
    if (!shared) sortUnique(parents, parentSeqs);
    if (recorded !== undefined && !sameIds(parents, requested)) {
      return recordedFailure(recorded, index, draft.recordedId, 'NODE_PARENTS_INVALID', {
        field: 'parents',
        problem: `${JSON.stringify(requested)} are not the parents the append resolves, ${JSON.stringify(parents)} (sorted, unique, with the previous version of its resourceKey)`,
      });
    }
    const id =
      knownId ?? nodeId({ kind: draft.kind, parents, payload: draft.payload, resourceKey });
    const existing = this.seqOf(id);
    if (existing !== undefined) {
      this.nodes[index] = this.nodeAt(existing);
      this.created[index] = false;
      return undefined;
    }

    const sequence = this.base.count + this.size + 1;
    // One literal per shape, so the optional key needs no property store of its own.
    const node: CausalNode =
      resourceKey === undefined
        ? { id, kind: draft.kind, parents, payload: draft.payload, createdAt, sequence }
        : {
            id,
            kind: draft.kind,
            parents,
            payload: draft.payload,
            createdAt,
            sequence,
            resourceKey,
          };
    this.staged[this.size] = shared ? Object.freeze(node) : freezeNode(node);
    this.stagedParentSeqs[this.size] = parentSeqs;
    this.size++;
    if (this.stagedSeq === undefined && this.size === INDEXED_BATCH) {
      this.stagedSeq = new Map();
      this.stagedHeads = new Map();
      for (let i = 0; i < this.size; i++) this.index(this.staged[i]!);
    } else if (this.stagedSeq !== undefined) {
      this.index(node);
    }
    if (draft.advance && !isSemanticResourceKey(resourceKey)) {
      this.frontier = advanceFrontier(this.frontier, parents, id);
    }
    this.nodes[index] = node;
    this.created[index] = true;
    return undefined;
  }

  commit(): GraphState {
    const { base, staged, size } = this;
    if (size === 0) return base;
    if (base.store.nodes.length !== base.count && this.repeatsStore()) {
      return makeGraph(base.config, base.store, base.count + size, this.frontier);
    }
    const store =
      base.store.nodes.length === base.count ? base.store : cloneStore(base.store, base.count);
    for (let i = 0; i < size; i++) {
      pushNode(store, staged[i]!, this.stagedParentSeqs[i]);
    }
    return makeGraph(base.config, store, base.count + size, this.frontier);
  }

  /**
   * Whether the staged nodes are, field for field, the nodes the shared store already holds
   * after the base's count — an older value re-appending what a newer one appended, as the
   * replay of a log's tail onto an earlier state of the same log (time travel from a snapshot)
   * does. Then the new value is the store's prefix of that length, exactly what copying the
   * store and pushing the nodes would give, and the store is shared instead (fast-forward).
   */
  private repeatsStore(): boolean {
    const { base, staged, size } = this;
    const { nodes } = base.store;
    if (nodes.length < base.count + size) return false;
    for (let i = 0; i < size; i++) {
      if (!sameNode(staged[i]!, nodes[base.count + i]!)) return false;
    }
    return true;
  }
}

function sameNode(a: CausalNode, b: CausalNode): boolean {
  if (
    a.id !== b.id ||
    a.kind !== b.kind ||
    a.createdAt !== b.createdAt ||
    a.sequence !== b.sequence ||
    a.resourceKey !== b.resourceKey ||
    a.parents.length !== b.parents.length
  ) {
    return false;
  }
  for (let i = 0; i < a.parents.length; i++) if (a.parents[i] !== b.parents[i]) return false;
  return sameJson(a.payload, b.payload);
}

/** Deep equality of two JSON values (object key order aside). */
function sameJson(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i]!, b[i]!)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    const other = (b as { [key: string]: JsonValue })[key];
    if (other === undefined || !sameJson((a as { [key: string]: JsonValue })[key]!, other)) {
      return false;
    }
  }
  return true;
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True for a list in ascending code-unit order without repeats, as `sortUnique` leaves it. */
function isSortedUnique(ids: readonly string[]): boolean {
  for (let i = 1; i < ids.length; i++)
    if ((ids[i - 1] as string) >= (ids[i] as string)) return false;
  return true;
}

/** From this many staged nodes on, staged ids are looked up in a map instead of scanned. */
const INDEXED_BATCH = 16;

/**
 * Sorts `ids` with the default sort and removes duplicates, in place, keeping `seqs` (the
 * sequence of each id, same order) aligned.
 */
function sortUnique(ids: string[], seqs: number[]): void {
  const n = ids.length;
  if (n < 2) return;
  // Insertion sort of the two aligned lists: parents lists are short.
  for (let i = 1; i < n; i++) {
    const id = ids[i] as string;
    const seq = seqs[i] as number;
    let j = i - 1;
    while (j >= 0 && (ids[j] as string) > id) {
      ids[j + 1] = ids[j] as string;
      seqs[j + 1] = seqs[j] as number;
      j--;
    }
    ids[j + 1] = id;
    seqs[j + 1] = seq;
  }
  let kept = 1;
  for (let i = 1; i < n; i++) {
    if (ids[i] === ids[kept - 1]) continue;
    ids[kept] = ids[i] as string;
    seqs[kept] = seqs[i] as number;
    kept++;
  }
  ids.length = kept;
  seqs.length = kept;
}

/** The frontier without `parents` (sorted, unique), plus `id` at the end. O(frontier · log parents). */
function advanceFrontier(frontier: readonly string[], parents: string[], id: string): string[] {
  let kept = 0;
  for (let i = 0; i < frontier.length; i++) {
    if (!containsSorted(parents, frontier[i] as string)) kept++;
  }
  // Sized exactly: the frontier is kept, frozen, by the new graph value.
  const next = new Array<string>(kept + 1);
  let at = 0;
  for (let i = 0; i < frontier.length; i++) {
    const head = frontier[i] as string;
    if (!containsSorted(parents, head)) next[at++] = head;
  }
  next[at] = id;
  return next;
}

function containsSorted(sorted: readonly string[], value: string): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const probe = sorted[mid] as string;
    if (probe === value) return true;
    if (probe < value) lo = mid + 1;
    else hi = mid;
  }
  return false;
}

const invalid = (issues: ValidationIssue[]): Result<never> =>
  err({
    code: 'VALIDATION_FAILED',
    message: `Invalid node draft: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    issues,
  });
