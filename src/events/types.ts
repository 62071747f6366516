import type { CausalNode } from '../core/graph/index.js';
import type { LogEntry } from '../core/log/index.js';
import type {
  NodeMeta,
  ThreadEffect,
  ThreadMachineOptions,
  ThreadState,
} from '../core/thread/index.js';
import type { Publisher } from '../engine/index.js';
import type { ThreadStore } from '../store/read-model/index.js';
import type { GroupCaps, SubscriptionGroups } from './groups.js';

/**
 * One committed log entry as the event streams carry it. `effects` are what applying the entry
 * caused (a pure function of the log); undefined when the item came from the store and
 * no one has derived them yet.
 */
export interface LogItem {
  threadId: string;
  index: number;
  entry: LogEntry;
  effects?: readonly ThreadEffect[];
}

/** A `threadEvents` event: one log entry with its index (the ThreadEvent type). */
export interface ThreadEventPayload {
  threadId: string;
  index: number;
  id: string;
  type: string;
  recordedAt: string;
  entry: LogEntry;
}

/** A `nodeAppended` event: the new node, where it was logged and what the thread knows about it. */
export interface NodeAppendedPayload {
  threadId: string;
  node: CausalNode;
  meta: NodeMeta;
  logIndex: number;
}

/**
 * A `runStatusChanged` event: one status change, as of that change (statuses in the log's
 * lowercase spelling). `(logIndex, ordinal)` is unique per thread and orders its changes.
 */
export interface RunStatusChangePayload {
  threadId: string;
  runId: string;
  from: string;
  to: string;
  /** The run's status right after this change (`to`), whatever it became later. */
  status: string;
  logIndex: number;
  /** Position of the change among every run's status changes logged by entry `logIndex`, from 0. */
  ordinal: number;
  /** When entry `logIndex` was recorded (ISO 8601). */
  recordedAt: string;
}

/** An `approvalRequested` event. */
export interface ApprovalRequestPayload {
  threadId: string;
  runId: string;
  waitingFor: string;
  pendingApproval: unknown;
  timeoutAt: string | undefined;
  logIndex: number;
}

/** Where a hub reads from, and how it fans out across instances. */
export interface EventHubOptions {
  /** The store the engine writes: replay and gap repair read the log from it. */
  store: ThreadStore;
  /**
   * The engine's machine options (prices, memory limits): effects of entries read back from the
   * store are re-derived with them, so they must match the engine's for the same answers.
   */
  machineOptions?: ThreadMachineOptions;
  /** Fan out through Redis (wake-ups only; the log stays the truth). Default: in-process only. */
  redis?: RedisFanoutOptions;
  /** Most live items a subscriber buffers before it falls back to re-reading the store. Default 1,024. */
  bufferSize?: number;
  /**
   * Entries read from the store per query during replay and repair: a stream replays one page,
   * then yields a turn of the event loop (and waits for its connection to drain) before the
   * next. Default 256.
   */
  pageSize?: number;
  /** What subscriptions may cost in all and per API key (see groups.ts). */
  subscriptionCaps?: Partial<GroupCaps>;
  /** Reported failures that have no caller to go to (Redis errors, background repairs). */
  onError?: (error: unknown) => void;
}

export interface RedisFanoutOptions {
  /** e.g. `redis://127.0.0.1:6379`. Two connections are opened (pub/sub needs its own). */
  url: string;
  /** Channel that carries the wake-ups. Default `weft:commits`. */
  channel?: string;
  /**
   * How often (ms) a hub checks the threads it has subscribers for against the store, to repair
   * a wake-up Redis dropped with nothing committed after it. Default 5,000; 0 turns it off.
   */
  pollIntervalMs?: number;
  /** How long the hub waits for Redis to confirm its subscription before `ready` rejects. Default 5,000. */
  readyTimeoutMs?: number;
}

/**
 * A subscriber's connection as a stream sees it (given by the server per connection or response;
 * without one a stream only yields a turn of the event loop between pages). A replay reads no
 * further page from the store, and hands over no further item of a page, while the connection
 * is congested: what it has not sent yet waits in the store, not in memory.
 */
export interface Transport {
  /** The connection holds more unsent bytes than it wants. */
  congested(): boolean;
  /** Resolves once the connection is no longer congested, or is gone. */
  drained(): Promise<void>;
}

/**
 * One subscription's side of the delivery, shared by the stream and the server: the transport
 * it is paced by, and when the items it is delivering were obtained.
 */
export interface Delivery {
  readonly transport?: Transport;
  /**
   * Written by the stream before it hands over an item: when (performance.now()) that item was
   * read from the store, or taken from the live buffer. A key check begun at or after it covers
   * the item (see src/server/auth/plugin.ts): the items of one replay page share one check.
   */
  itemsAt: number | undefined;
}

/** Where a hub listener gets its items: one thread, or every thread (`'*'`). */
export type HubTopic = string | '*';

export interface HubListener {
  push(item: LogItem): void;
  /** The hub closed: no more items will come. */
  end?(): void;
  /** The thread was deleted: no more items of it will come. */
  deleted?(threadId: string): void;
}

/**
 * The event hub: the engine's Publisher, fanning committed entries out to in-process listeners
 * and (with Redis) to every other instance's hub.
 */
export interface EventHub extends Publisher {
  /** Resolves once live delivery is attached (the Redis subscription confirmed). */
  readonly ready: Promise<void>;
  readonly store: ThreadStore;
  readonly bufferSize: number;
  readonly pageSize: number;
  /**
   * When (performance.now()) an item last reached a listener or a store read returned: every
   * item a subscriber holds was committed before it, so a check begun after it is current for
   * that item (one key check serves every subscriber of a commit).
   */
  readonly lastItemAt: number;
  /** Adds a listener; returns its removal. Items of one thread arrive in index order. */
  listen(topic: HubTopic, listener: HubListener): () => void;
  /** Stored entries `[from, to)` of a thread as items (without effects). */
  read(threadId: string, from: number, to?: number): Promise<LogItem[]>;
  /** Resolves on this stream's turn of the event loop: the hub's replays take turns (stream.ts). */
  nextTurn(): Promise<void>;
  /** The same items with their effects, derived once per hub and shared. */
  withEffects(items: readonly LogItem[]): Promise<LogItem[]>;
  /** The thread's state after every stored entry (to find where node `sequence` was logged). */
  latestState(threadId: string): Promise<ThreadState>;
  /**
   * Where the thread of `item` has its own history: a fork's log starts with the entries it
   * copied (indices below its `upToIndex`, announced in its source), 0 for any other thread.
   * Remembered per hub.
   */
  historyStart(item: LogItem): Promise<number>;
  /** Listener counts, for metrics. */
  stats(): { threads: number; listeners: number };
  /** The subscription groups of this hub (one per process; shared by its tenant views). */
  readonly groups: SubscriptionGroups;
  close(): Promise<void>;
}
