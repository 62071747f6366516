/**
 * `threadActivity`: one event per committed log entry of any of a tenant's threads, in the
 * order of the tenant's activity sequence (numbers the write transaction takes from a per-tenant
 * counter; see src/store/read-model/sql.ts appendActivity). The feed is read from the store,
 * never from memory: a wake-up (any commit the hub hears of, local or through Redis) or a
 * periodic poll makes the stream read the rows numbered after the last one it delivered, a page
 * at a time. Because numbers become visible in order, "after n" never skips an entry and never
 * repeats one — across reconnects, restarts and instances, with or without Redis (the poll
 * bounds how late an entry committed by another instance is seen without it).
 */
import { performance } from 'node:perf_hooks';
import type { ActivityView } from '../engine/reads.js';
import type { Delivery, EventHub } from './types.js';

/** Where the feed is read from: the scoped read API's two feed queries. */
export interface ActivitySource {
  activity(afterSeq: number, take: number): Promise<ActivityView[]>;
  lastActivity(): Promise<number>;
}

export interface ActivityStreamOptions {
  /** Number of the last entry already seen; undefined: start live (after the current last). */
  afterSeq: number | undefined;
  /** Rows read per query. Default 256. */
  pageSize?: number;
  /** How often (ms) the feed is read without a wake-up. Default 1,000. */
  pollMs?: number;
  delivery?: Delivery;
}

const DEFAULT_PAGE_SIZE = 256;
const DEFAULT_POLL_MS = 1000;

/**
 * The tenant's feed as an async iterator. Pages are read one at a time, with a turn of the event
 * loop between them and none while the subscriber's connection is congested, so a long catch-up
 * holds at most a page in memory and never keeps other clients waiting.
 */
export function activityStream(
  hub: EventHub,
  source: ActivitySource,
  options: ActivityStreamOptions,
): AsyncIterableIterator<ActivityView> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const transport = options.delivery?.transport;
  let done = false;
  let dirty = true;
  let wake: (() => void) | undefined;
  const poke = () => {
    dirty = true;
    wake?.();
  };
  // Listening before the first read: a commit between the two is a wake-up, not a loss.
  const unlisten = hub.listen('*', { push: poke, end: () => finish() });
  const timer = setInterval(poke, pollMs);
  timer.unref();
  let seq: number | undefined = options.afterSeq;
  let page: ActivityView[] = [];
  let next = 0;

  function finish(): void {
    if (done) return;
    done = true;
    unlisten();
    clearInterval(timer);
    wake?.();
  }

  const idle = () =>
    new Promise<void>((resolve) => {
      wake = () => {
        wake = undefined;
        resolve();
      };
      if (dirty || done) wake();
    });

  async function pull(): Promise<IteratorResult<ActivityView>> {
    for (;;) {
      if (done) return { done: true, value: undefined };
      if (next < page.length) {
        const item = page[next++]!;
        seq = item.seq;
        return { done: false, value: item };
      }
      while (transport?.congested() === true && !done) await transport.drained();
      if (seq === undefined) seq = await source.lastActivity();
      if (!dirty) await idle();
      if (done) continue;
      dirty = false;
      // A turn of the event loop before each read: other clients' work goes first.
      await new Promise((resolve) => setImmediate(resolve));
      const rows = await source.activity(seq, pageSize);
      if (options.delivery !== undefined) options.delivery.itemsAt = performance.now();
      // A full page may have more behind it: read on without waiting for a wake-up.
      if (rows.length === pageSize) dirty = true;
      page = rows;
      next = 0;
    }
  }

  return {
    next: pull,
    return: async () => {
      finish();
      return { done: true, value: undefined };
    },
    throw: async (error) => {
      finish();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
