/**
 * Subscriptions (DESIGN §6): the four realtime fields over the event hub, served over graphql-ws
 * and SSE like every operation. Gap-free and resumable: `afterIndex` / `afterSequence` replay
 * what was stored after the cursor, then continue live, with nothing missed or repeated — on any
 * instance (the hub fans out through Redis when configured). The hub comes in the context as
 * `events` (buildApp's `extendContext: () => ({ events: hub })`).
 */
import { z } from 'zod';
import type { EventView } from '../engine/reads.js';
import {
  type ApprovalRequestPayload,
  approvalRequested,
  type EventHub,
  type NodeAppendedPayload,
  nodeAppended,
  type RunStatusChangePayload,
  runStatusChanged,
  type ThreadEventPayload,
  threadEvents,
} from '../server/events/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { NodeKindEnum, RunStatusEnum } from './enums.js';
import { notFound, unwrapResult } from './error-classes.js';
import { CausalNodeRef, RunRef, ThreadEventRef } from './refs.js';
import { loadThread } from './thread.js';

declare module './context.js' {
  interface GraphQLContext {
    /** The event hub the engine publishes to; required for subscriptions. */
    events?: EventHub;
  }
}

/** A cursor: -1 replays from the start; omitted means live only. */
const cursor = z.number().int().min(-1);

function hubOf(ctx: GraphQLContext): EventHub {
  if (ctx.events === undefined) {
    // A wiring mistake, not the client's: masked as an unexpected error, logged by the server.
    throw new Error('subscriptions need an event hub in the context (buildApp extendContext)');
  }
  return ctx.events;
}

/** The run a payload names, as the Run type reads it (its current state). */
async function loadRun(ctx: GraphQLContext, threadId: string, runId: string) {
  const run = await ctx.loaders.run.load({ threadId, id: runId });
  if (run === undefined) throw notFound('Run', runId);
  return run;
}

const RunStatusChangeRef = builder.objectRef<RunStatusChangePayload>('RunStatusChange').implement({
  description: 'A run changed status; `logIndex` is the entry that changed it.',
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (c, _a, ctx) => loadRun(ctx, c.threadId, c.runId) }),
    runId: t.exposeID('runId'),
    threadId: t.exposeID('threadId'),
    from: t.field({ type: RunStatusEnum, resolve: (c) => c.from as never }),
    to: t.field({ type: RunStatusEnum, resolve: (c) => c.to as never }),
    logIndex: t.exposeInt('logIndex'),
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
        await loadThread(ctx, args.threadId);
        return threadEvents(hubOf(ctx), {
          threadId: args.threadId,
          ...(args.afterIndex == null ? {} : { afterIndex: args.afterIndex }),
        });
      },
      resolve: (event) => toEventView(event),
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
        await loadThread(ctx, args.threadId);
        return nodeAppended(hubOf(ctx), {
          threadId: args.threadId,
          ...(args.afterSequence == null ? {} : { afterSequence: args.afterSequence }),
          ...(args.kinds == null ? {} : { kinds: args.kinds }),
        });
      },
      // The node as the thread's read model has it (committed before the event was published).
      resolve: async (event: NodeAppendedPayload, _args, ctx) => {
        const node = await ctx.loaders.node.load({ threadId: event.threadId, id: event.node.id });
        if (node === undefined) throw notFound('CausalNode', event.node.id);
        return node;
      },
    }),
    runStatusChanged: t.field({
      type: RunStatusChangeRef,
      description:
        'Run status changes: of one run (runId), of one thread (threadId), or of every thread. ' +
        'With threadId and afterIndex: first the changes logged after that index.',
      args: {
        threadId: t.arg.id(),
        runId: t.arg.id(),
        afterIndex: t.arg.int({ validate: cursor }),
      },
      subscribe: async (_root, args, ctx) => {
        if (args.threadId != null) await loadThread(ctx, args.threadId);
        if (args.runId != null) {
          const run = unwrapResult(await ctx.reads.findRun(args.runId, args.threadId ?? undefined));
          if (run === undefined) throw notFound('Run', args.runId);
        }
        return runStatusChanged(hubOf(ctx), {
          ...(args.threadId == null ? {} : { threadId: args.threadId }),
          ...(args.runId == null ? {} : { runId: args.runId }),
          ...(args.afterIndex == null || args.threadId == null
            ? {}
            : { afterIndex: args.afterIndex }),
        });
      },
      resolve: (change) => change,
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
        if (args.threadId != null) await loadThread(ctx, args.threadId);
        return approvalRequested(hubOf(ctx), {
          ...(args.threadId == null ? {} : { threadId: args.threadId }),
          ...(args.afterIndex == null || args.threadId == null
            ? {}
            : { afterIndex: args.afterIndex }),
        });
      },
      resolve: (request) => request,
    }),
  }),
});
