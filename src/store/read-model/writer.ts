/**
 * The write side of a thread store: the one path into the database for its commits. Each
 * transaction's statements are recorded first (write-script.ts) by one script, `writeItems`, for
 * one commit or a group of them, and then run whole by a ScriptRunner: the SQLite writer thread
 * (sqlite-writer.ts) or a Prisma client's interactive transactions (Postgres).
 */
import { runSteps, type Steps } from '../../core/graph/index.js';
import { isUniqueViolation } from '../prisma/errors.js';
import type {
  IdempotencyRow,
  NodeTextRow,
  Provider,
  StoredEntryRow,
  ThreadKeyRow,
} from '../tables/index.js';
import { createGroupWriter, type Settled, type WriterStats } from './group-commit.js';
import { recordRedaction, type StoredRedaction } from './redaction-statements.js';
import { recordRemoval, type ThreadRemoval } from './removal.js';
import { recordExpiry } from './retention.js';
import type { ReadModelChanges } from './rows.js';
import type { PlainTwins } from './sealed-rows.js';
import {
  appendActivity,
  deleteHeads,
  deleteSpend,
  ensureThreads,
  insertEntries,
  insertIdempotencyRecords,
  insertNodeParents,
  insertNodes,
  insertNodeTexts,
  insertThreads,
  setLogLength,
  setNodeFlag,
  updateThreads,
  upsertApprovals,
  upsertResourceHeads,
  upsertRunSpend,
  upsertRuns,
  upsertSnapshots,
} from './sql.js';
import { insertThreadKeys } from './thread-keys.js';
import { type Pause, SLICE_ROWS } from './time-slices.js';
import {
  type GuardReason,
  type RecordedStatement,
  recordScript,
  ScriptRecorder,
  type ScriptRunner,
  StatementFailure,
  StatementTexts,
} from './write-script.js';

/** One commit as the writer sees it: its rows as stored (packed, sealed). */
export interface WriteItem {
  changes: ReadModelChanges;
  entries: StoredEntryRow[];
  record: IdempotencyRow | undefined;
  /** With a key: head and spend rows that may still hold the plain form of a sealed key. */
  twins?: PlainTwins | undefined;
  /** The search text of the new nodes (plain), when the store keeps the search index. */
  texts?: NodeTextRow[] | undefined;
  /** A thread deleted (removal.ts): `changes` is empty, the record its response. */
  removal?: ThreadRemoval | undefined;
  /** A thread's expiry set (retention.ts): `changes` is empty, the record its response. */
  expiry?: { threadId: string; expiresAt: Date | null } | undefined;
  /**
   * Nodes redacted (redaction.ts): the commits of the other threads recording it, written in the
   * same transaction after this one's, then the rewritten rows.
   */
  redaction?: { others: readonly WriteItem[]; rows: StoredRedaction } | undefined;
  /** The new thread's wrapped data key (thread-keys.ts), stored with its first rows. */
  threadKey?: ThreadKeyRow | undefined;
}

/** What became of one commit inside its transaction (the store turns rejections into errors). */
export type WriteOutcome = 'written' | GuardReason;

export interface StoreWriterStats extends WriterStats {
  /** Whether commits are grouped (several commands per transaction). */
  groupCommit: boolean;
  /** Write transactions begun (a failed group retried item by item counts each retry). */
  transactions: number;
  /** Groups written by the fast path: one multi-row statement per table for all their commits. */
  merged: number;
}

export interface Writer {
  submit(item: WriteItem): Promise<WriteOutcome>;
  /**
   * Writes one commit of very many rows (an import) as a transaction of its own, outside the
   * group: its script is recorded and handed to the runner in time slices (`pause`), and only
   * the runner's last step commits it — all or nothing.
   */
  submitInSlices(item: WriteItem, pause: Pause): Promise<WriteOutcome>;
  stats(): StoreWriterStats;
  release(): Promise<void>;
}

export interface WriterOptions {
  provider: Provider;
  /** Commits per transaction; 1 writes each alone. */
  maxBatch: number;
  /** Transactions handed to the runner at once (see ThreadStoreOptions.groupCommit). */
  inFlight: number;
  /**
   * Serialised: commits go through a group writer, batched up to maxBatch per transaction.
   * Otherwise (Postgres without group commit) each commit runs its own transaction at once,
   * concurrently with others.
   */
  queued: boolean;
}

/**
 * Records the commits `items` (of distinct threads) as one script: one multi-row statement per
 * table for all of them. The order is the constraints' order: thread rows before the entries and
 * runs that reference them, the entries (whose primary key decides a race) and the idempotency
 * record (whose key decides a reuse) first, so a lone commit that lost learns it before anything
 * else ran. Those statements are guarded: for a lone commit, their unique violation is its
 * outcome, not an error. The activity feed's numbers are taken last (see appendActivity).
 */
export function writeItems(script: ScriptRecorder, submitted: readonly WriteItem[]): void {
  runSteps(writeItemsSteps(script, submitted, Number.POSITIVE_INFINITY));
}

/**
 * `writeItems` in steps (see `Steps`): the node, search text and parent rows recorded
 * `sliceRows` at a time, with a yield after each slice — for a commit of very many nodes.
 */
function* writeItemsSteps(
  script: ScriptRecorder,
  submitted: readonly WriteItem[],
  sliceRows: number,
): Steps<void> {
  function* sliced<R>(rows: readonly R[], record: (rows: readonly R[]) => void): Steps<void> {
    if (rows.length <= sliceRows) return record(rows);
    for (let at = 0; at < rows.length; at += sliceRows) {
      record(rows.slice(at, at + sliceRows));
      yield;
    }
  }
  const every = submitted.flatMap((i) =>
    i.redaction === undefined ? [i] : [i, ...i.redaction.others],
  );
  const items = every.filter((i) => i.removal === undefined && i.expiry === undefined);
  const removals = every.flatMap((i) => (i.removal === undefined ? [] : [i]));
  const all = items.map((i) => i.changes);
  const engine = all.filter((c) => c.logOnly === undefined);
  const logOnly = all.filter((c) => c.logOnly !== undefined);
  ensureThreads(
    script,
    logOnly.map((c) => c.thread),
  );
  script.guard('conflict', () => {
    insertThreads(
      script,
      engine.filter((c) => c.created).map((c) => c.thread),
    );
    insertEntries(
      script,
      items.flatMap((i) => i.entries),
    );
    insertThreadKeys(
      script,
      items.flatMap((i) => (i.threadKey === undefined ? [] : [i.threadKey])),
    );
  });
  const records = every.flatMap((i) => (i.record === undefined ? [] : [i.record]));
  script.guard('idempotency', () => insertIdempotencyRecords(script, records));
  yield* sliced(
    all.flatMap((c) => c.nodes),
    (rows) => insertNodes(script, rows),
  );
  yield* sliced(
    items.flatMap((i) => i.texts ?? []),
    (rows) => insertNodeTexts(script, rows),
  );
  yield* sliced(
    all.flatMap((c) => c.nodeParents),
    (rows) => insertNodeParents(script, rows),
  );
  for (const field of ['isFrontier', 'isCurrent'] as const) {
    for (const value of [true, false]) {
      const pairs = all.flatMap((c) =>
        c.nodeFlags.filter((f) => f[field] === value).map((f) => [c.threadId, f.nodeId] as const),
      );
      setNodeFlag(script, field, value, pairs);
    }
  }
  deleteHeads(
    script,
    items.flatMap((i) => i.twins?.heads ?? []),
  );
  deleteSpend(
    script,
    items.flatMap((i) => i.twins?.spend ?? []),
  );
  upsertResourceHeads(
    script,
    all.flatMap((c) => c.resourceHeads),
  );
  upsertRuns(
    script,
    all.flatMap((c) => c.runs),
  );
  upsertRunSpend(
    script,
    all.flatMap((c) => c.runSpend),
  );
  upsertApprovals(
    script,
    all.flatMap((c) => c.approvals),
  );
  upsertSnapshots(
    script,
    all.flatMap((c) => c.snapshots ?? []),
  );
  updateThreads(
    script,
    engine.filter((c) => !c.created).map((c) => c.thread),
  );
  for (const c of logOnly) setLogLength(script, c.thread);
  for (const item of every) if (item.expiry !== undefined) recordExpiry(script, item.expiry);
  for (const item of removals) recordRemoval(script, item.removal!);
  for (const item of submitted) if (item.redaction) recordRedaction(script, item.redaction.rows);
  for (const item of items) {
    appendActivity(
      script,
      item.changes.threadId,
      item.entries.map((e) => e.index),
    );
  }
}

/** The writer on `runner`. */
export function createWriter(runner: ScriptRunner, options: WriterOptions): Writer {
  const { provider, maxBatch } = options;
  let transactions = 0;
  let merged = 0;
  const texts = new StatementTexts(provider);
  const scriptOf = (items: readonly WriteItem[]) =>
    recordScript(texts, (script) => writeItems(script, items));

  /** A failed statement: its guard's reason for a unique violation, else the error. */
  const settle = (
    script: readonly RecordedStatement[],
    statement: number,
    error: unknown,
  ): Settled<WriteOutcome> => {
    const reason = script[statement]?.reason;
    return reason !== undefined && isUniqueViolation(error)
      ? { ok: true, value: reason }
      : { ok: false, error };
  };

  /**
   * Writes `items`. A lone item, or a group of distinct threads, runs as one transaction of one
   * script. When a group's fails (a conflict, a constraint) it rolls back whole and the group
   * runs again with each item in its own SAVEPOINT: a unique violation (or any other error)
   * rolls back to it, and the others still land. Outcomes are only returned — and so only
   * acknowledged — after COMMIT.
   */
  const transact = async (items: readonly WriteItem[]): Promise<Settled<WriteOutcome>[]> => {
    transactions++;
    const alone = items.length === 1;
    const threads = items
      .flatMap((i) => [i, ...(i.redaction?.others ?? [])])
      .map((i) => i.changes.threadId);
    if (alone || new Set(threads).size === threads.length) {
      const script = scriptOf(items);
      try {
        await runner.runAll(script);
        if (!alone) merged++;
        return items.map(() => ({ ok: true, value: 'written' }));
      } catch (error) {
        if (!alone) {
          transactions++;
        } else {
          if (!(error instanceof StatementFailure)) throw error;
          const outcome = settle(script, error.statement, error.error);
          if (outcome.ok) return [outcome];
          throw outcome.error;
        }
      }
    }
    const scripts = items.map((item) => scriptOf([item]));
    const outcomes = await runner.runEach(scripts);
    return outcomes.map((o, i) =>
      o.ok ? { ok: true, value: 'written' } : settle(scripts[i]!, o.statement, o.error),
    );
  };

  /** A group whose shared transaction failed as a whole wrote nothing: each item is retried alone. */
  const runBatch = async (items: readonly WriteItem[]): Promise<Settled<WriteOutcome>[]> => {
    try {
      return await transact(items);
    } catch (error) {
      if (items.length === 1) throw error;
      const outcomes: Settled<WriteOutcome>[] = [];
      for (const item of items) {
        try {
          outcomes.push(...(await transact([item])));
        } catch (itemError) {
          outcomes.push({ ok: false, error: itemError });
        }
      }
      return outcomes;
    }
  };

  const large = new Set<Promise<unknown>>();
  const submitInSlices = (item: WriteItem, pause: Pause): Promise<WriteOutcome> => {
    const job = (async (): Promise<WriteOutcome> => {
      const recorder = new ScriptRecorder(texts);
      for (const _ of writeItemsSteps(recorder, [item], SLICE_ROWS)) await pause();
      const script = recorder.statements;
      transactions++;
      try {
        await runner.runAllInSlices(script, pause);
        return 'written';
      } catch (error) {
        if (!(error instanceof StatementFailure)) throw error;
        return unwrap(settle(script, error.statement, error.error));
      }
    })();
    large.add(job);
    void job.then(
      () => large.delete(job),
      () => large.delete(job),
    );
    return job;
  };
  /** Resolves when no commit of submitInSlices is under way. */
  const largeIdle = async () => {
    while (large.size > 0) await Promise.allSettled([...large]);
  };

  const unwrap = (outcome: Settled<WriteOutcome> | undefined): WriteOutcome => {
    if (outcome?.ok) return outcome.value;
    throw outcome === undefined ? new Error('thread store: no write outcome') : outcome.error;
  };

  if (!options.queued) {
    let direct = 0;
    return {
      submit: async (item) => {
        direct++;
        return unwrap((await transact([item]))[0]);
      },
      submitInSlices,
      stats: () => ({
        groupCommit: false,
        transactions,
        merged: 0,
        items: direct,
        batches: direct,
        largestBatch: direct > 0 ? 1 : 0,
      }),
      release: async () => {
        await largeIdle();
        await runner.close();
      },
    };
  }

  const group = createGroupWriter(runBatch, { maxBatch, inFlight: options.inFlight });
  return {
    submit: (item) => group.submit(item),
    submitInSlices,
    stats: () => ({ ...group.stats(), groupCommit: maxBatch > 1, transactions, merged }),
    release: async () => {
      await group.idle();
      await largeIdle();
      await runner.close();
    },
  };
}
