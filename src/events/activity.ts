/**
 * `threadActivity`: one event per committed log entry of any of a tenant's threads, in the
 * order of the tenant's activity sequence (numbers the write transaction takes from a per-tenant
 * counter; see src/store/read-model/sql.ts appendActivity). The feed is read from the store,
 * never from memory: a wake-up (any commit the hub hears of, local or through Redis) or a
 * periodic poll reads the rows numbered after the last one read. Because numbers become visible
 * in order, "after n" never skips an entry and never repeats one — across reconnects, restarts
 * and instances, with or without Redis (the poll bounds how late an entry committed by another
 * instance is seen without it).
 *
 * The subscribers of one tenant share a tail: one reader per tenant per hub reads what is new
 * and keeps the last rows, and every subscriber at the head takes its events from them, so a
 * commit costs one query however many dashboards are open. A subscriber behind the tail's rows
 * (resuming from an old cursor) catches up with its own paged reads, then joins the tail.
 */
import { performance } from 'node:perf_hooks';
import type { ActivityView } from '../reads/index.js';
import type { Delivery, EventHub } from './types.js';

/** Where a tenant's feed is read from: the tenant's scoped read API. */
export interface ActivitySource {
  activity(afterSeq: number, take: number): Promise<ActivityView[]>;
  lastActivity(): Promise<number>;
}

export interface ActivityStreamOptions {
  tenant: string;
  /** Number of the last entry already seen; undefined: start live (after the current last). */
  afterSeq: number | undefined;
  delivery?: Delivery;
}

export interface ActivityFeeds {
  stream(
    source: ActivitySource,
    options: ActivityStreamOptions,
  ): AsyncIterableIterator<ActivityView>;
  /** Tenants with a tail and subscribers in all, for tests and metrics. */
  stats(): { tenants: number; subscribers: number };
}

export interface ActivityFeedOptions {
  /** Rows read per query. Default 256. */
  pageSize?: number;
  /** Rows a tail keeps for its subscribers. Default 4,096. */
  tailSize?: number;
  /** How often (ms) the feeds are read without a wake-up. Default 1,000. */
  pollMs?: number;
}

interface Tail {
  source: ActivitySource;
  /** The last rows read, ascending by number. */
  rows: ActivityView[];
  /** The number of the last entry read; undefined before the first read. */
  head: number | undefined;
  subscribers: Set<() => void>;
  dirty: boolean;
  reading: Promise<void> | undefined;
}

/** The first index of `rows` numbered above `seq`. */
function firstAfter(rows: readonly ActivityView[], seq: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid]!.seq <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Reads what is new for `tail`, `pageSize` rows a query, keeping its last `tailSize` rows; a
 * wake-up during a read makes it read again after.
 */
function refreshTail(tail: Tail, pageSize: number, tailSize: number): Promise<void> {
  tail.dirty = true;
  if (tail.reading !== undefined) return tail.reading;
  const run = async () => {
    try {
      while (tail.dirty) {
        tail.dirty = false;
        await turn();
        if (tail.head === undefined) tail.head = await tail.source.lastActivity();
        for (;;) {
          const rows = await tail.source.activity(tail.head, pageSize);
          if (rows.length === 0) break;
          tail.rows.push(...rows);
          if (tail.rows.length > tailSize) tail.rows.splice(0, tail.rows.length - tailSize);
          tail.head = rows.at(-1)!.seq;
          for (const wake of tail.subscribers) wake();
          if (rows.length < pageSize) break;
          await turn();
        }
      }
    } catch {
      // A failed read is retried by the next wake-up or poll.
    } finally {
      tail.reading = undefined;
      for (const wake of tail.subscribers) wake();
    }
  };
  tail.reading = run();
  return tail.reading;
}

/** The tenant's tail, made (reading from `source`) when it has none. */
function tailOf(tails: Map<string, Tail>, tenant: string, source: ActivitySource): Tail {
  let tail = tails.get(tenant);
  if (tail === undefined) {
    tail = {
      source,
      rows: [],
      head: undefined,
      subscribers: new Set(),
      dirty: false,
      reading: undefined,
    };
    tails.set(tenant, tail);
  }
  return tail;
}

/** The activity feeds of one hub (one per server). */
export function createActivityFeeds(
  hub: EventHub,
  options: ActivityFeedOptions = {},
): ActivityFeeds {
  const pageSize = options.pageSize ?? 256;
  const tailSize = options.tailSize ?? 4096;
  const pollMs = options.pollMs ?? 1000;
  const tails = new Map<string, Tail>();
  let unlisten: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  const pokeAll = () => {
    for (const tail of tails.values()) refresh(tail);
  };

  /** Listening and polling while some tenant has subscribers. */
  function attach(): void {
    if (unlisten !== undefined) return;
    unlisten = hub.listen('*', { push: pokeAll, end: () => detach() });
    timer = setInterval(pokeAll, pollMs);
    timer.unref();
  }
  function detach(): void {
    unlisten?.();
    unlisten = undefined;
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  }

  const refresh = (tail: Tail) => refreshTail(tail, pageSize, tailSize);

  function stream(
    source: ActivitySource,
    { tenant, afterSeq, delivery }: ActivityStreamOptions,
  ): AsyncIterableIterator<ActivityView> {
    const transport = delivery?.transport;
    const own = tailOf(tails, tenant, source);
    let done = false;
    let wake: (() => void) | undefined;
    let signalled = false;
    const signal = () => {
      signalled = true;
      wake?.();
    };
    own.subscribers.add(signal);
    attach();
    let seq = afterSeq;
    let page: ActivityView[] = [];
    let next = 0;

    const finish = () => {
      if (done) return;
      done = true;
      own.subscribers.delete(signal);
      if (own.subscribers.size === 0 && tails.get(tenant) === own) tails.delete(tenant);
      if (tails.size === 0) detach();
      wake?.();
    };
    const signalledOrDone = () =>
      new Promise<void>((resolve) => {
        wake = () => {
          wake = undefined;
          resolve();
        };
        if (signalled || done) wake();
      });

    /** The next page for this subscriber: from the tail when it holds what follows `seq`. */
    async function fill(): Promise<void> {
      for (;;) {
        if (done) return;
        if (own.head === undefined) {
          await refresh(own);
          if (own.head === undefined) {
            // The read failed: wait for the next poll rather than retrying at once.
            signalled = false;
            await signalledOrDone();
          }
          continue;
        }
        if (seq === undefined) seq = own.head;
        const covered = seq >= own.head || (own.rows.length > 0 && own.rows[0]!.seq <= seq + 1);
        if (covered) {
          const from = firstAfter(own.rows, seq);
          if (from < own.rows.length) {
            page = own.rows.slice(from, from + pageSize);
            next = 0;
            if (delivery !== undefined) delivery.itemsAt = performance.now();
            return;
          }
          signalled = false;
          await signalledOrDone();
          continue;
        }
        // Behind the tail: catch up with pages of its own, a turn of the event loop before each.
        await turn();
        page = await source.activity(seq, pageSize);
        next = 0;
        if (delivery !== undefined) delivery.itemsAt = performance.now();
        if (page.length > 0) return;
      }
    }

    return {
      async next() {
        for (;;) {
          if (done) return { done: true, value: undefined };
          if (next < page.length) {
            const item = page[next++]!;
            seq = item.seq;
            return { done: false, value: item };
          }
          while (transport?.congested() === true && !done) await transport.drained();
          await fill();
        }
      },
      async return() {
        finish();
        return { done: true, value: undefined };
      },
      async throw(error) {
        finish();
        throw error;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  return {
    stream,
    stats: () => ({
      tenants: tails.size,
      subscribers: [...tails.values()].reduce((n, t) => n + t.subscribers.size, 0),
    }),
  };
}
