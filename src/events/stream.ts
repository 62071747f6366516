import { performance } from 'node:perf_hooks';
import { LiveQueue } from './queue.js';
import type { Delivery, EventHub, LogItem } from './types.js';

/** Where a stream starts: after a log index of one thread, at its end (`'live'`), or everywhere. */
export type StreamSource =
  | { threadId: string; afterIndex: number | 'live' }
  | {
      all: true;
      /** Which threads this subscriber may see (tenant scoping); asked once per thread. */
      allowThread?: (threadId: string) => boolean | Promise<boolean>;
    };

export interface LogStreamOptions {
  source: StreamSource;
  /** Attach each item's effects (node, run and approval events need them). */
  effects?: boolean;
  /** Ends the stream (the iterator returns) when aborted. */
  signal?: AbortSignal;
  /** The subscriber's connection (back-pressure) and the stamps of what it delivers. */
  delivery?: Delivery;
}

/**
 * A gap-free, resumable stream of committed log entries, as an async iterator.
 *
 * The algorithm: attach to the hub's live items first (buffered), replay the store
 * after the cursor, then drain the buffer, dropping indices already sent. Whenever a live item
 * is ahead of the cursor (a lost wake-up) or the buffer overflowed (a slow consumer), the missing
 * entries are re-read from the store. Per thread, items come in index order, each exactly once.
 * For `all`, there is no cursor: each thread starts at the first item seen after attaching.
 *
 * Reads from the store (replay, repair) go one page (`replayPage(hub)`) at a time: before each page
 * the stream yields a turn of the event loop and waits while its connection is congested, and
 * within a page it waits whenever the connection becomes congested. So a replay of any length
 * holds the event loop for one page at most, and buffers no more than its connection takes.
 */
export function streamLog(
  hub: EventHub,
  options: LogStreamOptions,
): AsyncIterableIterator<LogItem> {
  const internal = new AbortController();
  const signal =
    options.signal === undefined
      ? internal.signal
      : AbortSignal.any([options.signal, internal.signal]);
  // Attach now, not on the first pull: "live" means committed after the stream was opened.
  const queue = new LiveQueue(hub.bufferSize);
  const source = options.source;
  const detach = hub.listen('all' in source ? '*' : source.threadId, queue);
  signal.addEventListener('abort', detach, { once: true });
  const generator =
    'all' in source
      ? everyThread(hub, queue, source, options.effects === true, signal, pacer(hub, options))
      : oneThread(hub, queue, source, options.effects === true, signal, pacer(hub, options));
  const finish = async <T>(result: Promise<T>): Promise<T> => {
    try {
      return await result;
    } finally {
      detach();
    }
  };
  const finishWhenDone = async (
    step: Promise<IteratorResult<LogItem, void>>,
  ): Promise<IteratorResult<LogItem, void>> => {
    try {
      const result = await step;
      if (result.done === true) detach();
      return result;
    } catch (error) {
      detach();
      throw error;
    }
  };
  return {
    next: () => finishWhenDone(generator.next()),
    return: (value?: unknown) => {
      // Wakes a generator parked on the buffer, so that return() does not wait for an item.
      internal.abort();
      return finish(generator.return(value as undefined));
    },
    throw: (error?: unknown) => {
      internal.abort();
      return finish(generator.throw(error));
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** A one-thread stream's thread was deleted: the stream ends with this after what was committed. */
export class ThreadDeletedError extends Error {
  readonly code = 'THREAD_DELETED';
  constructor(readonly threadId: string) {
    super(`thread ${threadId} was deleted: the subscription ended`);
  }
}

async function* oneThread(
  hub: EventHub,
  queue: LiveQueue,
  source: { threadId: string; afterIndex: number | 'live' },
  effects: boolean,
  signal: AbortSignal,
  pace: Pacer,
): AsyncGenerator<LogItem, void, undefined> {
  const { threadId } = source;
  await hub.ready;
  try {
    // Live: from the log's end now, or before the first item that arrived since attaching.
    let last =
      source.afterIndex === 'live'
        ? Math.min(((await hub.store.getLogLength(threadId)) ?? 0) - 1, queue.firstIndex() - 1)
        : source.afterIndex;
    // Replay first: everything stored after the cursor.
    let behind = source.afterIndex !== 'live';
    while (!signal.aborted) {
      if (queue.overflowed) {
        queue.takeDropped();
        behind = true;
      }
      if (behind) {
        // Re-read until a short page: whatever commits after that read is in the buffer.
        behind = false;
        for (;;) {
          if (!(await pace.beforePage(signal))) return;
          const size = replayPage(hub);
          const page = await hub.read(threadId, last + 1, last + 1 + size);
          const readAt = performance.now();
          for (const item of effects ? await hub.withEffects(page) : page) {
            if (!(await pace.beforeItem(signal, readAt))) return;
            yield item;
            last = item.index;
          }
          if (page.length < size) break;
        }
        continue;
      }
      const item = queue.shift();
      if (item === undefined) {
        if (queue.deletedThreads.has(threadId)) throw new ThreadDeletedError(threadId);
        if (queue.ended) return;
        await queue.wait(signal);
        continue;
      }
      if (item.index <= last) continue;
      if (item.index > last + 1) {
        // A gap: the entries in between are committed, so the store has them (and this one).
        behind = true;
        continue;
      }
      const [ready] =
        effects && item.effects === undefined ? await hub.withEffects([item]) : [item];
      if (signal.aborted) return;
      pace.live();
      yield ready!;
      last = item.index;
    }
  } finally {
    queue.end();
  }
}

async function* everyThread(
  hub: EventHub,
  queue: LiveQueue,
  source: Extract<StreamSource, { all: true }>,
  effects: boolean,
  signal: AbortSignal,
  pace: Pacer,
): AsyncGenerator<LogItem, void, undefined> {
  await hub.ready;
  // Per thread, the last index sent (least recently used first), and whether it may be seen.
  const cursors = new Map<string, number>();
  const allowed = new Map<string, boolean>();
  const MAX_THREADS = 10_000;

  const isAllowed = async (threadId: string): Promise<boolean> => {
    if (source.allowThread === undefined) return true;
    let verdict = allowed.get(threadId);
    if (verdict === undefined) {
      verdict = await source.allowThread(threadId);
      if (allowed.size >= MAX_THREADS) allowed.delete(allowed.keys().next().value!);
      allowed.set(threadId, verdict);
    }
    return verdict;
  };
  const advance = (threadId: string, index: number) => {
    cursors.delete(threadId);
    if (cursors.size >= MAX_THREADS) cursors.delete(cursors.keys().next().value!);
    cursors.set(threadId, index);
  };

  /** Items of one thread from `from` to the end of its stored log. */
  async function* reread(threadId: string, from: number): AsyncGenerator<LogItem> {
    for (let next = from; ; ) {
      if (!(await pace.beforePage(signal))) return;
      const size = replayPage(hub);
      const page = await hub.read(threadId, next, next + size);
      const readAt = performance.now();
      for (const item of effects ? await hub.withEffects(page) : page) {
        if (!(await pace.beforeItem(signal, readAt))) return;
        yield item;
      }
      if (page.length < size) return;
      next += page.length;
    }
  }

  try {
    while (!signal.aborted) {
      if (queue.overflowed) {
        for (const [threadId, firstDropped] of queue.takeDropped()) {
          if (!(await isAllowed(threadId))) continue;
          const last = cursors.get(threadId);
          const from = last === undefined ? firstDropped : Math.min(last + 1, firstDropped);
          for await (const item of reread(threadId, from)) {
            if (signal.aborted) return;
            if (last !== undefined && item.index <= last) continue;
            yield item;
            advance(threadId, item.index);
          }
        }
        continue;
      }
      const item = queue.shift();
      if (item === undefined) {
        if (queue.ended) return;
        await queue.wait(signal);
        continue;
      }
      const last = cursors.get(item.threadId);
      if (last !== undefined && item.index <= last) continue;
      if (!(await isAllowed(item.threadId))) continue;
      if (last !== undefined && item.index > last + 1) {
        for await (const missed of reread(item.threadId, last + 1)) {
          if (signal.aborted) return;
          yield missed;
          advance(item.threadId, missed.index);
        }
        continue;
      }
      const [ready] =
        effects && item.effects === undefined ? await hub.withEffects([item]) : [item];
      if (signal.aborted) return;
      pace.live();
      yield ready!;
      advance(item.threadId, item.index);
    }
  } finally {
    queue.end();
  }
}

/**
 * Entries per replay read. A page's rows are decoded as they arrive, outside any slice (the
 * Postgres driver parses a result in one callback), so a page is kept small enough that decoding
 * it is a millisecond or so; the extra round trips cost a replay little.
 */
const REPLAY_PAGE = 64;

const replayPage = (hub: EventHub) => Math.min(hub.pageSize, REPLAY_PAGE);

/** How a stream paces its reads from the store and stamps what it hands over. */
interface Pacer {
  /** Before a page: a turn of the event loop, then the drain. False: the stream was ended. */
  beforePage(signal: AbortSignal): Promise<boolean>;
  /** Before an item of a page read at `readAt`: a turn when the slice is used up, the drain when congested. */
  beforeItem(signal: AbortSignal, readAt: number): Promise<boolean>;
  /** Before a live item: no wait (a slow connection is the server's to close), only the stamp. */
  live(): void;
}

/**
 * The longest stretch (ms) a replay runs its events without giving the event loop a turn. Each
 * event is executed and serialised on the way out, which on a loaded machine costs a millisecond
 * or more: a whole page in one stretch would hold every other client for hundreds of ms.
 */
const SLICE_MS = 1;

function pacer(hub: EventHub, options: LogStreamOptions): Pacer {
  const delivery = options.delivery;
  const transport = delivery?.transport;
  let sliceStart = 0;
  const turn = async () => {
    await hub.nextTurn();
    sliceStart = performance.now();
  };
  const drained = async (signal: AbortSignal): Promise<boolean> => {
    while (transport?.congested() === true && !signal.aborted) {
      await untilAborted(transport.drained(), signal);
    }
    return !signal.aborted;
  };
  return {
    async beforePage(signal) {
      // Other clients' requests and other streams' pages get their turn between two pages.
      await turn();
      return drained(signal);
    },
    async beforeItem(signal, readAt) {
      if (performance.now() - sliceStart >= SLICE_MS) await turn();
      if (signal.aborted) return false;
      if (transport?.congested() === true && !(await drained(signal))) return false;
      if (delivery !== undefined) delivery.itemsAt = readAt;
      return true;
    },
    live() {
      // Every live item reached the hub before its last delivery: a check begun after that covers it.
      if (delivery !== undefined) delivery.itemsAt = hub.lastItemAt;
    },
  };
}

/** `promise`, or sooner when `signal` aborts (return() must not wait for a connection to drain). */
function untilAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    promise.then(done, done);
  });
}
