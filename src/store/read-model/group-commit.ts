/**
 * Group commit: one serialised writer per database that drains everything queued into one
 * transaction (one fsync with SQLite's synchronous=FULL), in submission order, and gives each
 * submitter its own outcome. What a batch does inside its transaction — a SAVEPOINT per item, so
 * that a failing item rolls back alone — is the `run` callback's business (thread-store.ts).
 */

/** One item's outcome: a value, or the error its submitter's promise rejects with. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

/** Counters for diagnostics and tests (how much batching happened). */
export interface WriterStats {
  /** Items submitted and settled. */
  items: number;
  /** Batches drained (each normally one transaction; see ThreadStore.writerStats). */
  batches: number;
  /** The largest batch so far. */
  largestBatch: number;
}

export interface GroupWriter<I, R> {
  /** Queues `item`; settles once the transaction holding it has committed (or failed). */
  submit(item: I): Promise<R>;
  stats(): WriterStats;
  /** Resolves when nothing is queued or in flight. */
  idle(): Promise<void>;
}

export interface GroupWriterOptions {
  /** Most items per batch. 1 = one transaction per item (no grouping, still serialised). */
  maxBatch: number;
}

interface Pending<I, R> {
  item: I;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/**
 * A writer that runs one batch at a time. The first submission schedules a drain with
 * `setImmediate`, so commands that reach their commit in the same turn of the event loop share
 * a batch; whatever is submitted while a batch is in flight forms the next one. A batch whose
 * `run` throws rejects every item in it with that error (`run` decides whether to retry first).
 */
export function createGroupWriter<I, R>(
  run: (batch: readonly I[]) => Promise<Settled<R>[]>,
  options: GroupWriterOptions,
): GroupWriter<I, R> {
  const maxBatch = Math.max(1, Math.floor(options.maxBatch));
  const queue: Pending<I, R>[] = [];
  const stats: WriterStats = { items: 0, batches: 0, largestBatch: 0 };
  let draining: Promise<void> | undefined;

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, maxBatch);
      stats.batches++;
      stats.largestBatch = Math.max(stats.largestBatch, batch.length);
      let outcomes: Settled<R>[];
      try {
        outcomes = await run(batch.map((p) => p.item));
      } catch (error) {
        outcomes = batch.map(() => ({ ok: false, error }));
      }
      batch.forEach((pending, i) => {
        stats.items++;
        const outcome = outcomes[i] ?? { ok: false, error: new Error('group commit: no outcome') };
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
    }
  }

  function schedule(): void {
    draining = new Promise<void>((done) => setImmediate(done)).then(drain).finally(() => {
      draining = undefined;
      // Submitted after the loop saw an empty queue but before this ran: drain again.
      if (queue.length > 0) schedule();
    });
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (draining === undefined) schedule();
      });
    },
    stats: () => ({ ...stats }),
    async idle() {
      while (draining !== undefined) await draining;
    },
  };
}
