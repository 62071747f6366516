import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { CommittedEvent } from '../engine/index.js';
import { createCache, createInvalidations, type Invalidations } from '../store/cache.js';
import type { ThreadStore } from '../store/read-model/index.js';
import { createActivityFeeds } from './activity.js';
import { createEffectDeriver } from './deriver.js';
import { ACTIVITY_FEEDS, createSubscriptionGroups, type SubscriptionGroups } from './groups.js';
import { createHistoryStarts } from './history.js';
import { createRedisFanout, type Fanout, type WakeUp } from './redis.js';
import { createTurns } from './turns.js';
import type { EventHub, EventHubOptions, HubListener, HubTopic, LogItem } from './types.js';

/**
 * What the hub knows of one thread: the listeners, and `head`, the length up to which it has
 * delivered the log. All input of a thread (local commits, remote wake-ups, repairs) runs through
 * one chain, so listeners see a thread's items in index order, each once.
 */
interface Feed {
  threadId: string;
  head: number | undefined;
  chain: Promise<void>;
  listeners: Set<HubListener>;
}

const DEFAULT_BUFFER_SIZE = 1024;
/** Replay pages: bounded so that one page's events are a short stretch of the event loop. */
const DEFAULT_PAGE_SIZE = 256;
const DEFAULT_POLL_MS = 5_000;
/** Recent page reads kept for other readers of the same range (see read). */
const SHARED_PAGES = 64;
/** Threads followed only for `'*'` listeners that a hub keeps a head for. */
const MAX_IDLE_FEEDS = 4096;

/**
 * The hub's store reads, recent pages shared (see read); `onRead` hears of every read that
 * returned. `forget()` drops the shared pages.
 */
function createSharedPages(store: ThreadStore, onRead: () => void, invalidations: Invalidations) {
  /** Recent page reads by range, least recently used first (see read). */
  const pages = createCache<Promise<LogItem[]>>({ maxEntries: SHARED_PAGES });

  async function readFresh(threadId: string, from: number, to?: number): Promise<LogItem[]> {
    const entries = await store.readEntries(threadId, from, to);
    onRead();
    return entries.map((entry) => ({ threadId, index: entry.index, entry }));
  }

  /**
   * Store reads of a bounded range are shared while recent: subscribers replaying one thread
   * read the same pages at about the same time, and with the same item objects their identical
   * subscriptions execute each event once (shared-execution.ts) instead of once each. Committed
   * entries never change, so a full page stays right; a short one is dropped once read, since
   * the log may have grown past it.
   */
  function read(threadId: string, from: number, to?: number): Promise<LogItem[]> {
    if (to === undefined) return readFresh(threadId, from, to);
    // Under the thread's deletion epoch: a thread made again under a deleted one's id never
    // shares the deleted one's pages.
    const key = `${invalidations.keyOf(threadId)}\u0000${from}\u0000${to}`;
    const shared = pages.get(key);
    if (shared !== undefined) return shared;
    const page = readFresh(threadId, from, to);
    pages.set(key, page);
    page.then(
      (items) => {
        if (items.length < to - from) pages.delete(key);
      },
      () => pages.delete(key),
    );
    return page;
  }

  return { read, forget: () => pages.clear() };
}

/** `items` with their effects, those without derived a run of one thread at a time. */
async function withEffects(
  deriver: ReturnType<typeof createEffectDeriver>,
  items: readonly LogItem[],
): Promise<LogItem[]> {
  const out: LogItem[] = [];
  let i = 0;
  while (i < items.length) {
    const item = items[i]!;
    if (item.effects !== undefined) {
      out.push(item);
      i++;
      continue;
    }
    // A run of consecutive items of one thread without effects: one derivation.
    let j = i + 1;
    while (
      j < items.length &&
      items[j]!.effects === undefined &&
      items[j]!.threadId === item.threadId &&
      items[j]!.index === items[j - 1]!.index + 1
    ) {
      j++;
    }
    const run = items.slice(i, j);
    const effects = await deriver.effectsOf(
      item.threadId,
      run.map((r) => r.entry),
    );
    run.forEach((r, k) => {
      out.push({ ...r, effects: effects[k]! });
    });
    i = j;
  }
  return out;
}

/**
 * The threads the hub follows and their listeners; `everything`: the listeners of every thread.
 * An idle feed (no listener of its own) is kept for `'*'` listeners, up to MAX_IDLE_FEEDS.
 */
function createFeedRegistry() {
  const feeds = new Map<string, Feed>();
  const everything = new Set<HubListener>();

  function feedFor(threadId: string): Feed | undefined {
    const existing = feeds.get(threadId);
    if (existing !== undefined || everything.size === 0) return existing;
    if (feeds.size >= MAX_IDLE_FEEDS) evictIdle();
    const feed: Feed = {
      threadId,
      head: undefined,
      chain: Promise.resolve(),
      listeners: new Set(),
    };
    feeds.set(threadId, feed);
    return feed;
  }

  function evictIdle(): void {
    for (const [threadId, feed] of feeds) {
      if (feeds.size < MAX_IDLE_FEEDS / 2) return;
      if (feed.listeners.size === 0) feeds.delete(threadId);
    }
  }

  function listen(topic: HubTopic, listener: HubListener): () => void {
    let removed = false;
    if (topic === '*') {
      everything.add(listener);
      return () => {
        if (removed) return;
        removed = true;
        everything.delete(listener);
        if (everything.size === 0) {
          for (const [id, feed] of feeds) if (feed.listeners.size === 0) feeds.delete(id);
        }
      };
    }
    let feed = feeds.get(topic);
    if (feed === undefined) {
      feed = { threadId: topic, head: undefined, chain: Promise.resolve(), listeners: new Set() };
      feeds.set(topic, feed);
    }
    const joined = feed;
    joined.listeners.add(listener);
    return () => {
      if (removed) return;
      removed = true;
      joined.listeners.delete(listener);
      if (joined.listeners.size === 0 && everything.size === 0 && feeds.get(topic) === joined) {
        feeds.delete(topic);
      }
    };
  }

  function stats(): { threads: number; listeners: number } {
    let listeners = everything.size;
    for (const feed of feeds.values()) listeners += feed.listeners.size;
    return { threads: feeds.size, listeners };
  }

  return { feeds, everything, feedFor, listen, stats };
}

const rewrites = (entries: readonly { event: { type: string } }[]) =>
  entries.some((entry) => entry.event.type === 'nodes_redacted');

/**
 * Delivery to the listeners of a feed: its input queued on the feed's chain, items handed over
 * in index order from the feed's head, gaps read from the store.
 */
function createDelivery(context: {
  registry: ReturnType<typeof createFeedRegistry>;
  read: (threadId: string, from: number, to?: number) => Promise<LogItem[]>;
  pageSize: number;
  onError: (error: unknown) => void;
  forget: (threadId: string) => void;
  touched: () => void;
  invalidations: Invalidations;
}) {
  const { registry, read, pageSize, onError, forget, touched, invalidations } = context;
  const { everything, feedFor } = registry;

  function enqueue(feed: Feed, task: () => Promise<void> | void): void {
    feed.chain = feed.chain.then(task).catch(onError);
  }

  /** Hands items (contiguous, ascending) to the listeners, skipping what was delivered. */
  function deliver(feed: Feed, items: readonly LogItem[]): void {
    for (const item of items) {
      if (feed.head !== undefined && item.index < feed.head) continue;
      if (rewrites([item.entry])) forget(item.threadId);
      feed.head = item.index + 1;
      touched();
      for (const listener of feed.listeners) listener.push(item);
      for (const listener of everything) listener.push(item);
    }
  }

  /** Delivers entries `[from, to)` of the feed's thread: the gap before a commit, or a wake-up. */
  async function catchUp(feed: Feed, to: number): Promise<void> {
    while (feed.head !== undefined && feed.head < to) {
      const page = await read(feed.threadId, feed.head, Math.min(to, feed.head + pageSize));
      if (page.length === 0) return;
      deliver(feed, page);
    }
  }

  /**
   * Tells the thread's listeners it was deleted, after what was delivered before; nothing cached
   * of it is read again (its key in the hub's caches moves on).
   */
  function deleted(threadId: string): void {
    invalidations.deleted(threadId);
    const feed = feedFor(threadId);
    if (feed === undefined) return;
    enqueue(feed, async () => {
      for (const listener of feed.listeners) listener.deleted?.(threadId);
    });
  }

  return { enqueue, deliver, catchUp, deleted };
}

/**
 * The event hub (the engine's Publisher). In-process by default: a commit reaches the listeners
 * of this process. With `redis`, every commit also sends a wake-up `{threadId, first, logLength}`
 * to the other instances, whose hubs read the new entries from the shared store once and deliver
 * them to their own listeners. A lost wake-up is repaired by the next one (the hub reads from its
 * head), after a reconnect, and by a periodic check of the threads that have listeners.
 */
export function createEventHub(options: EventHubOptions): EventHub {
  const groups = createSubscriptionGroups({
    bufferSize: options.bufferSize ?? DEFAULT_BUFFER_SIZE,
    ...(options.subscriptionCaps === undefined ? {} : { caps: options.subscriptionCaps }),
  });
  const hub = createHub(options, groups);
  // The tenants' activity tails, listening to the whole hub (not to one tenant's view of it).
  groups.shared(ACTIVITY_FEEDS, () => createActivityFeeds(hub));
  return hub;
}

function createHub(options: EventHubOptions, groups: SubscriptionGroups): EventHub {
  const { store } = options;
  const origin = randomUUID();
  const bufferSize = options.bufferSize ?? DEFAULT_BUFFER_SIZE;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const onError = options.onError ?? ((error: unknown) => console.error('weft events: ', error));
  // A deletion heard of (here or by wake-up) moves the thread's key on in every cache below.
  const invalidations = createInvalidations();
  const deriver = createEffectDeriver(store, options.machineOptions, pageSize, invalidations);
  /** When an item last reached a listener or a store read returned (performance.now()). */
  let lastItemAt = performance.now();
  const touched = () => {
    lastItemAt = performance.now();
  };
  const registry = createFeedRegistry();
  const { feeds, everything, feedFor } = registry;
  const { read, forget: forgetPages } = createSharedPages(store, touched, invalidations);
  const reads = { read, latestState: deriver.latestState };
  const historyStart = createHistoryStarts(reads, invalidations);
  const { enqueue, deliver, catchUp, deleted } = createDelivery({
    registry,
    read,
    pageSize,
    onError,
    forget,
    touched,
    invalidations,
  });
  let closed = false;

  const fanout: Fanout | undefined =
    options.redis === undefined ? undefined : createRedisFanout(options.redis, onWake, onError);
  const ready = fanout?.ready ?? Promise.resolve();
  fanout?.onResync(() => resyncAll());
  const pollMs = options.redis?.pollIntervalMs ?? DEFAULT_POLL_MS;
  const poll =
    fanout !== undefined && pollMs > 0 ? setInterval(() => resyncAll(), pollMs) : undefined;
  poll?.unref();

  /**
   * Forgets what is cached of entries a redaction of `threadId` rewrote: "committed entries never
   * change" no longer holds for them. A redaction rewrites the rows of every thread sharing the
   * nodes, so every shared page goes, not only this thread's: pages are few and cheap to read
   * again, and no list of the threads sharing a history is needed to get it right.
   */
  function forget(threadId: string): void {
    forgetPages();
    deriver.forget(threadId);
  }

  function onWake(wake: WakeUp): void {
    if (wake.origin === origin || closed) return;
    if (wake.rewritten === true) forget(wake.threadId);
    if (wake.deleted === true) {
      deleted(wake.threadId);
      return;
    }
    const feed = feedFor(wake.threadId);
    if (feed === undefined) return;
    enqueue(feed, async () => {
      feed.head ??= wake.first;
      await catchUp(feed, wake.logLength);
    });
  }

  /** Checks each followed thread against the store; a difference was a lost wake-up. */
  function resyncAll(): void {
    for (const feed of feeds.values()) {
      if (feed.listeners.size === 0) continue;
      enqueue(feed, async () => {
        const length = (await store.getLogLength(feed.threadId)) ?? 0;
        // Unknown head: deliver the last entry; listeners repair anything before it themselves.
        feed.head ??= Math.max(0, length - 1);
        await catchUp(feed, length);
      });
    }
  }

  return {
    ready,
    store,
    bufferSize,
    groups,
    pageSize,
    nextTurn: createTurns(),
    get lastItemAt() {
      return lastItemAt;
    },
    listen: registry.listen,

    publish(event: CommittedEvent): void {
      if (event.deleted === true && !closed) {
        deleted(event.threadId);
        fanout?.send({ threadId: event.threadId, first: 0, logLength: 0, origin, deleted: true });
        return;
      }
      const first = event.entries[0];
      if (first === undefined || closed) return;
      const { threadId } = event;
      const rewritten = rewrites(event.entries);
      if (rewritten) forget(threadId);
      const feed = feedFor(threadId);
      if (feed !== undefined) {
        // A fork's commit carries many entries and the effects of none of them: derived on demand.
        const single = event.entries.length === 1;
        const items: LogItem[] = event.entries.map((entry) => ({
          threadId,
          index: entry.index,
          entry,
          ...(single ? { effects: event.effects } : {}),
        }));
        enqueue(feed, async () => {
          feed.head ??= first.index;
          await catchUp(feed, first.index);
          deliver(feed, items);
        });
      }
      fanout?.send({
        threadId,
        first: first.index,
        logLength: event.logLength,
        origin,
        ...(rewritten ? { rewritten: true as const } : {}),
      });
    },

    read,
    withEffects: (items) => withEffects(deriver, items),
    latestState: (threadId) => deriver.latestState(threadId),

    historyStart,
    stats: registry.stats,

    async close() {
      if (closed) return;
      closed = true;
      if (poll !== undefined) clearInterval(poll);
      const all = [...everything, ...[...feeds.values()].flatMap((f) => [...f.listeners])];
      everything.clear();
      feeds.clear();
      for (const listener of all) listener.end?.();
      await fanout?.close();
    },
  };
}
