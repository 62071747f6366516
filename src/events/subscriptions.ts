import type { NodeKind } from '../core/graph/index.js';
import { publicThreadId } from '../engine/index.js';
import { type StreamSource, streamLog } from './stream.js';
import type {
  ApprovalRequestPayload,
  Delivery,
  EventHub,
  NodeAppendedPayload,
  RunStatusChangePayload,
  ThreadEventPayload,
} from './types.js';

/**
 * The four realtime streams (the Subscription fields) over a hub, as async iterators (end them with
 * `return()` or the signal). Streams are opened on a thread's storage key (how the engine
 * publishes it); payloads name the thread by its id, as its tenant does (see
 * src/engine/tenancy.ts). Cursors: `afterIndex` replays the stored entries with a greater
 * index, then continues live; `afterSequence` likewise for nodes; without one, a stream starts
 * at the log's end when it is opened.
 */
export interface StreamArgs {
  signal?: AbortSignal;
  /** The subscriber's connection: replays are paced by it (see streamLog). */
  delivery?: Delivery;
}

export interface ThreadEventsArgs extends StreamArgs {
  threadId: string;
  afterIndex?: number;
}

export interface NodeAppendedArgs extends StreamArgs {
  threadId: string;
  afterSequence?: number;
  /** Only nodes of these kinds (lowercase, as in the log). */
  kinds?: readonly NodeKind[];
}

export interface RunStatusChangedArgs extends StreamArgs {
  threadId?: string;
  runId?: string;
  /** With `threadId`: replay the changes logged after this index first. */
  afterIndex?: number;
  /**
   * With `threadId` and `afterIndex` ≥ 0: the cursor is the change `(afterIndex, afterOrdinal)`,
   * so the changes of entry `afterIndex` with a greater ordinal come first.
   */
  afterOrdinal?: number;
  /** Without `threadId`: which threads the subscriber may see (tenant scoping). */
  allowThread?: (threadId: string) => boolean | Promise<boolean>;
}

export interface ApprovalRequestedArgs extends StreamArgs {
  threadId?: string;
  afterIndex?: number;
  allowThread?: (threadId: string) => boolean | Promise<boolean>;
}

/** A cursor argument: a safe integer ≥ -1 (−1 means "from the start"). */
export class InvalidCursorError extends Error {
  readonly code = 'BAD_USER_INPUT';
  constructor(
    readonly argument: string,
    readonly value: unknown,
    message = `${argument} must be an integer >= -1 (got ${String(value)}); omit it to start live`,
  ) {
    super(message);
    this.name = 'InvalidCursorError';
  }
}

function checkCursor(argument: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < -1)) {
    throw new InvalidCursorError(argument, value);
  }
}

export function threadEvents(
  hub: EventHub,
  args: ThreadEventsArgs,
): AsyncIterableIterator<ThreadEventPayload> {
  checkCursor('afterIndex', args.afterIndex);
  const items = streamLog(hub, {
    source: { threadId: args.threadId, afterIndex: args.afterIndex ?? 'live' },
    ...streamOptionsOf(args),
  });
  return mapStream(items, (item) => [
    once(item, () => ({
      threadId: publicThreadId(item.threadId),
      index: item.index,
      id: item.entry.id,
      type: item.entry.event.type,
      recordedAt: item.entry.recordedAt,
      entry: item.entry,
    })),
  ]);
}

/**
 * One payload per source object (a LogItem, or an effect of one): the hub hands the same item to
 * every listener, so every subscriber of a commit gets the same payload object, and identical
 * subscriptions execute it once (shared-execution.ts keys its memo on it).
 */
const payloads = new WeakMap<object, unknown>();
function once<T>(source: object, build: () => T): T {
  let payload = payloads.get(source) as T | undefined;
  if (payload === undefined) {
    payload = build();
    payloads.set(source, payload);
  }
  return payload;
}

export function nodeAppended(
  hub: EventHub,
  args: NodeAppendedArgs,
): AsyncIterableIterator<NodeAppendedPayload> {
  checkCursor('afterSequence', args.afterSequence);
  const kinds = args.kinds === undefined ? undefined : new Set<string>(args.kinds);
  const afterSequence = args.afterSequence ?? 0;
  // Live: attached now. With a cursor: from the entry that logged node `afterSequence + 1`
  // (none yet: from the log's end), found when the stream is first read.
  // Where from is read off the node's row, not worked out by folding the thread's whole log (on a
  // thread of a hundred thousand nodes that held the server for seconds).
  const start = async (): Promise<StreamSource> => {
    const logIndex =
      (await hub.store.findNodeLogIndex(args.threadId, Math.max(1, afterSequence + 1))) ??
      (await hub.store.getLogLength(args.threadId)) ??
      0;
    return { threadId: args.threadId, afterIndex: logIndex - 1 };
  };
  const items =
    args.afterSequence === undefined
      ? streamLog(hub, {
          source: { threadId: args.threadId, afterIndex: 'live' },
          effects: true,
          ...streamOptionsOf(args),
        })
      : lazyStream(async () =>
          streamLog(hub, { source: await start(), effects: true, ...streamOptionsOf(args) }),
        );
  return mapStream(items, (item) => {
    const out: NodeAppendedPayload[] = [];
    for (const effect of item.effects ?? []) {
      if (effect.type !== 'node_appended') continue;
      if (effect.node.sequence <= afterSequence) continue;
      if (kinds !== undefined && !kinds.has(effect.node.kind)) continue;
      out.push(
        once(effect, () => ({
          threadId: publicThreadId(item.threadId),
          node: effect.node,
          meta: effect.meta,
          logIndex: item.index,
        })),
      );
    }
    return out;
  });
}

/**
 * Status changes of runs. A change is numbered `(logIndex, ordinal)`: the entry that logged it
 * and its position among every status change of that entry, so a subscriber filtering by run
 * and one following the whole thread number it alike. A fork's copied entries changed nothing
 * (those changes happened in its source, and were announced there): they yield no events, live
 * or replayed.
 */
export function runStatusChanged(
  hub: EventHub,
  args: RunStatusChangedArgs,
): AsyncIterableIterator<RunStatusChangePayload> {
  checkCursor('afterIndex', args.afterIndex);
  const { afterOrdinal } = args;
  if (afterOrdinal !== undefined) {
    if (!Number.isSafeInteger(afterOrdinal) || afterOrdinal < 0) {
      throw new InvalidCursorError(
        'afterOrdinal',
        afterOrdinal,
        `afterOrdinal must be an integer >= 0 (got ${String(afterOrdinal)})`,
      );
    }
    if (args.threadId === undefined || args.afterIndex === undefined || args.afterIndex < 0) {
      throw new InvalidCursorError(
        'afterOrdinal',
        afterOrdinal,
        'afterOrdinal needs threadId and afterIndex >= 0 (the entry of the change it follows)',
      );
    }
  }
  // Resuming inside entry `afterIndex`: read it again and skip the changes already seen.
  const resumeIn = afterOrdinal === undefined ? undefined : args.afterIndex!;
  const source = sourceOf(resumeIn === undefined ? args : { ...args, afterIndex: resumeIn - 1 });
  const items = streamLog(hub, { source, effects: true, ...streamOptionsOf(args) });
  return mapStream(items, async (item) => {
    const out: RunStatusChangePayload[] = [];
    let ordinal = -1;
    let ownFrom: number | undefined;
    for (const effect of item.effects ?? []) {
      if (effect.type !== 'run_status_changed') continue;
      ordinal++;
      if (args.runId !== undefined && effect.runId !== args.runId) continue;
      if (item.index === resumeIn && ordinal <= afterOrdinal!) continue;
      ownFrom ??= await hub.historyStart(item);
      if (item.index < ownFrom) return [];
      const at = ordinal;
      out.push(
        once(effect, () => ({
          threadId: publicThreadId(item.threadId),
          runId: effect.runId,
          from: effect.from,
          to: effect.to,
          status: effect.to,
          logIndex: item.index,
          ordinal: at,
          recordedAt: item.entry.recordedAt,
        })),
      );
    }
    return out;
  });
}

export function approvalRequested(
  hub: EventHub,
  args: ApprovalRequestedArgs,
): AsyncIterableIterator<ApprovalRequestPayload> {
  checkCursor('afterIndex', args.afterIndex);
  const items = streamLog(hub, { source: sourceOf(args), effects: true, ...streamOptionsOf(args) });
  return mapStream(items, async (item) => {
    const out: ApprovalRequestPayload[] = [];
    let ownFrom: number | undefined;
    for (const effect of item.effects ?? []) {
      if (effect.type !== 'approval_requested') continue;
      // A fork's copied requests were asked (and announced) in its source, like its run changes.
      ownFrom ??= await hub.historyStart(item);
      if (item.index < ownFrom) return [];
      out.push(
        once(effect, () => ({
          threadId: publicThreadId(item.threadId),
          runId: effect.runId,
          waitingFor: effect.waitingFor,
          pendingApproval: effect.pendingApproval,
          timeoutAt: effect.timeoutAt,
          logIndex: item.index,
        })),
      );
    }
    return out;
  });
}

function sourceOf(args: RunStatusChangedArgs | ApprovalRequestedArgs): StreamSource {
  if (args.threadId !== undefined) {
    return { threadId: args.threadId, afterIndex: args.afterIndex ?? 'live' };
  }
  return args.allowThread === undefined
    ? { all: true }
    : { all: true, allowThread: args.allowThread };
}

const streamOptionsOf = (args: StreamArgs) => ({
  ...(args.signal === undefined ? {} : { signal: args.signal }),
  ...(args.delivery === undefined ? {} : { delivery: args.delivery }),
});

/** Maps each item to zero or more outputs, keeping `return()` wired through to the source. */
function mapStream<A, B>(
  source: AsyncIterableIterator<A>,
  map: (item: A) => B[] | Promise<B[]>,
): AsyncIterableIterator<B> {
  let pending: B[] = [];
  let returned = false;
  return {
    async next(): Promise<IteratorResult<B>> {
      for (;;) {
        if (pending.length > 0) return { done: false, value: pending.shift()! };
        const step = await source.next();
        if (step.done === true) return { done: true, value: undefined };
        const mapped = await map(step.value);
        // An asynchronous map may finish after return(): what it found is no longer wanted.
        if (returned) return { done: true, value: undefined };
        pending = mapped;
      }
    },
    async return(): Promise<IteratorResult<B>> {
      returned = true;
      pending = [];
      await source.return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** An iterator whose source is opened on the first `next()` (after an async look-up). */
function lazyStream<T>(open: () => Promise<AsyncIterableIterator<T>>): AsyncIterableIterator<T> {
  let opened: Promise<AsyncIterableIterator<T>> | undefined;
  let finished = false;
  return {
    async next(): Promise<IteratorResult<T>> {
      if (finished) return { done: true, value: undefined };
      opened ??= open();
      return (await opened).next();
    },
    async return(): Promise<IteratorResult<T>> {
      finished = true;
      if (opened !== undefined) await (await opened).return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
