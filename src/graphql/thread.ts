/** Threads: the type, its settings, state, spend and verification; queries and mutations. */
import type { SemanticNodeType } from '../core/graph/index.js';
import type { JsonValue } from '../core/json.js';
import type { VerifyReport } from '../core/log/index.js';
import { textProblem } from '../core/text.js';
import { type MetadataLeaf, metadataLeaves } from '../core/thread/metadata-filter.js';
import type { ThreadView } from '../reads/index.js';
import { MAX_ANSWER_BYTES, withinAnswerBound } from '../reads/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { OrderDirectionEnum } from './enums.js';
import { badInput, notFound, unwrapResult } from './error-classes.js';
import { THREAD_ERRORS } from './errors.js';
import { answerFromCommit, compact, idempotencyKeyField } from './inputs.js';
import {
  cursorKind,
  isString,
  pageConnection,
  pageOrder,
  pageRequest,
  resolveCount,
  withCount,
} from './pagination.js';
import { SpendRef, ThreadRef } from './refs.js';

/** The thread with this id, or NOT_FOUND. */
export async function loadThread(ctx: GraphQLContext, id: string): Promise<ThreadView> {
  // No stored thread has such an id, and Postgres refuses a NUL even in a lookup.
  const problem = textProblem(id);
  if (problem !== undefined) throw badInput('$.id', problem);
  const thread = await ctx.loaders.thread.load(id);
  if (thread === undefined) throw notFound('Thread', id);
  return thread;
}

const SemanticNodeTypeRef = builder.objectRef<SemanticNodeType>('SemanticNodeType').implement({
  description: 'One semantic node type of the thread vocabulary (e.g. memory, preference).',
  fields: (t) => ({
    name: t.exposeString('name'),
    description: t.exposeString('description'),
  }),
});

export const SemanticNodeTypeInput = builder.inputType('SemanticNodeTypeInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    description: t.string({ required: true, description: '1 to 240 characters.' }),
  }),
});

const ThreadForkRef = builder
  .objectRef<{ threadId: string; upToIndex: number }>('ThreadFork')
  .implement({
    description: 'Where a fork came from: it copied entries [0, upToIndex) of `thread`.',
    fields: (t) => ({
      thread: t.field({ type: ThreadRef, resolve: (f, _a, ctx) => loadThread(ctx, f.threadId) }),
      upToIndex: t.exposeInt('upToIndex'),
    }),
  });

SpendRef.implement({
  description: 'Token and cost totals.',
  fields: (t) => ({
    inputTokens: t.exposeInt('inputTokens'),
    outputTokens: t.exposeInt('outputTokens'),
    totalTokens: t.int({ resolve: (s) => s.inputTokens + s.outputTokens }),
    costUsd: t.exposeFloat('costUsd'),
    calls: t.exposeInt('calls'),
  }),
});

export const VerifyReportRef = builder.objectRef<VerifyReport>('VerifyReport').implement({
  description: 'The result of replaying the stored log and checking every state hash.',
  fields: (t) => ({
    ok: t.exposeBoolean('ok'),
    checkedEntries: t.exposeInt('checkedEntries'),
    firstBadIndex: t.int({ nullable: true, resolve: (r) => r.firstBadIndex ?? null }),
    entryId: t.string({ nullable: true, resolve: (r) => r.entryId ?? null }),
    message: t.string({ nullable: true, resolve: (r) => r.message ?? null }),
  }),
});

ThreadRef.implement({
  description: 'A durable thread: one append-only log, one causal graph, its runs.',
  fields: (t) => ({
    id: t.exposeID('id'),
    createdAt: t.field({ type: 'DateTime', resolve: (th) => th.createdAt }),
    updatedAt: t.field({ type: 'DateTime', resolve: (th) => th.updatedAt }),
    metadata: t.field({ type: 'JSON', nullable: true, resolve: (th) => th.metadata }),
    nodeTypes: t.field({ type: [SemanticNodeTypeRef], resolve: (th) => th.nodeTypes }),
    allowDynamicNodeTypes: t.exposeBoolean('allowDynamicNodeTypes'),
    logLength: t.int({
      description: 'Number of log entries: the next expectedIndex.',
      resolve: (th) => th.logLength,
    }),
    stateHash: t.string({
      description: 'verification.stateHash of the last entry.',
      resolve: (th) => th.stateHash,
    }),
    forkedFrom: t.field({ type: ThreadForkRef, nullable: true, resolve: (th) => th.forkedFrom }),
    expiresAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'When retention deletes the thread (at the first sweep after it; as deleteThread does, ' +
        'with an audit entry); null: never. Set at creation or with setThreadExpiry.',
      // A write's own view of the thread does not know it (it is no part of the log): read it.
      resolve: async (th, _a, ctx) =>
        th.expiresAt !== undefined
          ? th.expiresAt
          : ((await ctx.reads.threads([th.id]))[0]?.expiresAt ?? null),
    }),
    saltedPayloads: t.boolean({
      description:
        'Whether each new node with an object payload gets a "weft:salt" field (createThread ' +
        'saltPayloads, or forked from such a thread), so a redacted payload cannot be guessed ' +
        'from its id.',
      resolve: (th) => th.saltedPayloads,
    }),
    state: t.field({
      type: 'JSON',
      description: `The AgentState v1 export; with atIndex, as of that log length (time travel). One JSON value: at most ${MAX_ANSWER_BYTES} bytes of it, else ANSWER_TOO_LARGE (page the nodes with nodes and frontierNodes).`,
      args: { atIndex: t.arg.int() },
      resolve: async (th, { atIndex }, ctx) => {
        const at = unwrapResult(await ctx.reads.stateAt(th.id, atIndex ?? undefined));
        const paged =
          atIndex == null
            ? 'page its nodes with nodes(first: 1000, after: endCursor) and its heads with frontierNodes(first: 1000)'
            : `page its nodes with nodes(first: 1000, after: endCursor): those of the state at ${atIndex} have a logIndex below ${atIndex}`;
        return unwrapResult(await withinAnswerBound(at.agentState, 'state', paged));
      },
    }),
    spend: t.field({
      type: SpendRef,
      description: 'Token usage and cost over the whole thread.',
      // From the thread row; folded only for a row that does not know it (see ThreadView.spend).
      resolve: async (th, _a, ctx) => th.spend ?? unwrapResult(await ctx.reads.spend(th.id)),
    }),
    verify: t.field({
      type: VerifyReportRef,
      description:
        'Replays the log and checks every hash (strict, the default: every entry signed).',
      args: { strict: t.arg.boolean() },
      resolve: async (th, { strict }, ctx) =>
        unwrapResult(await ctx.reads.verify(th.id, strict ?? true)),
    }),
  }),
});

const ThreadConnection = builder.connectionObject(
  {
    type: ThreadRef,
    name: 'ThreadConnection',
    edgesNullable: false,
    nodeNullable: false,
    fields: (t) => ({
      totalCount: t.int({
        description: 'How many threads match the filter (all pages), counted only when asked for.',
        resolve: resolveCount,
      }),
    }),
  },
  { name: 'ThreadEdge' },
);

const ThreadFilter = builder.inputType('ThreadFilter', {
  fields: (t) => ({
    forkedFrom: t.id({ description: 'Only forks of this thread.' }),
    createdAfter: t.field({ type: 'DateTime' }),
    createdBefore: t.field({ type: 'DateTime' }),
    updatedAfter: t.field({
      type: 'DateTime',
      description: 'Only threads with an entry recorded after this time.',
    }),
    hasPendingApproval: t.boolean({
      description:
        'Only threads with (true) or without (false) a run waiting for a human (an approval or other input).',
    }),
    metadata: t.field({
      type: 'JSON',
      description:
        'Only threads whose metadata contains this object: every key present with an equal value, nested objects matched the same way, any other value (arrays too) equal as a whole. `{ team: "ops" }` matches `{ team: "ops", tier: 1 }`. At most 32 values, 8 levels. Unavailable with encryption at rest (metadata is sealed).',
    }),
  }),
});

const ThreadOrderFieldEnum = builder.enumType('ThreadOrderField', {
  values: {
    CREATED_AT: { value: 'createdAt', description: 'When the thread was created.' },
    UPDATED_AT: { value: 'updatedAt', description: 'When its last entry was recorded.' },
  } as const,
});

const ThreadOrder = builder.inputType('ThreadOrder', {
  fields: (t) => ({
    field: t.field({ type: ThreadOrderFieldEnum, required: true, defaultValue: 'createdAt' }),
    direction: t.field({ type: OrderDirectionEnum, required: true, defaultValue: 'asc' }),
  }),
});

/** A position in a thread list: the order's value and the id of the row, and the order itself. */
type ThreadCursor = { c: string; id: string; o?: string };
const isThreadCursor = (v: unknown): v is ThreadCursor =>
  typeof v === 'object' &&
  v !== null &&
  isString((v as ThreadCursor).c) &&
  isString((v as ThreadCursor).id) &&
  ((v as ThreadCursor).o === undefined || isString((v as ThreadCursor).o));
const THREAD_CURSOR = cursorKind('threads', isThreadCursor);

/** The leaves of a metadata filter; VALIDATION_FAILED when it is malformed or cannot be used. */
function metadataFilter(ctx: GraphQLContext, value: unknown): MetadataLeaf[] | undefined {
  if (value === undefined || value === null) return undefined;
  const leaves = unwrapResult(metadataLeaves(value, 'filter.metadata'));
  if (leaves.length > 0 && ctx.reads.encryptedAtRest) {
    throw badInput(
      'filter.metadata',
      'thread metadata is encrypted at rest on this server, so it cannot be filtered by',
    );
  }
  return leaves;
}

builder.queryFields((t) => ({
  thread: t.field({
    type: ThreadRef,
    nullable: true,
    description: 'A thread by id; NOT_FOUND when there is none.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, { id }, ctx) => loadThread(ctx, id),
  }),
  threads: t.field({
    type: ThreadConnection,
    description:
      'Threads, oldest first unless `orderBy` says otherwise (`{ field: UPDATED_AT, direction: DESC }`: newest activity first). Page forward with `first`/`after`, backward with `last`/`before`.',
    args: {
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
      filter: t.arg({ type: ThreadFilter }),
      orderBy: t.arg({ type: ThreadOrder }),
    },
    complexity: (args) => ({
      field: 1,
      multiplier: pageSizeHint(args.first ?? args.last),
    }),
    resolve: async (_r, args, ctx) => {
      const request = pageRequest(args, THREAD_CURSOR);
      const order = pageOrder(request, args.orderBy, 'createdAt');
      const { field } = order;
      const filter = {
        tenantId: ctx.auth.tenant,
        forkedFromId: args.filter?.forkedFrom ?? undefined,
        createdAfter: args.filter?.createdAfter ?? undefined,
        createdBefore: args.filter?.createdBefore ?? undefined,
        updatedAfter: args.filter?.updatedAfter ?? undefined,
        hasPendingApproval: args.filter?.hasPendingApproval ?? undefined,
        metadata: metadataFilter(ctx, args.filter?.metadata),
      };
      const rows = await ctx.reads.listThreads({
        ...filter,
        take: request.size + 1,
        order: { field, descending: order.readDescending },
        after:
          request.cursor === undefined
            ? undefined
            : { at: new Date(request.cursor.c), id: request.cursor.id },
      });
      for (const row of rows) ctx.loaders.thread.prime(row.id, row);
      const connection = pageConnection(rows, request, (r) => ({
        c: r[field].toISOString(),
        id: r.id,
        o: order.name,
      }));
      return withCount(connection, () => ctx.reads.countThreads(filter));
    },
  }),
}));

/** The multiplier of a connection field for the complexity limit. */
export const pageSizeHint = (first: unknown): number =>
  typeof first === 'number' && first >= 0 ? Math.min(first, 1000) : 100;

// Mutations ---------------------------------------------------------------------------------

const expiresAtField = {
  type: 'DateTime',
  description:
    'When retention deletes the thread (a time in the past: at the next sweep); null: never. ' +
    "Omitted: the server's default (WEFT_RETENTION_DAYS after creation), if it has one.",
} as const;

const CreateThreadInput = builder.inputType('CreateThreadInput', {
  fields: (t) => ({
    threadId: t.id({ description: 'Choose the id (default: a generated one).' }),
    metadata: t.field({ type: 'JSON' }),
    nodeTypes: t.field({ type: [SemanticNodeTypeInput] }),
    allowDynamicNodeTypes: t.boolean(),
    expiresAt: t.field(expiresAtField),
    saltPayloads: t.boolean({
      description:
        'Give the thread a secret and add a "weft:salt" field (an HMAC of the node\'s content ' +
        'under it) to every object payload appended to it, so a redacted payload cannot be ' +
        'guessed from its id. Payloads must then be objects, and clients cannot compute ids ' +
        'from their own content. Default false; cannot be changed later.',
    }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const ImportStateInput = builder.inputType('ImportStateInput', {
  fields: (t) => ({
    threadId: t.id({ description: 'Choose the id (default: a generated one).' }),
    state: t.field({ type: 'JSON', required: true, description: 'An AgentState v1 document.' }),
    metadata: t.field({ type: 'JSON' }),
    nodeTypes: t.field({ type: [SemanticNodeTypeInput] }),
    allowDynamicNodeTypes: t.boolean(),
    expiresAt: t.field(expiresAtField),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const ForkThreadInput = builder.inputType('ForkThreadInput', {
  fields: (t) => ({
    threadId: t.id({ required: true }),
    upToIndex: t.int({ description: 'Copy entries [0, upToIndex); default the whole log.' }),
    newThreadId: t.id({ description: 'Choose the fork id (default: a generated one).' }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const DeleteThreadInput = builder.inputType('DeleteThreadInput', {
  fields: (t) => ({
    threadId: t.id({ required: true }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const DeleteThreadSuccess = builder
  .objectRef<{ threadId: string; logLength: number; stateHash: string }>('DeleteThreadSuccess')
  .implement({
    description:
      'The thread is gone; what its forks read of its history stays until the last of them is ' +
      'deleted. The deletion is in the tenant audit trail with this final state hash.',
    fields: (t) => ({
      threadId: t.exposeID('threadId'),
      logLength: t.exposeInt('logLength'),
      stateHash: t.exposeString('stateHash'),
    }),
  });

const SetThreadExpiryInput = builder.inputType('SetThreadExpiryInput', {
  fields: (t) => ({
    threadId: t.id({ required: true }),
    expiresAt: t.field({
      type: 'DateTime',
      required: false,
      description:
        'When retention deletes the thread (a time in the past: at the next sweep); null clears ' +
        'it (never). Required: pass null explicitly to clear.',
    }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const SetThreadExpirySuccess = builder
  .objectRef<{ threadId: string; expiresAt: string | null }>('SetThreadExpirySuccess')
  .implement({
    description: "The expiry now set (not a log entry: the thread's log and state hash stay).",
    fields: (t) => ({
      threadId: t.exposeID('threadId'),
      expiresAt: t.field({ type: 'DateTime', nullable: true, resolve: (s) => s.expiresAt }),
      thread: t.field({ type: ThreadRef, resolve: (s, _a, ctx) => loadThread(ctx, s.threadId) }),
    }),
  });

/** An input's expiry for the engine: omitted stays omitted, null stays null. */
const expiryOf = (value: Date | null | undefined) =>
  value === undefined ? {} : { expiresAt: value === null ? null : value.toISOString() };

const ThreadSuccess = (name: string) =>
  builder.objectRef<{ threadId: string; logIndex: number }>(name).implement({
    fields: (t) => ({
      thread: t.field({ type: ThreadRef, resolve: (s, _a, ctx) => loadThread(ctx, s.threadId) }),
      logIndex: t.exposeInt('logIndex'),
    }),
  });

const nodeTypesOf = (
  list: ReadonlyArray<{ name: string; description?: string | null | undefined }> | null | undefined,
): SemanticNodeType[] | undefined =>
  list?.map((n) => ({ name: n.name, description: n.description ?? '' })) ?? undefined;

const settingsOf = (input: {
  metadata?: JsonValue | null | undefined;
  nodeTypes?:
    | ReadonlyArray<{ name: string; description?: string | null | undefined }>
    | null
    | undefined;
  allowDynamicNodeTypes?: boolean | null | undefined;
}) =>
  compact({
    metadata: input.metadata,
    nodeTypes: nodeTypesOf(input.nodeTypes),
    allowDynamicNodeTypes: input.allowDynamicNodeTypes,
  });

const CreateThreadSuccess = ThreadSuccess('CreateThreadSuccess');
const ImportStateSuccess = ThreadSuccess('ImportStateSuccess');
const ForkThreadSuccess = ThreadSuccess('ForkThreadSuccess');

builder.mutationFields((t) => ({
  createThread: t.field({
    type: CreateThreadSuccess,
    args: { input: t.arg({ type: CreateThreadInput, required: true }) },
    errors: { types: THREAD_ERRORS, directResult: true, union: { name: 'CreateThreadResult' } },
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.createThread({
        ...settingsOf(input),
        ...expiryOf(input.expiresAt),
        ...compact({
          threadId: input.threadId,
          idempotencyKey: input.idempotencyKey,
          saltPayloads: input.saltPayloads,
        }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  importState: t.field({
    type: ImportStateSuccess,
    args: { input: t.arg({ type: ImportStateInput, required: true }) },
    errors: { types: THREAD_ERRORS, directResult: true, union: { name: 'ImportStateResult' } },
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.importState({
        state: input.state,
        ...settingsOf(input),
        ...expiryOf(input.expiresAt),
        ...compact({ threadId: input.threadId, idempotencyKey: input.idempotencyKey }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  deleteThread: t.field({
    type: DeleteThreadSuccess,
    args: { input: t.arg({ type: DeleteThreadInput, required: true }) },
    errors: { types: THREAD_ERRORS, directResult: true, union: { name: 'DeleteThreadResult' } },
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.deleteThread({
        threadId: input.threadId,
        actor: ctx.auth.keyId ?? 'open',
        ...compact({ idempotencyKey: input.idempotencyKey }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  setThreadExpiry: t.field({
    type: SetThreadExpirySuccess,
    description:
      'Sets or clears when retention deletes a thread. Scope write; not a log entry. A missing ' +
      'expiresAt is refused: pass null to clear.',
    args: { input: t.arg({ type: SetThreadExpiryInput, required: true }) },
    errors: { types: THREAD_ERRORS, directResult: true, union: { name: 'SetThreadExpiryResult' } },
    resolve: async (_r, { input }, ctx) => {
      if (input.expiresAt === undefined) {
        throw badInput('$.expiresAt', 'is required: a date-time, or null to clear the expiry');
      }
      const result = await ctx.engine.setThreadExpiry({
        threadId: input.threadId,
        expiresAt: input.expiresAt === null ? null : input.expiresAt.toISOString(),
        ...compact({ idempotencyKey: input.idempotencyKey }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
  forkThread: t.field({
    type: ForkThreadSuccess,
    args: { input: t.arg({ type: ForkThreadInput, required: true }) },
    errors: { types: THREAD_ERRORS, directResult: true, union: { name: 'ForkThreadResult' } },
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.forkThread({
        threadId: input.threadId,
        ...compact({
          upToIndex: input.upToIndex,
          newThreadId: input.newThreadId,
          idempotencyKey: input.idempotencyKey,
        }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
}));
