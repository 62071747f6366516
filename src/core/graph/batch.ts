import { err } from '../errors.js';
import { nodeId } from '../identity.js';
import type { JsonValue } from '../json.js';
import { type Failure, type PreparedDraft, type Recorded, recordedFailure } from './draft.js';
import { saltPayload } from './salt.js';
import { isSemanticResourceKey } from './semantic.js';
import { advanceFrontier, isSortedUnique, sameIds, sortUnique } from './sorted-ids.js';
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
import type { CausalNode } from './types.js';

/**
 * The drafts of one call, staged on top of the base value without touching the shared store, so
 * a failing draft leaves nothing behind. `commit` pushes them in one go.
 */
/** A list no frontier is: the frontier changed since its list was made. */
const STALE: readonly string[] = Object.freeze([]);

export class Batch {
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
  /** The frontier as of the last staged node: the base's until a node advances it. */
  private frontierList: readonly string[];
  /**
   * The frontier once a node of this batch advanced it, in the same order (heads as they came,
   * a new head last): one delete per parent and one add per node, where building the list again
   * for each node cost O(frontier) — O(nodes · frontier) for a wide import or a replay of one.
   */
  private frontierSet: Set<string> | undefined;
  /** Per draft: its node (new or existing) … */
  readonly nodes: CausalNode[];
  /** … and whether it was created. */
  readonly created: boolean[];

  /** `capacity`: the number of drafts, the most nodes this batch can stage. */
  constructor(
    private readonly base: GraphState,
    capacity: number,
  ) {
    this.frontierList = base.frontier;
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

  /** The frontier now, as a list (made again only after it changed). */
  private frontier(): readonly string[] {
    if (this.frontierList === STALE) this.frontierList = [...this.frontierSet!];
    return this.frontierList;
  }

  /** The frontier without `parents`, plus `id` (new, so not in it) last. */
  private advanceFrontier(parents: readonly string[], id: string): void {
    if (this.frontierSet === undefined) {
      // The first advance of a batch of one node: the list, made once, is the cheaper way.
      if (this.staged.length === 1) {
        this.frontierList = advanceFrontier(this.frontierList, parents as string[], id);
        return;
      }
      this.frontierSet = new Set(this.frontierList);
    }
    for (const parent of parents) this.frontierSet.delete(parent);
    this.frontierSet.add(id);
    this.frontierList = STALE;
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
    const requested = draft.parents ?? this.frontier();
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
    let payload = draft.payload;
    const { salt } = this.base;
    if (salt !== undefined && knownId === undefined) {
      const salted = saltPayload(
        salt,
        { kind: draft.kind, parents, payload, resourceKey },
        index,
        this.base.count + this.size + 1,
      );
      if (!salted.ok) return salted;
      payload = salted.value;
    }
    const id = knownId ?? nodeId({ kind: draft.kind, parents, payload, resourceKey });
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
        ? { id, kind: draft.kind, parents, payload, createdAt, sequence }
        : {
            id,
            kind: draft.kind,
            parents,
            payload,
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
      this.advanceFrontier(parents, id);
    }
    this.nodes[index] = node;
    this.created[index] = true;
    return undefined;
  }

  commit(): GraphState {
    const { base, staged, size } = this;
    if (size === 0) return base;
    if (base.store.nodes.length !== base.count && this.repeatsStore()) {
      return makeGraph(base.config, base.store, base.count + size, this.frontier());
    }
    const store =
      base.store.nodes.length === base.count ? base.store : cloneStore(base.store, base.count);
    for (let i = 0; i < size; i++) {
      pushNode(store, staged[i]!, this.stagedParentSeqs[i]);
    }
    return makeGraph(base.config, store, base.count + size, this.frontier());
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

/** From this many staged nodes on, staged ids are looked up in a map instead of scanned. */
const INDEXED_BATCH = 16;
