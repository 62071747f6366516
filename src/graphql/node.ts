/** Causal nodes: the type and its graph links, the thread's node lists, and appendNodes. */
import { z } from 'zod';
import { DEFAULT_PREVIEW_LENGTH, MAX_PREVIEW_LENGTH, payloadPreview } from '../core/graph/index.js';
import type { NodeInput as EngineNodeInput } from '../core/thread/index.js';
import type { NodeView } from '../reads/index.js';
import { builder } from './builder.js';
import { type GraphQLContext, primeNodes } from './context.js';
import { NodeKindEnum, OrderDirectionEnum } from './enums.js';
import { badInput, notFound, unwrapResult } from './error-classes.js';
import { RUN_ERRORS } from './errors.js';
import { answerFromCommit, compact, idempotencyKeyField } from './inputs.js';
import {
  cursorKind,
  inTurns,
  isInt,
  MAX_PAGE_SIZE,
  pageConnection,
  pageRequest,
  positionWindow,
  resolveCount,
  windowConnection,
  withCount,
} from './pagination.js';
import { CausalNodeRef, ThreadRef } from './refs.js';
import { loadThread, pageSizeHint } from './thread.js';

/** A position in a thread's node list: a node's sequence. */
const NODE_CURSOR = cursorKind('nodes', isInt);
const CHILD_CURSOR = cursorKind('children', isInt);
const FRONTIER_CURSOR = cursorKind('frontier', isInt);

/** Most nodes one appendNodes call takes. */
export const MAX_NODES_PER_APPEND = 1000;

/** Nodes by id in one thread, in the given order; ids that are not there are skipped. */
export async function loadNodes(
  ctx: GraphQLContext,
  threadId: string,
  ids: readonly string[],
): Promise<NodeView[]> {
  const found = await ctx.loaders.node.loadMany(ids.map((id) => ({ threadId, id })));
  return found.flatMap((n) => {
    if (n instanceof Error) throw n;
    return n === undefined ? [] : [n];
  });
}

async function loadNode(ctx: GraphQLContext, threadId: string, id: string): Promise<NodeView> {
  const node = await ctx.loaders.node.load({ threadId, id });
  if (node === undefined) throw notFound('CausalNode', id);
  return node;
}

const TaintRef = builder.objectRef<NonNullable<NodeView['taint']>>('Taint').implement({
  description:
    'Provenance of untrusted data: set on a node (e.g. external tool output) and inherited by every descendant.',
  fields: (t) => ({
    source: t.exposeString('source'),
    toolName: t.string({ nullable: true, resolve: (x) => x.toolName ?? null }),
    serverId: t.string({ nullable: true, resolve: (x) => x.serverId ?? null }),
    agentId: t.string({ nullable: true, resolve: (x) => x.agentId ?? null }),
    derived: t.boolean({
      description: 'True when inherited from tainted ancestors (listed in derivedFrom).',
      resolve: (x) => x.derivedFrom !== undefined,
    }),
    derivedFrom: t.idList({ resolve: (x) => x.derivedFrom ?? [] }),
  }),
});

/**
 * A list field answers at most a page of nodes (served a slice per turn of the event loop by
 * inTurns); a longer list is refused before its nodes are read, naming the field that pages it.
 */
function checkListLength(total: number, field: string, paged: string): void {
  if (total <= MAX_PAGE_SIZE) return;
  throw badInput(
    field,
    `has ${total} nodes, more than the ${MAX_PAGE_SIZE} a list answers: page them with ${paged}(first: ${MAX_PAGE_SIZE}, after: endCursor)`,
  );
}

const asIs = (n: NodeView) => n;

CausalNodeRef.implement({
  description:
    'A content-addressed node of the causal graph: its id is "cw_" and 24 hex digits of the SHA-256 of its canonical kind, parents, payload and resource key.',
  fields: (t) => {
    const walk = (direction: 'ancestors' | 'descendants') =>
      t.field({
        type: [CausalNodeRef],
        description: `The node's ${direction}, nearest first (depth default 16, at most 256).`,
        args: {
          depth: t.arg.int({ validate: z.number().int().min(0).max(256) }),
          kinds: t.arg({ type: [NodeKindEnum] }),
        },
        resolve: async (n, { depth, kinds }, ctx) => {
          const ids = await ctx.loaders.walk.load({
            threadId: n.threadId,
            id: n.id,
            direction,
            depth: depth ?? undefined,
            kinds: kinds ?? undefined,
          });
          return loadNodes(ctx, n.threadId, ids);
        },
      });
    const version = (step: -1 | 1) =>
      t.field({
        type: CausalNodeRef,
        nullable: true,
        resolve: async (n, _a, ctx) => {
          if (n.resourceKey === null) return null;
          const versions = await ctx.loaders.resourceVersions.load({
            threadId: n.threadId,
            resourceKey: n.resourceKey,
          });
          const at = versions.findIndex((v) => v.id === n.id);
          return at < 0 ? null : (versions[at + step] ?? null);
        },
      });
    return {
      id: t.exposeID('id'),
      threadId: t.exposeID('threadId'),
      kind: t.field({ type: NodeKindEnum, resolve: (n) => n.kind }),
      parentIds: t.idList({ resolve: (n) => n.parentIds }),
      parents: t.field({
        type: [CausalNodeRef],
        resolve: (n, _a, ctx) => loadNodes(ctx, n.threadId, n.parentIds),
      }),
      children: t.field({
        type: [CausalNodeRef],
        description: `The node's children, oldest first: at most ${MAX_PAGE_SIZE}, else BAD_USER_INPUT (page them with childNodes).`,
        resolve: async (n, _a, ctx) => {
          const list = await ctx.loaders.children.load({ threadId: n.threadId, id: n.id });
          checkListLength(list.total, 'children', 'childNodes');
          return inTurns(list.nodes, asIs);
        },
      }),
      childNodes: t.field({
        type: CausalNodeConnection,
        description:
          "The node's children, oldest first, in pages (`first`/`after`, or `last`/`before`).",
        args: {
          first: t.arg.int(),
          after: t.arg.string(),
          last: t.arg.int(),
          before: t.arg.string(),
        },
        complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first ?? args.last) }),
        resolve: async (n, args, ctx) => {
          const request = pageRequest(args, CHILD_CURSOR);
          const list = await ctx.reads.childPage({
            threadId: n.threadId,
            id: n.id,
            cursor: request.cursor,
            backward: request.backward,
            take: request.size + 1,
          });
          const connection = pageConnection(
            primeNodes(ctx, list.nodes),
            request,
            (c) => c.sequence,
          );
          return withCount(connection, () => Promise.resolve(list.total));
        },
      }),
      payload: t.field({ type: 'JSON', nullable: true, resolve: (n) => n.payload }),
      preview: t.string({
        nullable: true,
        description: `The payload's text in one line, for a label: a message's content, a goal, a tool call as name(args), else its strings in order, identifiers left out; at most maxLength characters (default ${DEFAULT_PREVIEW_LENGTH}, at most ${MAX_PREVIEW_LENGTH}), an ellipsis marking a cut. Null when there is no text or the node was redacted.`,
        args: {
          maxLength: t.arg.int({ validate: z.number().int().min(1).max(MAX_PREVIEW_LENGTH) }),
        },
        resolve: (n, { maxLength }) =>
          payloadPreview(n.payload, maxLength ?? DEFAULT_PREVIEW_LENGTH),
      }),
      createdAt: t.field({ type: 'DateTime', resolve: (n) => n.createdAt }),
      sequence: t.exposeInt('sequence'),
      resourceKey: t.string({ nullable: true, resolve: (n) => n.resourceKey }),
      isFrontier: t.exposeBoolean('isFrontier'),
      isCurrent: t.boolean({
        description: 'False once a newer version of the same resource key exists.',
        resolve: (n) => n.isCurrent,
      }),
      supersedes: version(-1),
      supersededBy: version(1),
      ancestors: walk('ancestors'),
      descendants: walk('descendants'),
      taint: t.field({ type: TaintRef, nullable: true, resolve: (n) => n.taint }),
      usage: t.field({ type: 'JSON', nullable: true, resolve: (n) => n.usage }),
      runId: t.id({ nullable: true, resolve: (n) => n.runId }),
      logIndex: t.int({
        description: 'Index of the log entry that created the node.',
        resolve: (n) => n.logIndex,
      }),
    };
  },
});

const CausalNodeConnection = builder.connectionObject(
  {
    type: CausalNodeRef,
    name: 'CausalNodeConnection',
    edgesNullable: false,
    nodeNullable: false,
    fields: (t) => ({
      totalCount: t.int({
        description: 'How many nodes match the filter (all pages), counted only when asked for.',
        resolve: resolveCount,
      }),
    }),
  },
  { name: 'CausalNodeEdge' },
);

builder.objectFields(ThreadRef, (t) => ({
  frontier: t.field({
    type: [CausalNodeRef],
    description: `The current heads: what a new node gets as parents by default. At most ${MAX_PAGE_SIZE}, else BAD_USER_INPUT (page them with frontierNodes).`,
    resolve: async (th, _a, ctx) => {
      checkListLength(th.frontier.length, 'frontier', 'frontierNodes');
      return inTurns(await loadNodes(ctx, th.id, th.frontier), asIs);
    },
  }),
  frontierNodes: t.field({
    type: CausalNodeConnection,
    description:
      'The current heads in frontier order (the newest head last), in pages (`first`/`after`, or `last`/`before`). A cursor is a position: when the frontier moves between two pages, a head may be skipped or shown twice.',
    args: {
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
    },
    complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first ?? args.last) }),
    resolve: async (th, args, ctx) => {
      const request = pageRequest(args, FRONTIER_CURSOR);
      const window = positionWindow(request, false, 0, th.frontier.length);
      const ids = th.frontier.slice(window.from, window.to);
      const position = new Map(ids.map((id, i) => [id, window.from + i] as const));
      const connection = windowConnection(
        FRONTIER_CURSOR,
        await loadNodes(ctx, th.id, ids),
        (n) => position.get(n.id)!,
        window,
      );
      return withCount(connection, () => Promise.resolve(th.frontier.length));
    },
  }),
  nodes: t.field({
    type: CausalNodeConnection,
    description:
      'Nodes in sequence order, oldest first (`direction: DESC`: newest first). Page forward with `first`/`after`, backward with `last`/`before`.',
    args: {
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
      direction: t.arg({ type: OrderDirectionEnum }),
      kinds: t.arg({ type: [NodeKindEnum] }),
      afterSequence: t.arg.int({ description: 'Only nodes with a greater sequence.' }),
      tainted: t.arg.boolean({
        description: 'Only tainted nodes (true) or untainted ones (false).',
      }),
      runId: t.arg.id({ description: 'Only nodes written by this run.' }),
      resourceKey: t.arg.string({ description: 'Only the versions of this resource key.' }),
    },
    complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first ?? args.last) }),
    resolve: async (th, args, ctx) => {
      const request = pageRequest(args, NODE_CURSOR);
      const descending = args.direction === 'desc';
      const filter = {
        threadId: th.id,
        ...compact({
          afterSequence: args.afterSequence,
          kinds: args.kinds,
          tainted: args.tainted,
          runId: args.runId,
          resourceKey: args.resourceKey,
        }),
      };
      const rows = await ctx.reads.nodePage({
        ...filter,
        take: request.size + 1,
        // Backward pages are read in the opposite order, from the cursor on.
        descending: descending !== request.backward,
        ...(request.cursor === undefined ? {} : { cursor: request.cursor }),
      });
      const connection = pageConnection(primeNodes(ctx, rows), request, (n) => n.sequence);
      // A page that starts after a known sequence has nodes before it.
      if (!request.backward && request.cursor === undefined && (args.afterSequence ?? 0) > 0) {
        connection.pageInfo.hasPreviousPage = true;
      }
      // Unfiltered, the count is the thread row's: no scan of a long thread's nodes.
      const unfiltered = Object.keys(filter).length === 1;
      return withCount(connection, () =>
        unfiltered ? Promise.resolve(th.nodeCount) : ctx.reads.countNodes(filter),
      );
    },
  }),
  nodeCount: t.int({ resolve: (th) => th.nodeCount }),
  causalNode: t.field({
    type: CausalNodeRef,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (th, { id }, ctx) => loadNode(ctx, th.id, id),
  }),
  resources: t.field({
    type: [CausalNodeRef],
    description: 'The current head of every resource key (semantic memory included).',
    resolve: async (th, _a, ctx) => primeNodes(ctx, await ctx.reads.resources(th.id)),
  }),
}));

builder.queryField('causalNode', (t) =>
  t.field({
    type: CausalNodeRef,
    nullable: true,
    description: 'A node of a thread; NOT_FOUND when the thread or the node does not exist.',
    args: { threadId: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
    resolve: async (_r, { threadId, id }, ctx) => {
      await loadThread(ctx, threadId);
      return loadNode(ctx, threadId, id);
    },
  }),
);

// appendNodes -------------------------------------------------------------------------------

const TaintInput = builder.inputType('TaintInput', {
  fields: (t) => ({
    source: t.string({ required: true, description: 'e.g. mcp_tool, retrieval, a2a.' }),
    toolName: t.string(),
    serverId: t.string(),
    agentId: t.string(),
  }),
});

const UsageInput = builder.inputType('UsageInput', {
  fields: (t) => ({
    model: t.string({ required: true }),
    inputTokens: t.int({ required: true, validate: z.number().int().min(0) }),
    outputTokens: t.int({ required: true, validate: z.number().int().min(0) }),
    costUsd: t.float({ validate: z.number().min(0) }),
  }),
});

const NodeInput = builder.inputType('NodeInput', {
  fields: (t) => ({
    kind: t.field({ type: NodeKindEnum, required: true }),
    payload: t.field({ type: 'JSON', required: true }),
    parents: t.idList({ description: 'Default: the whole frontier.' }),
    resourceKey: t.string(),
    advance: t.boolean({ description: 'Move the frontier to the new node (default true).' }),
    runId: t.id(),
    taint: t.field({ type: TaintInput }),
    usage: t.field({ type: UsageInput }),
  }),
});

const AppendNodesInput = builder.inputType('AppendNodesInput', {
  fields: (t) => ({
    threadId: t.id({ required: true }),
    expectedIndex: t.int({
      description: 'The log length the write expects; a stale one is a ConflictError.',
      validate: z.number().int().min(0),
    }),
    nodes: t.field({
      type: [NodeInput],
      required: true,
      validate: z.array(z.unknown()).min(1).max(MAX_NODES_PER_APPEND),
    }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const AppendNodesSuccess = builder
  .objectRef<{ threadId: string; logIndex: number; nodeIds: string[] }>('AppendNodesSuccess')
  .implement({
    fields: (t) => ({
      thread: t.field({ type: ThreadRef, resolve: (s, _a, ctx) => loadThread(ctx, s.threadId) }),
      nodes: t.field({
        type: [CausalNodeRef],
        description: 'One per input node, in order (an identical existing node is returned as is).',
        resolve: (s, _a, ctx) => loadNodes(ctx, s.threadId, s.nodeIds),
      }),
      logIndex: t.exposeInt('logIndex'),
    }),
  });

type NodeInputShape = typeof NodeInput.$inferInput;

function toEngineNode(n: NodeInputShape): EngineNodeInput {
  return {
    kind: n.kind,
    payload: n.payload as EngineNodeInput['payload'],
    ...compact({
      parents: n.parents,
      resourceKey: n.resourceKey,
      advance: n.advance,
      runId: n.runId,
      taint:
        n.taint === null || n.taint === undefined
          ? undefined
          : (compact(n.taint) as EngineNodeInput['taint']),
      usage:
        n.usage === null || n.usage === undefined
          ? undefined
          : (compact(n.usage) as EngineNodeInput['usage']),
    }),
  };
}

builder.mutationField('appendNodes', (t) =>
  t.field({
    type: AppendNodesSuccess,
    args: { input: t.arg({ type: AppendNodesInput, required: true }) },
    errors: { types: RUN_ERRORS, directResult: true, union: { name: 'AppendNodesResult' } },
    resolve: async (_r, { input }, ctx) => {
      const result = unwrapResult(
        await ctx.engine.appendNodes({
          threadId: input.threadId,
          nodes: input.nodes.map(toEngineNode),
          ...compact({ expectedIndex: input.expectedIndex, idempotencyKey: input.idempotencyKey }),
        }),
      );
      return answerFromCommit(
        ctx,
        {
          threadId: result.threadId,
          logIndex: result.logIndex,
          nodeIds: result.nodes.map((n) => n.id),
        },
        result,
      );
    },
  }),
);
