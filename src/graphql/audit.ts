/**
 * The tenant's audit trail: what was deleted, by whom, when, and the thread's final state. A
 * connection like the other lists (newest first, paged both ways, counted), so an auditor can
 * read every entry however many a retention sweep has written.
 */
import type { AuditView } from '../reads/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { OrderDirectionEnum } from './enums.js';
import {
  cursorKind,
  isString,
  pageConnection,
  pageOrder,
  pageRequest,
  resolveCount,
  withCount,
} from './pagination.js';
import { pageSizeHint } from './thread.js';

const AuditEntryRef = builder.objectRef<AuditView>('AuditEntry').implement({
  description:
    'One entry of the tenant audit trail. `action` is `thread_deleted`; `actor` the API key id ' +
    'that asked (`open` without keys, `system` for the server itself).',
  fields: (t) => ({
    id: t.exposeID('id'),
    recordedAt: t.field({ type: 'DateTime', resolve: (a) => a.recordedAt }),
    actor: t.exposeString('actor'),
    action: t.exposeString('action'),
    threadId: t.exposeID('threadId'),
    logLength: t.exposeInt('logLength'),
    stateHash: t.exposeString('stateHash'),
  }),
});

const AuditEntryConnection = builder.connectionObject(
  {
    type: AuditEntryRef,
    name: 'AuditEntryConnection',
    edgesNullable: false,
    nodeNullable: false,
    fields: (t) => ({
      totalCount: t.int({
        description: 'How many entries match the filter (all pages), counted only when asked for.',
        resolve: resolveCount,
      }),
    }),
  },
  { name: 'AuditEntryEdge' },
);

const AuditFilter = builder.inputType('AuditFilter', {
  fields: (t) => ({
    threadId: t.id({ description: 'Only entries about this thread (its id when it was deleted).' }),
    action: t.string({ description: 'Only entries with this action, e.g. `thread_deleted`.' }),
  }),
});

const AuditOrder = builder.inputType('AuditOrder', {
  fields: (t) => ({
    direction: t.field({
      type: OrderDirectionEnum,
      required: true,
      defaultValue: 'desc',
      description: 'By time recorded: DESC (the default) is newest first.',
    }),
  }),
});

/** A position in the trail: the entry's time and id, and the order. */
type AuditCursor = { c: string; i: string; o?: string };
const isAuditCursor = (v: unknown): v is AuditCursor =>
  typeof v === 'object' &&
  v !== null &&
  isString((v as AuditCursor).c) &&
  isString((v as AuditCursor).i) &&
  ((v as AuditCursor).o === undefined || isString((v as AuditCursor).o));
const AUDIT_CURSOR = cursorKind('auditEntries', isAuditCursor);

async function auditPage(
  ctx: GraphQLContext,
  args: {
    first?: number | null | undefined;
    after?: string | null | undefined;
    last?: number | null | undefined;
    before?: string | null | undefined;
    filter?:
      | { threadId?: string | null | undefined; action?: string | null | undefined }
      | null
      | undefined;
    orderBy?: { direction: 'asc' | 'desc' } | null | undefined;
  },
) {
  const request = pageRequest(args, AUDIT_CURSOR);
  const order = pageOrder(
    request,
    { field: 'recordedAt', direction: args.orderBy?.direction ?? 'desc' },
    'recordedAt',
  );
  const scoped = {
    tenantId: ctx.auth.tenant,
    threadId: args.filter?.threadId ?? undefined,
    action: args.filter?.action ?? undefined,
  };
  const rows = await ctx.reads.auditEntries({
    ...scoped,
    take: request.size + 1,
    descending: order.readDescending,
    after:
      request.cursor === undefined
        ? undefined
        : { at: new Date(request.cursor.c), id: request.cursor.i },
  });
  const connection = pageConnection(rows, request, (a) => ({
    c: a.recordedAt.toISOString(),
    i: a.id,
    o: order.name,
  }));
  return withCount(connection, () => ctx.reads.countAuditEntries(scoped));
}

builder.queryFields((t) => ({
  auditEntries: t.field({
    type: AuditEntryConnection,
    description:
      "The tenant's audit trail, newest first. Page forward with `first`/`after`, backward with `last`/`before`.",
    args: {
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
      filter: t.arg({ type: AuditFilter }),
      orderBy: t.arg({ type: AuditOrder }),
    },
    complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first ?? args.last) }),
    resolve: (_r, args, ctx) => auditPage(ctx, args),
  }),
}));
