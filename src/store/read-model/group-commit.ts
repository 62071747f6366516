/**
 * Group commit: one writer per database that drains everything queued into one transaction
 * (one fsync with SQLite's synchronous=FULL), in submission order, and gives each submitter its
 * own outcome. What a batch does inside its transaction — a SAVEPOINT per item, so
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
  /**
   * Most batches handed to `run` at once (default 1: one at a time). With 2, the next batch
   * forms and is handed on while the previous one commits — for a `run` that itself runs its
   * transactions one after another, in the order it got them (the SQLite writer thread), so
   * that the event loop never idles waiting for a commit while commands are queued.
   */
  inFlight?: number;
}

interface Pending<I, R> {
  item: I;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/**
 * A writer that hands batches to `run`, at most `inFlight` at a time. With one at a time, the
 * first submission schedules a batch with `setImmediate`, so commands that reach their commit in
 * the same turn of the event loop share it. With more, a submission that finds none out goes at
 * once, alone, and commits while the commands behind it are still being planned. Whatever is
 * submitted while batches are out forms the next ones, shared among the free slots. A batch whose
 * `run` throws rejects every item in it with that error (`run` decides whether to retry first).
 */
export function createGroupWriter<I, R>(
  run: (batch: readonly I[]) => Promise<Settled<R>[]>,
  options: GroupWriterOptions,
): GroupWriter<I, R> {
  const maxBatch = Math.max(1, Math.floor(options.maxBatch));
  const inFlight = Math.max(1, Math.floor(options.inFlight ?? 1));
  const queue: Pending<I, R>[] = [];
  const stats: WriterStats = { items: 0, batches: 0, largestBatch: 0 };
  let running = 0;
  let scheduled = false;
  let idlers: Array<() => void> = [];

  async function runBatch(batch: Pending<I, R>[]): Promise<void> {
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

  function pump(): void {
    while (running < inFlight && queue.length > 0) {
      // What is queued is shared among the free slots: the first part can commit (and its
      // commands move on) while the next ones still run.
      const batch = queue.splice(
        0,
        Math.min(maxBatch, Math.ceil(queue.length / (inFlight - running))),
      );
      stats.batches++;
      stats.largestBatch = Math.max(stats.largestBatch, batch.length);
      running++;
      void runBatch(batch).finally(() => {
        running--;
        // Submitted while the batches were out: the next batch, at once.
        if (queue.length > 0 && !scheduled) pump();
        wakeIfIdle();
      });
    }
  }

  function wakeIfIdle(): void {
    if (running > 0 || queue.length > 0 || scheduled) return;
    const waiting = idlers;
    idlers = [];
    for (const wake of waiting) wake();
  }

  function schedule(): void {
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      pump();
      wakeIfIdle();
    });
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        // Several batches allowed and none out: this one goes at once, and commits while the
        // commands behind it are still on their way (they form the next batch).
        if (inFlight > 1 && running === 0) pump();
        else if (running < inFlight && !scheduled) schedule();
      });
    },
    stats: () => ({ ...stats }),
    async idle() {
      while (running > 0 || queue.length > 0 || scheduled) {
        await new Promise<void>((wake) => idlers.push(wake));
      }
    },
  };
}
