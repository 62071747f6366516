/**
 * Shared history. A fork does not copy the entries `[0, upTo)` of its source, nor their node,
 * edge and snapshot rows: its thread row names the thread holding them (`base_thread_id`, up to
 * `base_log_length` entries and `base_node_count` nodes), and every read of those tables goes
 * through the thread's lineage — the stretches of its history in order, each with the thread
 * whose rows hold it. A fork of a fork has three stretches, and so on. Rows are immutable below
 * the bounds (an entry, a node, an edge or a snapshot is never rewritten, but for a redaction,
 * which rewrites a payload for every thread reading it: see redaction.ts), so the source may keep
 * growing: its later rows lie above the bounds and no stretch of the fork reaches them.
 */
import { performance } from 'node:perf_hooks';
import { createCache, createInvalidations } from '../cache.js';
import type { WeftPrisma } from '../prisma/index.js';
import { thread } from '../tables/index.js';
import { selectRows } from './select.js';

/** Larger than any log index or node sequence. */
const END = 2_147_483_647;

/** One stretch of a thread's history and the thread whose rows hold it. */
export interface Segment {
  /** The thread whose rows hold the stretch. */
  threadId: string;
  /** Log indexes `[fromIndex, toIndex)`. */
  fromIndex: number;
  toIndex: number;
  /** Node sequences `(fromSeq, toSeq]`. */
  fromSeq: number;
  toSeq: number;
}

/** A thread's stretches, oldest first; the last is the thread's own rows (none: deleted). */
export type Lineage = readonly Segment[];

export const ownLineage = (threadId: string): Lineage => [
  { threadId, fromIndex: 0, toIndex: END, fromSeq: 0, toSeq: END },
];

/** The lineage of a thread whose rows start at `base`'s bounds over `base`'s lineage. */
export function extendLineage(
  threadId: string,
  base: Lineage,
  logLength: number,
  nodeCount: number,
): Lineage {
  const shared = base
    .map((s) => ({
      ...s,
      toIndex: Math.min(s.toIndex, logLength),
      toSeq: Math.min(s.toSeq, nodeCount),
    }))
    .filter((s) => s.fromIndex < s.toIndex);
  return [
    ...shared,
    { threadId, fromIndex: logLength, toIndex: END, fromSeq: nodeCount, toSeq: END },
  ];
}

/** True when every row of the thread is its own (no shared history). */
export const isOwn = (lineage: Lineage): boolean => lineage.length === 1;

/** The stretch holding node `sequence` (the last one for a sequence past every bound). */
export function segmentOfSequence(lineage: Lineage, sequence: number): Segment {
  for (const s of lineage) if (sequence > s.fromSeq && sequence <= s.toSeq) return s;
  return lineage[lineage.length - 1]!;
}

/** The stretches meeting log indexes `[from, to)`, clipped to it. */
export function indexSpans(lineage: Lineage, from: number, to: number): Segment[] {
  return lineage
    .map((s) => ({
      ...s,
      fromIndex: Math.max(s.fromIndex, from),
      toIndex: Math.min(s.toIndex, to),
    }))
    .filter((s) => s.fromIndex < s.toIndex);
}

/** The stretches holding nodes, oldest first. */
export const nodeSpans = (lineage: Lineage): Segment[] =>
  lineage.filter((s) => s.fromSeq < s.toSeq);

export interface Lineages {
  /** The lineage of a thread (its own rows only for an unknown thread). */
  of(threadId: string): Promise<Lineage>;
  /** Forgets what is known of a thread (its row was deleted). */
  forget(threadId: string): void;
}

/**
 * Lineages cached for a few seconds: the base columns of a row never change but to shrink to
 * what a deleted thread's forks still read (removal.ts), which no reader goes past; the bound on
 * age covers an id deleted and created again by another process.
 */
const MAX_CACHED = 10_000;
const MAX_AGE_MS = 5_000;

export function createLineages(weft: WeftPrisma): Lineages {
  // Under the thread's deletion epoch, taken before its row is read: a read racing the thread's
  // deletion (forget) stores what it read where no later lookup goes.
  const cache = createCache<{ lineage: Lineage; deleted: boolean; at: number }>({
    maxEntries: MAX_CACHED,
  });
  const invalidations = createInvalidations();
  const T = thread.c;

  /** The lineage as the thread's forks follow it (a deleted thread's too). */
  async function resolve(
    threadId: string,
    depth: number,
  ): Promise<{ lineage: Lineage; deleted: boolean; unknown?: true }> {
    const key = invalidations.keyOf(threadId);
    const cached = cache.get(key);
    if (cached !== undefined && performance.now() - cached.at < MAX_AGE_MS) return cached;
    const [row] = await selectRows(weft, thread, `${T.id} = ?`, [threadId], '', [
      'baseThreadId',
      'baseLogLength',
      'baseNodeCount',
      'deletedAt',
    ]);
    // An unknown thread is not remembered: it may yet be created as a fork.
    if (row === undefined) return { lineage: ownLineage(threadId), deleted: false, unknown: true };
    let lineage = ownLineage(threadId);
    if (row.baseThreadId !== null && row.baseThreadId !== threadId && depth < 10_000) {
      const base = await resolve(row.baseThreadId, depth + 1);
      lineage = extendLineage(
        threadId,
        base.lineage,
        row.baseLogLength ?? 0,
        row.baseNodeCount ?? 0,
      );
    }
    const entry = { lineage, deleted: row.deletedAt !== null, at: performance.now() };
    cache.set(key, entry);
    return entry;
  }

  return {
    // A deleted thread reads as empty: its kept rows are its forks' to read. So does a thread
    // not there when its row was read: rows read after that may belong to a fork committed in
    // between, whose own rows alone (without its base's) are no state it ever had.
    of: async (threadId) => {
      const found = await resolve(threadId, 0);
      return found.deleted || found.unknown === true ? [] : found.lineage;
    },
    forget: (threadId) => {
      cache.delete(invalidations.keyOf(threadId));
      invalidations.deleted(threadId);
    },
  };
}
