/**
 * When the engine writes a snapshot and what it holds: the policy (stateless, so every writer
 * and a rebuild put snapshots at the same points), the row of a state, and the writer that keeps,
 * per thread, the full snapshot its deltas are written against. Reading snapshots back (time
 * travel) is snapshot-restore.ts.
 */
import { sha256Hex } from '../core/hash.js';
import { createThreadMachine, type ThreadState } from '../core/thread/index.js';
import {
  type SnapshotBase,
  serializeThreadSnapshot,
  serializeThreadSnapshotDelta,
} from '../core/thread/snapshot.js';
import { createCache, createInvalidations, type Invalidations } from '../store/cache.js';
import type { SnapshotRow } from '../store/read-model/index.js';
import type { SnapshotPolicy } from './types.js';

/**
 * Default snapshot spacing: a snapshot every 100 entries / 1,000 nodes, so a stateAt replays at
 * most ~100 entries / ~1,000 nodes; every 10th is full, the others hold only the runs changed
 * since the last full one (see src/core/thread/snapshot.ts).
 */
export const DEFAULT_SNAPSHOT_POLICY: Required<SnapshotPolicy> = {
  entries: 100,
  nodes: 1000,
  fullEvery: 10,
};

export type SnapshotKind = 'full' | 'delta';

/**
 * Whether the step from `prev` to `next` crosses a snapshot point of `policy`, and which kind:
 * the log length to a multiple of `entries`, or the node count across a multiple of `nodes`;
 * `full` when that is also a multiple of `fullEvery` times either. Stateless, so every writer
 * (and a rebuild) puts snapshots at the same points.
 */
export function snapshotPointKind(
  policy: SnapshotPolicy | false,
  prev: ThreadState,
  next: ThreadState,
): SnapshotKind | undefined {
  if (policy === false || next.length === 0) return undefined;
  const crosses = (every: number | undefined, scale: number, a: number, b: number) =>
    every !== undefined &&
    every > 0 &&
    Math.floor(a / (every * scale)) < Math.floor(b / (every * scale));
  const at = (scale: number) =>
    crosses(policy.entries, scale, prev.length, next.length) ||
    crosses(policy.nodes, scale, prev.graph.count, next.graph.count);
  const fullEvery = Math.max(1, Math.floor(policy.fullEvery ?? DEFAULT_SNAPSHOT_POLICY.fullEvery));
  if (at(fullEvery)) return 'full';
  return at(1) ? 'delta' : undefined;
}

/** Whether the step from `prev` to `next` crosses a snapshot point of `policy` (either kind). */
export function crossesSnapshotPoint(
  policy: SnapshotPolicy | false,
  prev: ThreadState,
  next: ThreadState,
): boolean {
  return snapshotPointKind(policy, prev, next) !== undefined;
}

/**
 * The snapshot row of `state` (taken after the entry recorded at `recordedAt`): a delta against
 * `base` when `kind` is delta and the state extends that base, else full. Also returns the base
 * for the deltas after it (this snapshot when it is full) — to be kept only once the row is
 * committed.
 */
export function snapshotRow(
  threadId: string,
  state: ThreadState,
  recordedAt: string,
  kind: SnapshotKind = 'full',
  base?: SnapshotBase,
): { row: SnapshotRow; base: SnapshotBase | undefined } {
  const delta =
    kind === 'delta' && base !== undefined ? serializeThreadSnapshotDelta(state, base) : undefined;
  const text = delta ?? serializeThreadSnapshot(state);
  const checksum = sha256Hex(text);
  const row: SnapshotRow = {
    threadId,
    index: state.length,
    stateHash: state.stateHash,
    checksum,
    state: text,
    createdAt: new Date(recordedAt),
  };
  return {
    row,
    base:
      delta !== undefined
        ? base
        : { length: state.length, checksum, runs: state.runs, runOrder: state.runOrder },
  };
}

/** A snapshot row due with a commit; `committed()` once the transaction holding it committed. */
export interface PendingSnapshot {
  row: SnapshotRow;
  committed(): void;
}

/** The snapshots the engine's commits write (see SnapshotPolicy). */
export interface SnapshotWriter {
  readonly policy: SnapshotPolicy | false;
  /**
   * The snapshot due with the entry that takes thread `threadId` from `prev` to `next`, if any:
   * a delta against the last full snapshot this writer committed for the thread, when it has one.
   */
  after(
    threadId: string,
    prev: ThreadState,
    next: ThreadState,
    recordedAt: string,
  ): PendingSnapshot | undefined;
  /**
   * The snapshot due with a new thread's `state` (always full: no base is known for a thread
   * not written yet), unless `written` already holds one at its length.
   */
  ofNewThread(
    threadId: string,
    state: ThreadState,
    recordedAt: string,
    written?: readonly SnapshotRow[],
  ): PendingSnapshot | undefined;
  /** Forgets the thread's base: its snapshots were removed (a redaction). */
  forget(threadId: string): void;
}

/**
 * A snapshot writer for `policy`, remembering the bases of up to `capacity` threads, each under
 * the thread's deletion epoch (`invalidations`): a thread made again under a deleted one's key
 * never gets a delta against the deleted one's snapshot.
 */
export function createSnapshotWriter(
  policy: SnapshotPolicy | false,
  capacity: number,
  invalidations: Invalidations = createInvalidations(),
): SnapshotWriter {
  const bases = createSnapshotBases(capacity, invalidations);
  const initial = createThreadMachine().initial;
  const pending = (
    threadId: string,
    made: { row: SnapshotRow; base: SnapshotBase | undefined },
  ): PendingSnapshot => ({
    row: made.row,
    committed() {
      if (made.base !== undefined) bases.set(threadId, made.base);
    },
  });
  return {
    policy,
    after(threadId, prev, next, recordedAt) {
      const kind = snapshotPointKind(policy, prev, next);
      if (kind === undefined) return undefined;
      return pending(threadId, snapshotRow(threadId, next, recordedAt, kind, bases.get(threadId)));
    },
    ofNewThread(threadId, state, recordedAt, written) {
      if (!crossesSnapshotPoint(policy, initial, state)) return undefined;
      if (written?.some((s) => s.index === state.length)) return undefined;
      return pending(threadId, snapshotRow(threadId, state, recordedAt));
    },
    forget: (threadId) => bases.delete(threadId),
  };
}

/**
 * Per thread, the last full snapshot this engine committed: what its delta snapshots are
 * written against (a thread without one gets a full snapshot). Least recently used evicted.
 */
function createSnapshotBases(capacity: number, invalidations: Invalidations) {
  const bases = createCache<SnapshotBase>({ maxEntries: capacity });
  return {
    get: (threadId: string) => bases.get(invalidations.keyOf(threadId)),
    set(threadId: string, base: SnapshotBase): void {
      const key = invalidations.keyOf(threadId);
      const current = bases.peek(key);
      if (current !== undefined && current.length > base.length) return;
      bases.set(key, base);
    },
    delete: (threadId: string) => bases.delete(invalidations.keyOf(threadId)),
  };
}
