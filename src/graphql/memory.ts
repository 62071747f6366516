/** Semantic memory: current semantic heads with their history, and `remember`. */
import { builder } from './builder.js';
import { primeNodes } from './context.js';
import { unwrapResult } from './error-classes.js';
import { RUN_ERRORS } from './errors.js';
import { answerFromCommit, compact, idempotencyKeyField } from './inputs.js';
import { loadNodes } from './node.js';
import { CausalNodeRef, MemoryItemRef, ThreadRef } from './refs.js';
import { loadThread } from './thread.js';

MemoryItemRef.implement({
  description:
    'A memory key: its current version (a semantic node `semantic:<type>:<key>`) and every earlier one.',
  fields: (t) => ({
    type: t.exposeString('type'),
    key: t.exposeString('key'),
    content: t.field({
      type: 'JSON',
      nullable: true,
      resolve: (m) => (m.node.payload as { content?: unknown } | null)?.content ?? null,
    }),
    node: t.field({ type: CausalNodeRef, resolve: (m) => m.node }),
    history: t.field({
      type: [CausalNodeRef],
      description: 'Every version, oldest first (the current one last).',
      resolve: (m, _a, ctx) =>
        m.node.resourceKey === null
          ? [m.node]
          : ctx.loaders.resourceVersions.load({
              threadId: m.node.threadId,
              resourceKey: m.node.resourceKey,
            }),
    }),
    tainted: t.boolean({
      description: 'True when written from tainted data (directly or through an ancestor).',
      resolve: (m) => m.node.taint !== null,
    }),
  }),
});

builder.objectField(ThreadRef, 'memory', (t) =>
  t.field({
    type: [MemoryItemRef],
    description:
      'Current semantic heads, optionally of one type and/or key (normalised like writes).',
    args: { type: t.arg.string(), key: t.arg.string() },
    resolve: async (th, args, ctx) => {
      const items = await ctx.reads.memory(th.id, compact({ type: args.type, key: args.key }));
      primeNodes(
        ctx,
        items.map((i) => i.node),
      );
      return items;
    },
  }),
);

const RememberInput = builder.inputType('RememberInput', {
  fields: (t) => ({
    threadId: t.id({ required: true }),
    type: t.string({ required: true, description: 'Semantic type, e.g. preference.' }),
    key: t.string({ required: true }),
    content: t.field({ type: 'JSON', required: true }),
    runId: t.id({ description: 'The run writing it (provenance).' }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const RememberSuccess = builder
  .objectRef<{ threadId: string; logIndex: number; nodeId: string; type: string; key: string }>(
    'RememberSuccess',
  )
  .implement({
    fields: (t) => ({
      memory: t.field({
        type: MemoryItemRef,
        resolve: async (s, _a, ctx) => {
          const [node] = await loadNodes(ctx, s.threadId, [s.nodeId]);
          return { type: s.type, key: s.key, node: node! };
        },
      }),
      node: t.field({
        type: CausalNodeRef,
        resolve: async (s, _a, ctx) => (await loadNodes(ctx, s.threadId, [s.nodeId]))[0]!,
      }),
      thread: t.field({ type: ThreadRef, resolve: (s, _a, ctx) => loadThread(ctx, s.threadId) }),
      logIndex: t.exposeInt('logIndex'),
    }),
  });

builder.mutationField('remember', (t) =>
  t.field({
    type: RememberSuccess,
    args: { input: t.arg({ type: RememberInput, required: true }) },
    errors: { types: RUN_ERRORS, directResult: true, union: { name: 'RememberResult' } },
    resolve: async (_r, { input }, ctx) => {
      const result = unwrapResult(
        await ctx.engine.remember({
          threadId: input.threadId,
          type: input.type,
          key: input.key,
          content: input.content ?? null,
          ...compact({ runId: input.runId, idempotencyKey: input.idempotencyKey }),
        }),
      );
      return answerFromCommit(
        ctx,
        {
          threadId: result.threadId,
          logIndex: result.logIndex,
          nodeId: result.node.id,
          type: result.memory.type,
          key: result.memory.key,
        },
        result,
      );
    },
  }),
);
