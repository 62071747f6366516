import {
  createEngine,
  DEFAULT_MAX_PAYLOAD_BYTES,
  type Engine,
  type EngineOptions,
} from '../engine/index.js';
import { migrate } from '../store/migrate/index.js';
import { openThreadStore } from '../store/read-model/index.js';
import { createEventHub } from './hub.js';
import type { EventHub, EventHubOptions } from './types.js';

export interface EventedEngine {
  engine: Engine;
  /** The engine's publisher; give it to the app as the context's `events`. */
  hub: EventHub;
  /** Closes the hub (ending every open stream), then the engine. */
  close(): Promise<void>;
}

/**
 * Migrates `databaseUrl`, opens one store, and an engine that publishes every commit to a hub on
 * that store — fanned out through Redis when `redisUrl` is set (resolves once the Redis
 * subscription is confirmed; rejects, having closed everything, when it cannot be). A process
 * embedding Weft (a LangGraph agent's WeftSaver) opens its engine this way to wake the live
 * subscribers of a `weft serve` on the same database and Redis.
 */
export async function openEngineWithEvents(
  databaseUrl: string,
  options: {
    redisUrl?: string | undefined;
    /** The Redis channel of the wake-ups (default `weft:commits`, what `weft serve` uses). */
    redisChannel?: string | undefined;
    engine?: Omit<EngineOptions, 'databaseUrl' | 'store' | 'publisher'>;
    hub?: Omit<EventHubOptions, 'store' | 'redis' | 'machineOptions'>;
  } = {},
): Promise<EventedEngine> {
  await migrate(databaseUrl);
  const store = openThreadStore(databaseUrl, options.engine?.storeOptions);
  const hub = createEventHub({
    ...options.hub,
    store,
    ...(options.redisUrl === undefined
      ? {}
      : {
          redis: {
            url: options.redisUrl,
            ...(options.redisChannel === undefined ? {} : { channel: options.redisChannel }),
          },
        }),
    // Effects re-derived from the store must match the engine's: the same options it applies.
    machineOptions: {
      ...options.engine?.machineOptions,
      importLimits: {
        maxPayloadBytes: options.engine?.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES,
        ...options.engine?.machineOptions?.importLimits,
      },
    },
  });
  try {
    await store.ready(); // a missing or wrong encryption key fails here, at open
    await hub.ready;
  } catch (error) {
    await hub.close();
    await store.close();
    throw error;
  }
  const engine = createEngine({ ...options.engine, store, publisher: hub });
  return {
    engine,
    hub,
    async close() {
      await hub.close();
      await engine.close();
    },
  };
}
