/**
 * Run lists: the connection (with `totalCount`), its order and filter inputs, and the page of
 * runs behind `runs` and `Thread.runs`.
 */
import type { WorkflowStatus } from '../core/run/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { OrderDirectionEnum, RunStatusEnum, WaitingReasonEnum } from './enums.js';
import {
  cursorKind,
  isString,
  pageConnection,
  pageOrder,
  pageRequest,
  resolveCount,
  withCount,
} from './pagination.js';
import { RunRef } from './refs.js';

export const RunConnection = builder.connectionObject(
  {
    type: RunRef,
    name: 'RunConnection',
    edgesNullable: false,
    nodeNullable: false,
    fields: (t) => ({
      totalCount: t.int({
        description: 'How many runs match the filter (all pages), counted only when asked for.',
        resolve: resolveCount,
      }),
    }),
  },
  { name: 'RunEdge' },
);

const RunOrderFieldEnum = builder.enumType('RunOrderField', {
  values: {
    CREATED_AT: { value: 'createdAt', description: 'When the run started.' },
    UPDATED_AT: { value: 'updatedAt', description: 'When its state last changed.' },
  } as const,
});

export const RunOrder = builder.inputType('RunOrder', {
  fields: (t) => ({
    field: t.field({ type: RunOrderFieldEnum, required: true, defaultValue: 'createdAt' }),
    direction: t.field({ type: OrderDirectionEnum, required: true, defaultValue: 'asc' }),
  }),
});

export const RunFilter = builder.inputType('RunFilter', {
  fields: (t) => ({
    threadId: t.id(),
    status: t.field({ type: [RunStatusEnum] }),
    waitingFor: t.field({
      type: [WaitingReasonEnum],
      description: 'Only waiting runs that wait for one of these.',
    }),
    createdAfter: t.field({ type: 'DateTime', description: 'Only runs started after this time.' }),
    createdBefore: t.field({
      type: 'DateTime',
      description: 'Only runs started before this time.',
    }),
    updatedAfter: t.field({
      type: 'DateTime',
      description: 'Only runs whose state last changed after this time.',
    }),
    updatedBefore: t.field({
      type: 'DateTime',
      description: 'Only runs whose state last changed before this time.',
    }),
  }),
});

/** A position in a run list: the order's value, thread and id of the row, and the order. */
type RunCursor = { c: string; t: string; id: string; o?: string };
const isRunCursor = (v: unknown): v is RunCursor =>
  typeof v === 'object' &&
  v !== null &&
  isString((v as RunCursor).c) &&
  isString((v as RunCursor).t) &&
  isString((v as RunCursor).id) &&
  ((v as RunCursor).o === undefined || isString((v as RunCursor).o));
const RUN_CURSOR = cursorKind('runs', isRunCursor);

export async function runPage(
  ctx: GraphQLContext,
  args: {
    first?: number | null | undefined;
    after?: string | null | undefined;
    last?: number | null | undefined;
    before?: string | null | undefined;
    orderBy?: { field: 'createdAt' | 'updatedAt'; direction: 'asc' | 'desc' } | null | undefined;
  },
  filter: {
    threadId?: string | undefined;
    statuses?: readonly WorkflowStatus[] | undefined;
    waitingFor?: readonly string[] | undefined;
    createdAfter?: Date | undefined;
    createdBefore?: Date | undefined;
    updatedAfter?: Date | undefined;
    updatedBefore?: Date | undefined;
  },
) {
  const request = pageRequest(args, RUN_CURSOR);
  const order = pageOrder(request, args.orderBy, 'createdAt');
  const { field } = order;
  const scoped = { tenantId: ctx.auth.tenant, ...filter };
  const rows = await ctx.reads.listRuns({
    ...scoped,
    take: request.size + 1,
    order: { field, descending: order.readDescending },
    after:
      request.cursor === undefined
        ? undefined
        : { at: new Date(request.cursor.c), threadId: request.cursor.t, id: request.cursor.id },
  });
  for (const row of rows) ctx.loaders.run.prime(row, row);
  const connection = pageConnection(rows, request, (r) => ({
    c: r[field].toISOString(),
    t: r.threadId,
    id: r.id,
    o: order.name,
  }));
  return withCount(connection, () => ctx.reads.countRuns(scoped));
}
