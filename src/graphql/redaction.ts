/**
 * Redaction: the redactNodes mutation, how a redacted node reads (`redaction`), and what strict
 * verification reports of redacted nodes.
 */
import { redactionOf } from '../core/graph/tombstone.js';
import type { VerifyReport } from '../core/log/index.js';
import type { RedactNodesResult } from '../engine/index.js';
import { builder } from './builder.js';
import { unwrapResult } from './error-classes.js';
import { THREAD_ERRORS } from './errors.js';
import { answerFromCommit, compact, idempotencyKeyField } from './inputs.js';
import { CausalNodeRef, ThreadRef } from './refs.js';
import { loadThread, VerifyReportRef } from './thread.js';

const NodeRedactionRef = builder
  .objectRef<{ reason: string; redactedAt: string }>('NodeRedaction')
  .implement({
    description:
      "Why and when a node's payload was withheld (redactNodes). The node keeps its id, kind, " +
      'parents and place in the log.',
    fields: (t) => ({
      reason: t.exposeString('reason'),
      redactedAt: t.field({ type: 'DateTime', resolve: (r) => r.redactedAt }),
    }),
  });

builder.objectField(CausalNodeRef, 'redaction', (t) =>
  t.field({
    type: NodeRedactionRef,
    nullable: true,
    description:
      'Set when the payload was redacted: the payload is then the tombstone ' +
      '`{"weft:redacted": {reason, redactedAt}}`. Null for a node whose payload is as written.',
    resolve: (n) => redactionOf(n.payload) ?? null,
  }),
);

type RedactedNode = NonNullable<VerifyReport['redactedNodes']>[number];

const RedactedNodeRef = builder.objectRef<RedactedNode>('RedactedNodeReport').implement({
  description:
    'A node whose payload was redacted, as strict verification found it: the entry that created ' +
    'it is checked against the digest its redaction recorded, all but the withheld payload.',
  fields: (t) => ({
    nodeId: t.exposeID('nodeId'),
    index: t.exposeInt('index', { description: 'The log index of the entry that created it.' }),
    recorded: t.exposeBoolean('recorded', {
      description:
        "Whether this thread's log records the redaction (and so its digest was checked). False " +
        'for a fork made, from a point before the record, after its source redacted the node.',
    }),
  }),
});

builder.objectField(VerifyReportRef, 'redactedNodes', (t) =>
  t.field({
    type: [RedactedNodeRef],
    description: 'The redacted nodes of the log, in log order (empty when none).',
    resolve: (r) => r.redactedNodes ?? [],
  }),
);

const RedactNodesInput = builder.inputType('RedactNodesInput', {
  fields: (t) => ({
    threadId: t.id({ required: true }),
    nodeIds: t.idList({
      required: true,
      description: 'The nodes whose payloads are withheld (1 to 1,000; repeats count once).',
    }),
    reason: t.string({
      required: true,
      description: 'Why (1 to 1,000 characters): kept in each tombstone and in the log.',
    }),
    idempotencyKey: t.string(idempotencyKeyField),
  }),
});

const RedactNodesSuccess = builder.objectRef<RedactNodesResult>('RedactNodesSuccess').implement({
  description:
    'The payloads are withheld wherever they were stored: in this thread, the thread whose ' +
    'history holds the nodes and every fork sharing them, each live one recording a ' +
    '`nodes_redacted` entry.',
  fields: (t) => ({
    threadId: t.exposeID('threadId'),
    redactedNodeIds: t.idList({ resolve: (r) => r.redactedNodeIds }),
    alreadyRedactedNodeIds: t.idList({
      description: 'Nodes named that were already redacted: nothing was written for them.',
      resolve: (r) => r.alreadyRedactedNodeIds,
    }),
    logLength: t.exposeInt('logLength'),
    stateHash: t.exposeString('stateHash'),
    thread: t.field({ type: ThreadRef, resolve: (r, _a, ctx) => loadThread(ctx, r.threadId) }),
  }),
});

builder.mutationFields((t) => ({
  redactNodes: t.field({
    type: RedactNodesSuccess,
    description:
      'Withholds the payloads of nodes for good (scope write): each becomes a tombstone in the ' +
      'log, the node rows, the search index and every fork sharing it, keeping ids, edges and ' +
      "the log's hash chain; strict verification then reports them in redactedNodes. Nodes " +
      "imported with a thread's first entry cannot be redacted (delete the thread).",
    args: { input: t.arg({ type: RedactNodesInput, required: true }) },
    errors: { types: THREAD_ERRORS, directResult: true, union: { name: 'RedactNodesResult' } },
    resolve: async (_r, { input }, ctx) => {
      const result = await ctx.engine.redactNodes({
        threadId: input.threadId,
        nodeIds: input.nodeIds,
        reason: input.reason,
        actor: ctx.auth.keyId ?? 'open',
        ...compact({ idempotencyKey: input.idempotencyKey }),
      });
      return answerFromCommit(ctx, unwrapResult(result));
    },
  }),
}));
