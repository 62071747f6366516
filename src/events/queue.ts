import type { HubListener, LogItem } from './types.js';

/**
 * Wakes parked subscribers in groups of `perTurn`, one group per turn of the event loop, in the
 * order asked. A commit on a thread with ten thousand subscribers would otherwise run every one
 * of their deliveries in one unbroken chain of microtasks, and every other client would wait for
 * all of them; in groups, other I/O gets a turn between groups. The default group is large
 * because each turn of a busy server is long: in small groups, a thousand subscribers of one
 * thread would each wait dozens of turns for an event; in groups of 1,024 they are woken in one.
 */
export class Waker {
  private pending: Array<() => void> = [];
  private head = 0;
  private scheduled = false;

  constructor(private readonly perTurn = 1024) {}

  wake(resolve: () => void): void {
    this.pending.push(resolve);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.run);
  }

  private readonly run = (): void => {
    const end = Math.min(this.pending.length, this.head + this.perTurn);
    const batch = this.pending.slice(this.head, end);
    this.head = end;
    if (this.head >= this.pending.length) {
      this.pending = [];
      this.head = 0;
      this.scheduled = false;
    } else {
      setImmediate(this.run);
    }
    for (const resolve of batch) resolve();
  };
}

/** The waker queues share unless given their own. */
const sharedWaker = new Waker();

/**
 * A subscriber's live buffer. Bounded: when a slow consumer lets it fill up, the buffered items
 * are dropped and the queue only notes, per thread, the first index it dropped — the stream
 * re-reads those from the store (the log is the truth), so memory never grows with the lag.
 */
export class LiveQueue implements HubListener {
  private items: LogItem[] = [];
  private head = 0;
  private waiter: (() => void) | undefined;
  /** The signal whose abort wakes the waiter (one listener per signal). */
  private watched: AbortSignal | undefined;
  /** Per thread, the first index dropped since the last `takeDropped()`. */
  private dropped = new Map<string, number>();
  /** More threads dropped than we keep track of: their items are lost to this subscriber. */
  droppedUntracked = 0;
  ended = false;
  /** Threads deleted while listened to. */
  readonly deletedThreads = new Set<string>();

  constructor(
    private readonly capacity: number,
    private readonly maxDroppedThreads = 10_000,
    private readonly waker: Waker = sharedWaker,
  ) {}

  get overflowed(): boolean {
    return this.dropped.size > 0;
  }

  push(item: LogItem): void {
    if (this.dropped.size > 0 || this.size() >= this.capacity) this.drop(item);
    else this.items.push(item);
    // A new item wakes the consumer on a later turn, in turn with the others (see Waker); an
    // end or an abort wakes it at once.
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter !== undefined) this.waker.wake(waiter);
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  deleted(threadId: string): void {
    this.deletedThreads.add(threadId);
    this.wake();
  }

  shift(): LogItem | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** The smallest index buffered or dropped (Infinity when nothing came yet). */
  firstIndex(): number {
    let first = Number.POSITIVE_INFINITY;
    for (let i = this.head; i < this.items.length; i++)
      first = Math.min(first, this.items[i]!.index);
    for (const index of this.dropped.values()) first = Math.min(first, index);
    return first;
  }

  /** Threads with dropped items and the first index dropped; buffering resumes from now on. */
  takeDropped(): Map<string, number> {
    const dropped = this.dropped;
    this.dropped = new Map();
    return dropped;
  }

  /**
   * Resolves when an item arrives, the hub ends, or `signal` aborts. The abort listener is
   * registered once per signal, not once per wait: with a thousand subscribers parked on their
   * queues, every commit would otherwise add and remove a thousand listeners.
   */
  wait(signal: AbortSignal): Promise<void> {
    if (
      this.size() > 0 ||
      this.ended ||
      signal.aborted ||
      this.dropped.size > 0 ||
      this.deletedThreads.size > 0
    ) {
      return Promise.resolve();
    }
    if (this.watched !== signal) {
      this.watched = signal;
      signal.addEventListener('abort', () => this.wake(), { once: true });
    }
    return new Promise<void>((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Items buffered now. */
  size(): number {
    return this.items.length - this.head;
  }

  private drop(item: LogItem): void {
    for (let i = this.head; i < this.items.length; i++) this.note(this.items[i]!);
    this.items = [];
    this.head = 0;
    this.note(item);
  }

  private note(item: LogItem): void {
    const first = this.dropped.get(item.threadId);
    if (first !== undefined) {
      if (item.index < first) this.dropped.set(item.threadId, item.index);
    } else if (this.dropped.size < this.maxDroppedThreads) {
      this.dropped.set(item.threadId, item.index);
    } else {
      this.droppedUntracked++;
    }
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}
