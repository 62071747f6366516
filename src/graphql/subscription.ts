/**
 * Subscriptions: the four realtime fields over the event hub, served over graphql-ws
 * and SSE like every operation. Gap-free and resumable: `afterIndex` / `afterSequence` replay
 * what was stored after the cursor, then continue live, with nothing missed or repeated — on any
 * instance (the hub fans out through Redis when configured). The hub comes in the context as
 * `events` (buildApp's `extendContext: () => ({ events: hub })`).
 */

import { GraphQLError } from 'graphql';
import { z } from 'zod';
import {
  type ApprovalRequestPayload,
  type Delivery,
  type EventHub,
  groupedApprovalRequested,
  groupedNodeAppended,
  groupedRunStatusChanged,
  groupedThreadEvents,
  type NodeAppendedPayload,
  type RunStatusChangePayload,
  SlowConsumerError,
  type Subscriber,
  SubscriptionCostError,
  type ThreadEventPayload,
  withDirect,
} from '../events/index.js';
import type { EventView } from '../reads/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { endingOnDeletion, orDeleted } from './deleted-thread.js';
import { NodeKindEnum, RunStatusEnum } from './enums.js';
import { badInput, notFound, unwrapResult } from './error-classes.js';
import { CausalNodeRef, RunRef, ThreadEventRef } from './refs.js';
import { loadThread } from './thread.js';

declare module './context.js' {
  interface GraphQLContext {
    /** The event hub the engine publishes to; required for subscriptions. */
    events?: EventHub;
    /**
     * The operation's connection (set by the server per WebSocket operation or SSE response):
     * replays are paced by it, and the key check of each page is stamped through it.
     */
    delivery?: Delivery;
  }
}

export const deliveryOf = (ctx: GraphQLContext) =>
  ctx.delivery === undefined ? {} : { delivery: ctx.delivery };

/** A cursor: -1 replays from the start; omitted means live only. */
const cursor = z.number().int().min(-1);
/** A position within one log entry. */
const ordinal = z.number().int().min(0);

export function hubOf(ctx: GraphQLContext): EventHub {
  if (ctx.events === undefined) {
    // A wiring mistake, not the client's: masked as an unexpected error, logged by the server.
    throw new Error('subscriptions need an event hub in the context (buildApp extendContext)');
  }
  return ctx.events;
}

/** Who subscribes, as the subscription groups see it: the tenant, and the key that pays. */
export const subscriberOf = (ctx: GraphQLContext): Subscriber => ({
  tenant: ctx.auth.tenant,
  holder: ctx.auth.keyId ?? 'open',
});

/**
 * A grouped stream, its refusals (cost caps at subscribe time, a slow member later) as typed
 * GraphQL errors.
 */
export async function admitted<T>(
  open: () => Promise<AsyncIterableIterator<T>>,
): Promise<AsyncIterableIterator<T>> {
  let source: AsyncIterableIterator<T>;
  try {
    source = await open();
  } catch (error) {
    throw typedRefusal(error);
  }
  const stream: AsyncIterableIterator<T> = {
    // A promise step, not an async function's several: this runs for every event delivered.
    next: () =>
      source.next().then(undefined, (error: unknown) => {
        throw typedRefusal(error);
      }),
    return: (value?: unknown) =>
      source.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined }),
    throw: (error?: unknown) => source.throw?.(error) ?? Promise.reject(error),
    [Symbol.asyncIterator]: () => stream,
  };
  // Values pass unchanged (only failures are typed here): direct mode may reach the source.
  return withDirect(stream, source);
}

function typedRefusal(error: unknown): unknown {
  if (error instanceof SubscriptionCostError) {
    return new GraphQLError(error.message, {
      extensions: { code: error.code, scope: error.scope, cost: error.cost, cap: error.cap },
    });
  }
  if (error instanceof SlowConsumerError) {
    return new GraphQLError(error.message, {
      extensions: { code: error.code, behind: error.behind },
    });
  }
  return error;
}

/** The run a payload names, as the Run type reads it (its current state). */
async function loadRun(ctx: GraphQLContext, threadId: string, runId: string) {
  const run = await ctx.loaders.run.load({ threadId, id: runId });
  if (run === undefined) throw notFound('Run', runId);
  return run;
}

const RunStatusChangeRef = builder.objectRef<RunStatusChangePayload>('RunStatusChange').implement({
  description:
    'One status change of a run, as of that change. `(logIndex, ordinal)` identifies it within ' +
    'its thread and orders it: one log entry can change statuses several times (starting a run ' +
    'takes it from PENDING to SCHEDULED to RUNNING), each with its own ordinal. A run id is ' +
    'shared by the copies of the run in forks of its thread; `threadId` says which copy changed.',
  fields: (t) => ({
    run: t.field({
      type: RunRef,
      description:
        'The run as it is now, when the event is delivered (it may have changed again since): ' +
        'read status, from and to for the state at this change.',
      resolve: (c, _a, ctx) => loadRun(ctx, c.threadId, c.runId),
    }),
    runId: t.exposeID('runId'),
    threadId: t.exposeID('threadId', {
      description:
        'The thread whose log holds the change: the run itself, or its copy in a fork of the ' +
        'thread that started it.',
    }),
    status: t.field({
      type: RunStatusEnum,
      description: 'The run status right after this change (equal to `to`).',
      resolve: (c) => c.status as never,
    }),
    from: t.field({
      type: RunStatusEnum,
      description: 'The status before this change.',
      resolve: (c) => c.from as never,
    }),
    to: t.field({
      type: RunStatusEnum,
      description: 'The status after this change.',
      resolve: (c) => c.to as never,
    }),
    logIndex: t.exposeInt('logIndex', {
      description: 'Index of the log entry that made the change.',
    }),
    ordinal: t.exposeInt('ordinal', {
      description:
        "Position of this change among every run's status changes logged by entry logIndex, " +
        'from 0 (the same whatever the subscription filters by). Resume after this change ' +
        'with afterIndex = logIndex and afterOrdinal = ordinal.',
    }),
    changedAt: t.field({
      type: 'DateTime',
      description: 'When the entry that made the change was recorded.',
      resolve: (c) => new Date(c.recordedAt),
    }),
  }),
});

const ApprovalRequestRef = builder.objectRef<ApprovalRequestPayload>('ApprovalRequest').implement({
  description: 'A run is waiting for a human decision (resolve it with resolveApproval).',
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (a, _a, ctx) => loadRun(ctx, a.threadId, a.runId) }),
    runId: t.exposeID('runId'),
    threadId: t.exposeID('threadId'),
    waitingFor: t.exposeString('waitingFor'),
    pendingApproval: t.field({
      type: 'JSON',
      nullable: true,
      resolve: (a) => a.pendingApproval ?? null,
    }),
    timeoutAt: t.field({
      type: 'DateTime',
      nullable: true,
      resolve: (a) => (a.timeoutAt === undefined ? null : new Date(a.timeoutAt)),
    }),
    logIndex: t.exposeInt('logIndex'),
  }),
});

const toEventView = (e: ThreadEventPayload): EventView => ({
  threadId: e.threadId,
  index: e.index,
  id: e.id,
  type: e.type,
  recordedAt: new Date(e.recordedAt),
  entry: e.entry,
});

builder.subscriptionType({
  authScopes: { read: true },
  description:
    'Realtime, over graphql-ws (WebSocket) and SSE on /graphql. Every event carries its log ' +
    'index; resubscribe with the last one seen (afterIndex / afterSequence) to continue with ' +
    'no gap and no duplicate, on any server instance.',
  fields: (t) => ({
    threadEvents: t.field({
      type: ThreadEventRef,
      description:
        'Log entries of a thread. With afterIndex: first the stored entries with a greater ' +
        'index (-1: the whole log), then live. Without: only entries committed from now on.',
      args: {
        threadId: t.arg.id({ required: true }),
        afterIndex: t.arg.int({ validate: cursor }),
      },
      subscribe: async (_root, args, ctx) => {
        const thread = await loadThread(ctx, args.threadId);
        const stream = await admitted(() =>
          groupedThreadEvents(hubOf(ctx), subscriberOf(ctx), {
            ...deliveryOf(ctx),
            threadId: thread.key,
            ...(args.afterIndex == null ? {} : { afterIndex: args.afterIndex }),
          }),
        );
        return endingOnDeletion(stream, thread.id);
      },
      resolve: orDeleted((event: ThreadEventPayload) => toEventView(event)),
    }),
    nodeAppended: t.field({
      type: CausalNodeRef,
      description:
        'New causal nodes of a thread (identical content appended again is not a new node). ' +
        'With afterSequence: first the stored nodes with a greater sequence, then live.',
      args: {
        threadId: t.arg.id({ required: true }),
        afterSequence: t.arg.int({ validate: cursor }),
        kinds: t.arg({ type: [NodeKindEnum] }),
      },
      subscribe: async (_root, args, ctx) => {
        const thread = await loadThread(ctx, args.threadId);
        const stream = await admitted(() =>
          groupedNodeAppended(hubOf(ctx), subscriberOf(ctx), {
            ...deliveryOf(ctx),
            threadId: thread.key,
            ...(args.afterSequence == null ? {} : { afterSequence: args.afterSequence }),
            ...(args.kinds == null ? {} : { kinds: args.kinds }),
          }),
        );
        return endingOnDeletion(stream, thread.id);
      },
      // The node as the thread's read model has it (committed before the event was published).
      resolve: orDeleted(
        async (event: NodeAppendedPayload, _args: unknown, ctx: GraphQLContext) => {
          const node = await ctx.loaders.node.load({ threadId: event.threadId, id: event.node.id });
          if (node === undefined) throw notFound('CausalNode', event.node.id);
          return node;
        },
      ),
    }),
    runStatusChanged: t.field({
      type: RunStatusChangeRef,
      description:
        'Run status changes: of one run (runId), of one thread (threadId), or of every thread. ' +
        'A run id without threadId follows the run in every thread holding it (the thread that ' +
        'started it and its forks; each event names its thread). A fork copies the log of its ' +
        'source, but copying changes no status: the copied changes are not delivered, neither ' +
        'live nor on replay. With threadId and afterIndex: first the changes logged after that ' +
        'index; adding afterOrdinal resumes after the change (afterIndex, afterOrdinal), ' +
        'starting with the later changes of that same entry.',
      args: {
        threadId: t.arg.id(),
        runId: t.arg.id(),
        afterIndex: t.arg.int({ validate: cursor }),
        afterOrdinal: t.arg.int({
          description:
            'With afterIndex >= 0: the ordinal of the last change seen in entry afterIndex.',
          validate: ordinal,
        }),
      },
      subscribe: async (_root, args, ctx) => {
        if (args.afterOrdinal != null && (args.afterIndex == null || args.afterIndex < 0)) {
          throw badInput(
            'afterOrdinal',
            'needs afterIndex >= 0, the entry of the change it follows',
          );
        }
        if (args.afterOrdinal != null && args.threadId == null) {
          throw badInput('afterOrdinal', 'needs threadId (a cursor is a position in one log)');
        }
        const thread = args.threadId == null ? undefined : await loadThread(ctx, args.threadId);
        if (args.runId != null) {
          const run = unwrapResult(await ctx.reads.findRun(args.runId, args.threadId ?? undefined));
          if (run === undefined) throw notFound('Run', args.runId);
        }
        const stream = await admitted(() =>
          groupedRunStatusChanged(hubOf(ctx), subscriberOf(ctx), {
            ...deliveryOf(ctx),
            ...(thread === undefined ? {} : { threadId: thread.key }),
            ...(args.runId == null ? {} : { runId: args.runId }),
            ...(args.afterIndex == null || args.threadId == null
              ? {}
              : { afterIndex: args.afterIndex }),
            ...(args.afterOrdinal == null ? {} : { afterOrdinal: args.afterOrdinal }),
          }),
        );
        // One thread's changes end, as its other streams do, when the thread is deleted.
        return thread === undefined ? stream : endingOnDeletion(stream, thread.id);
      },
      resolve: orDeleted((change: RunStatusChangePayload) => change),
    }),
    approvalRequested: t.field({
      type: ApprovalRequestRef,
      description:
        'Runs asking for a human decision: of one thread (threadId), or of every thread. With ' +
        'threadId and afterIndex: first the requests logged after that index.',
      args: {
        threadId: t.arg.id(),
        afterIndex: t.arg.int({ validate: cursor }),
      },
      subscribe: async (_root, args, ctx) => {
        const thread = args.threadId == null ? undefined : await loadThread(ctx, args.threadId);
        return admitted(() =>
          groupedApprovalRequested(hubOf(ctx), subscriberOf(ctx), {
            ...deliveryOf(ctx),
            ...(thread === undefined ? {} : { threadId: thread.key }),
            ...(args.afterIndex == null || args.threadId == null
              ? {}
              : { afterIndex: args.afterIndex }),
          }),
        );
      },
      resolve: (request) => request,
    }),
  }),
});
