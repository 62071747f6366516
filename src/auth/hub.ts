/**
 * The event hub as one tenant sees it: the every-thread streams (runStatusChanged and
 * approvalRequested without a threadId) carry only the tenant's threads. One-thread streams are
 * authorised when they are created (the thread must be the tenant's), so they pass through.
 */
import { canSee, type ThreadTenants } from '../engine/index.js';
import type { EventHub, HubListener, LogItem } from '../events/types.js';

export function scopeHub(hub: EventHub, tenants: ThreadTenants, tenant: string): EventHub {
  return {
    get ready() {
      return hub.ready;
    },
    store: hub.store,
    bufferSize: hub.bufferSize,
    pageSize: hub.pageSize,
    get lastItemAt() {
      return hub.lastItemAt;
    },
    publish: (event) => hub.publish(event),
    listen(topic, listener) {
      if (topic !== '*') return hub.listen(topic, listener);
      // Items are checked one after another, so they reach the listener in hub order.
      let chain = Promise.resolve();
      const filtered: HubListener = {
        push(item: LogItem) {
          chain = chain.then(async () => {
            const visible = await canSee(tenants, item.threadId, tenant).catch(() => false);
            if (visible) listener.push(item);
          });
        },
        end() {
          chain = chain.then(() => listener.end?.());
        },
      };
      return hub.listen('*', filtered);
    },
    read: (threadId, from, to) => hub.read(threadId, from, to),
    // One queue of turns for every tenant's streams: they share the event loop.
    nextTurn: () => hub.nextTurn(),
    withEffects: (items) => hub.withEffects(items),
    latestState: (threadId) => hub.latestState(threadId),
    historyStart: (item) => hub.historyStart(item),
    stats: () => hub.stats(),
    // One set of groups per process: a group's key holds its tenant (see events/grouped.ts).
    groups: hub.groups,
    // The shared hub is closed by its owner, not by one caller's view of it.
    close: async () => undefined,
  };
}
