/**
 * The approvals inbox: `Query.approvals`, every request of the caller's runs for human input
 * across threads, newest first by default, filtered by state and thread, paged both ways and
 * counted. Answered from the `approval` read model (one index range per page).
 */
import type { WaitingReason } from '../core/run/index.js';
import type { ApprovalView } from '../reads/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { ApprovalStateEnum, OrderDirectionEnum, WaitingReasonEnum } from './enums.js';
import {
  cursorKind,
  isString,
  pageConnection,
  pageOrder,
  pageRequest,
  resolveCount,
  withCount,
} from './pagination.js';
import { RunRef, ThreadRef } from './refs.js';
import { loadThread, pageSizeHint } from './thread.js';

const ApprovalRef = builder.objectRef<ApprovalView>('Approval');

ApprovalRef.implement({
  description:
    "A run's request for human input: made when the run started waiting (REQUEST_HUMAN_INPUT), resolved when it was resumed, expired when the wait ran out. Answer it with `dispatch` (RESUME_FROM_HUMAN) on its run.",
  fields: (t) => ({
    threadId: t.exposeID('threadId'),
    thread: t.field({ type: ThreadRef, resolve: (a, _args, ctx) => loadThread(ctx, a.threadId) }),
    runId: t.exposeID('runId'),
    run: t.field({
      type: RunRef,
      nullable: true,
      description: 'The run as it is now.',
      resolve: (a, _args, ctx) => ctx.loaders.run.load({ threadId: a.threadId, id: a.runId }),
    }),
    state: t.field({ type: ApprovalStateEnum, resolve: (a) => a.state }),
    waitingFor: t.field({
      type: WaitingReasonEnum,
      resolve: (a) => a.waitingFor as WaitingReason,
    }),
    prompt: t.field({
      type: 'JSON',
      nullable: true,
      description: 'What the run asked (its `pending_approval`), if anything.',
      resolve: (a) => a.prompt,
    }),
    requestedAt: t.field({ type: 'DateTime', resolve: (a) => a.requestedAt }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the wait runs out (the run then times out).',
      resolve: (a) => a.expiresAt,
    }),
    requestIndex: t.int({
      description: 'Log index of the entry that made the request.',
      resolve: (a) => a.requestIndex,
    }),
    resolvedAt: t.field({ type: 'DateTime', nullable: true, resolve: (a) => a.resolvedAt }),
    resolvedIndex: t.int({
      nullable: true,
      description: 'Log index of the entry that resolved it or let it expire.',
      resolve: (a) => a.resolvedIndex,
    }),
    decision: t.string({
      nullable: true,
      description: 'The decision it was resumed with (`approved`, `rejected`, …).',
      resolve: (a) => a.decision,
    }),
    response: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The response given with the decision, if any.',
      resolve: (a) => a.response,
    }),
  }),
});

const ApprovalConnection = builder.connectionObject(
  {
    type: ApprovalRef,
    name: 'ApprovalConnection',
    edgesNullable: false,
    nodeNullable: false,
    fields: (t) => ({
      totalCount: t.int({
        description: 'How many requests match the filter (all pages), counted only when asked for.',
        resolve: resolveCount,
      }),
    }),
  },
  { name: 'ApprovalEdge' },
);

const ApprovalFilter = builder.inputType('ApprovalFilter', {
  fields: (t) => ({
    state: t.field({
      type: [ApprovalStateEnum],
      description: 'Only requests in one of these states (PENDING: the inbox).',
    }),
    threadId: t.id({ description: 'Only requests of runs of this thread.' }),
    requestedAfter: t.field({
      type: 'DateTime',
      description: 'Only requests made after this time.',
    }),
    requestedBefore: t.field({
      type: 'DateTime',
      description: 'Only requests made before this time.',
    }),
  }),
});

const ApprovalOrder = builder.inputType('ApprovalOrder', {
  fields: (t) => ({
    direction: t.field({
      type: OrderDirectionEnum,
      required: true,
      defaultValue: 'desc',
      description: 'By request time: DESC (the default) is newest first.',
    }),
  }),
});

/** A position in the inbox: the request's time, thread and run, and the order. */
type ApprovalCursor = { c: string; t: string; r: string; o?: string };
const isApprovalCursor = (v: unknown): v is ApprovalCursor =>
  typeof v === 'object' &&
  v !== null &&
  isString((v as ApprovalCursor).c) &&
  isString((v as ApprovalCursor).t) &&
  isString((v as ApprovalCursor).r) &&
  ((v as ApprovalCursor).o === undefined || isString((v as ApprovalCursor).o));
const APPROVAL_CURSOR = cursorKind('approvals', isApprovalCursor);

async function approvalPage(
  ctx: GraphQLContext,
  args: {
    first?: number | null | undefined;
    after?: string | null | undefined;
    last?: number | null | undefined;
    before?: string | null | undefined;
    filter?:
      | {
          state?: ApprovalView['state'][] | null | undefined;
          threadId?: string | null | undefined;
          requestedAfter?: Date | null | undefined;
          requestedBefore?: Date | null | undefined;
        }
      | null
      | undefined;
    orderBy?: { direction: 'asc' | 'desc' } | null | undefined;
  },
) {
  const request = pageRequest(args, APPROVAL_CURSOR);
  const order = pageOrder(
    request,
    { field: 'requestedAt', direction: args.orderBy?.direction ?? 'desc' },
    'requestedAt',
  );
  const scoped = {
    tenantId: ctx.auth.tenant,
    states: args.filter?.state ?? undefined,
    threadId: args.filter?.threadId ?? undefined,
    requestedAfter: args.filter?.requestedAfter ?? undefined,
    requestedBefore: args.filter?.requestedBefore ?? undefined,
  };
  const rows = await ctx.reads.listApprovals({
    ...scoped,
    take: request.size + 1,
    descending: order.readDescending,
    after:
      request.cursor === undefined
        ? undefined
        : {
            at: new Date(request.cursor.c),
            threadId: request.cursor.t,
            runId: request.cursor.r,
          },
  });
  const connection = pageConnection(rows, request, (a) => ({
    c: a.requestedAt.toISOString(),
    t: a.threadId,
    r: a.runId,
    o: order.name,
  }));
  return withCount(connection, () => ctx.reads.countApprovals(scoped));
}

builder.queryFields((t) => ({
  approvals: t.field({
    type: ApprovalConnection,
    description:
      'Requests of runs for human input across every thread the caller may see, newest first. `approvals(filter: { state: [PENDING] })` is the inbox. Page forward with `first`/`after`, backward with `last`/`before`.',
    args: {
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
      filter: t.arg({ type: ApprovalFilter }),
      orderBy: t.arg({ type: ApprovalOrder }),
    },
    complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first ?? args.last) }),
    resolve: (_r, args, ctx) => approvalPage(ctx, args),
  }),
}));
