import { publicThreadId } from '../engine/index.js';
import { createCache, createInvalidations, type Invalidations } from '../store/cache.js';
import type { EventHub, LogItem } from './types.js';

/** Threads whose history start a hub remembers (oldest forgotten first). */
const MAX_HISTORY_STARTS = 10_000;

/**
 * Where the thread of `item` has its own history start: a fork's log begins with the entries it
 * copied from its source (indices below its `upToIndex`), 0 for any other thread.
 */
export type HistoryStart = (item: LogItem) => Promise<number>;

/**
 * Remembered history starts over a hub's reads. Fixed when a thread is created (a fork is
 * written in one transaction), so each thread's is looked up once.
 */
export function createHistoryStarts(
  hub: Pick<EventHub, 'read' | 'latestState'>,
  invalidations: Invalidations = createInvalidations(),
  capacity = MAX_HISTORY_STARTS,
): HistoryStart {
  // Under the thread's deletion epoch, taken before reading: a thread made again under a
  // deleted one's id (a fork where there was none) never gets the deleted one's start.
  const known = createCache<number>({ maxEntries: capacity });
  return async function historyStart(item) {
    const key = invalidations.keyOf(item.threadId);
    const cached = known.get(key);
    if (cached !== undefined) return cached;
    const first = item.index === 0 ? item.entry : (await hub.read(item.threadId, 0, 1))[0]?.entry;
    if (first === undefined) return 0;
    const event = first.event as { type: string; threadId?: string };
    // The first entry names the thread it created (by id, not storage key): another thread's name
    // means a log copied from elsewhere (a fork, or an import under a new id), and only the whole
    // log says whether it is a fork and where its copy ends.
    const start =
      event.threadId === publicThreadId(item.threadId)
        ? 0
        : ((await hub.latestState(item.threadId)).config?.forkedFrom?.upToIndex ?? 0);
    known.set(key, start);
    return start;
  };
}
