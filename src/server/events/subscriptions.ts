import { getNodeBySequence, type NodeKind } from '../../core/graph/index.js';
import { getNodeMeta } from '../../core/thread/index.js';
import { type StreamSource, streamLog } from './stream.js';
import type {
  ApprovalRequestPayload,
  EventHub,
  NodeAppendedPayload,
  RunStatusChangePayload,
  ThreadEventPayload,
} from './types.js';

/**
 * The four realtime streams of DESIGN §6 over a hub, as async iterators (end them with
 * `return()` or the signal). Cursors: `afterIndex` replays the stored entries with a greater
 * index, then continues live; `afterSequence` likewise for nodes; without one, a stream starts
 * at the log's end when it is opened.
 */
export interface StreamArgs {
  signal?: AbortSignal;
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
  ) {
    super(`${argument} must be an integer >= -1 (got ${String(value)}); omit it to start live`);
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
    ...signalOf(args),
  });
  return mapStream(items, (item) => [
    once(item, () => ({
      threadId: item.threadId,
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
  const start = async (): Promise<StreamSource> => {
    const state = await hub.latestState(args.threadId);
    const next = getNodeBySequence(state.graph, afterSequence + 1);
    const logIndex = next === undefined ? undefined : getNodeMeta(state, next.id)?.logIndex;
    return { threadId: args.threadId, afterIndex: (logIndex ?? state.length) - 1 };
  };
  const items =
    args.afterSequence === undefined
      ? streamLog(hub, {
          source: { threadId: args.threadId, afterIndex: 'live' },
          effects: true,
          ...signalOf(args),
        })
      : lazyStream(async () =>
          streamLog(hub, { source: await start(), effects: true, ...signalOf(args) }),
        );
  return mapStream(items, (item) => {
    const out: NodeAppendedPayload[] = [];
    for (const effect of item.effects ?? []) {
      if (effect.type !== 'node_appended') continue;
      if (effect.node.sequence <= afterSequence) continue;
      if (kinds !== undefined && !kinds.has(effect.node.kind)) continue;
      out.push(
        once(effect, () => ({
          threadId: item.threadId,
          node: effect.node,
          meta: effect.meta,
          logIndex: item.index,
        })),
      );
    }
    return out;
  });
}

export function runStatusChanged(
  hub: EventHub,
  args: RunStatusChangedArgs,
): AsyncIterableIterator<RunStatusChangePayload> {
  checkCursor('afterIndex', args.afterIndex);
  const items = streamLog(hub, { source: sourceOf(args), effects: true, ...signalOf(args) });
  return mapStream(items, (item) => {
    const out: RunStatusChangePayload[] = [];
    for (const effect of item.effects ?? []) {
      if (effect.type !== 'run_status_changed') continue;
      if (args.runId !== undefined && effect.runId !== args.runId) continue;
      out.push(
        once(effect, () => ({
          threadId: item.threadId,
          runId: effect.runId,
          from: effect.from,
          to: effect.to,
          logIndex: item.index,
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
  const items = streamLog(hub, { source: sourceOf(args), effects: true, ...signalOf(args) });
  return mapStream(items, (item) => {
    const out: ApprovalRequestPayload[] = [];
    for (const effect of item.effects ?? []) {
      if (effect.type !== 'approval_requested') continue;
      out.push(
        once(effect, () => ({
          threadId: item.threadId,
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

const signalOf = (args: StreamArgs) => (args.signal === undefined ? {} : { signal: args.signal });

/** Maps each item to zero or more outputs, keeping `return()` wired through to the source. */
function mapStream<A, B>(
  source: AsyncIterableIterator<A>,
  map: (item: A) => B[],
): AsyncIterableIterator<B> {
  let pending: B[] = [];
  return {
    async next(): Promise<IteratorResult<B>> {
      for (;;) {
        if (pending.length > 0) return { done: false, value: pending.shift()! };
        const step = await source.next();
        if (step.done === true) return { done: true, value: undefined };
        pending = map(step.value);
      }
    },
    async return(): Promise<IteratorResult<B>> {
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
