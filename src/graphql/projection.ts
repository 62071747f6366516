/**
 * `Thread.projection`: the bounded prompt view of a thread's causal graph
 * for one model call, with why each node is in it and which candidates were left out. The
 * compiler is src/core/projection; the read is `Reads.projection` (src/reads/reads.ts).
 */
import {
  type OmittedNode,
  type ProjectionBudget,
  type ProjectionLayers,
  SELECTION_REASONS,
  type SelectedNode,
  TOKENIZER_NAMES,
} from '../core/projection/index.js';
import type { ProjectionView } from '../reads/index.js';
import { builder } from './builder.js';
import { ProjectionOverflowError, unwrapResult, ValidationError } from './error-classes.js';
import { loadNodes } from './node.js';
import { CausalNodeRef, ThreadRef } from './refs.js';

const OMISSION_REASONS = ['superseded', 'duplicate', 'trimmed', 'not_selected'] as const;

const valuesOf = <T extends string>(values: readonly T[]) =>
  Object.fromEntries(values.map((v) => [v.toUpperCase(), { value: v }])) as Record<
    Uppercase<T>,
    { value: T }
  >;

const TokenizerEnum = builder.enumType('Tokenizer', {
  description:
    'How prompt tokens are counted: CHARS = ceil(characters / 4) (the default), O200K (GPT-4o class), CL100K (GPT-4 / 3.5).',
  values: valuesOf(TOKENIZER_NAMES),
});

const SelectionReasonEnum = builder.enumType('ProjectionReason', {
  description:
    'Why a node is in the view. LATEST_SYSTEM, LATEST_GOAL, FRONTIER, CURRENT_RESOURCE and RECENT make it mandatory (never trimmed).',
  values: valuesOf(SELECTION_REASONS),
});

const OmissionReasonEnum = builder.enumType('OmissionReason', {
  description:
    'Why a node is not in the view: SUPERSEDED (a newer version of its resource exists), DUPLICATE (a newer equivalent call, read or result exists), TRIMMED (selected, then removed to fit the token target), NOT_SELECTED (ranked below the maxNodes cut).',
  values: valuesOf(OMISSION_REASONS),
});

const ProjectionInputRef = builder.inputType('ProjectionInput', {
  fields: (t) => ({
    query: t.string({
      description: 'Text the view should be relevant to; matching nodes are kept (≤ 10,000 chars).',
    }),
    projectionTargetTokens: t.int({
      description: 'The size aimed for (default 16,000, clamped to maxPromptTokens).',
    }),
    maxPromptTokens: t.int({
      description: 'The hard ceiling (default 64,000): ProjectionOverflowError rather than more.',
    }),
    maxNodes: t.int({
      description:
        'The most nodes in FOCUS, 1 to 1,000 (default 48; mandatory ones may exceed it).',
    }),
    tokenizer: t.field({ type: TokenizerEnum, description: 'Default CHARS.' }),
  }),
});

type Threaded<T> = T & { threadId: string };

const LayersRef = builder.objectRef<ProjectionLayers>('ProjectionLayers').implement({
  description: "The text inside each layer's tags of the prompt.",
  fields: (t) => ({
    bigBrain: t.exposeString('bigBrain'),
    peripheral: t.exposeString('peripheral'),
    focus: t.exposeString('focus'),
    timeline: t.exposeString('timeline'),
  }),
});

const BudgetRef = builder.objectRef<ProjectionBudget>('ProjectionBudget').implement({
  description: 'The limits applied and what fitting to them took.',
  fields: (t) => ({
    projectionTargetTokens: t.exposeInt('projectionTargetTokens'),
    maxPromptTokens: t.exposeInt('maxPromptTokens'),
    maxNodes: t.exposeInt('maxNodes'),
    requiredTokens: t.exposeInt('requiredTokens', {
      description: 'Tokens of the smallest view possible (the mandatory part, fully shrunk).',
    }),
    shrinkLevel: t.exposeInt('shrinkLevel', {
      description: '0 = payloads in full … 4 = most shrunk.',
    }),
    trimmed: t.exposeInt('trimmed', {
      description: 'Selected nodes removed to reach the target.',
    }),
  }),
});

const SelectionRef = builder.objectRef<Threaded<SelectedNode>>('ProjectionSelection').implement({
  description: 'A node of the view and why it is there.',
  fields: (t) => ({
    nodeId: t.exposeID('id'),
    node: t.field({
      type: CausalNodeRef,
      resolve: async (s, _a, ctx) => (await loadNodes(ctx, s.threadId, [s.id]))[0]!,
    }),
    reasons: t.field({ type: [SelectionReasonEnum], resolve: (s) => s.reasons }),
    mandatory: t.exposeBoolean('mandatory'),
    score: t.exposeFloat('score', { description: 'Relevance in [0, 1], 6 decimals.' }),
  }),
});

const OmissionRef = builder.objectRef<Threaded<OmittedNode>>('ProjectionOmission').implement({
  description: 'A node left out of the view, with its score and why.',
  fields: (t) => ({
    nodeId: t.exposeID('id'),
    node: t.field({
      type: CausalNodeRef,
      resolve: async (o, _a, ctx) => (await loadNodes(ctx, o.threadId, [o.id]))[0]!,
    }),
    score: t.exposeFloat('score'),
    reason: t.field({ type: OmissionReasonEnum, resolve: (o) => o.reason }),
    replacedBy: t.id({
      nullable: true,
      description: 'The node that replaces it (SUPERSEDED and DUPLICATE only).',
      resolve: (o) => o.replacedBy ?? null,
    }),
  }),
});

const ProjectionRef = builder.objectRef<ProjectionView>('Projection').implement({
  description: 'A bounded, deterministic prompt view of the causal graph for one model call.',
  fields: (t) => ({
    prompt: t.exposeString('prompt'),
    tokenEstimate: t.exposeInt('tokenEstimate', { description: 'Tokens of prompt (tokenizer).' }),
    tokenizer: t.field({ type: TokenizerEnum, resolve: (p) => p.tokenizer }),
    nodeIds: t.exposeIDList('nodeIds', { description: 'The FOCUS nodes, in sequence order.' }),
    nodes: t.field({
      type: [CausalNodeRef],
      description: 'The FOCUS nodes, in sequence order.',
      resolve: (p, _a, ctx) => loadNodes(ctx, p.threadId, p.nodeIds),
    }),
    layers: t.field({ type: LayersRef, resolve: (p) => p.layers }),
    digest: t.exposeString('digest', {
      description: 'The text inside <DIGEST>: a summary and fingerprint of the whole graph.',
    }),
    fingerprint: t.exposeString('fingerprint'),
    selected: t.field({
      type: [SelectionRef],
      description: 'Why each FOCUS node is there, parallel to nodes.',
      resolve: (p) => p.selected.map((s) => ({ ...s, threadId: p.threadId })),
    }),
    omitted: t.field({
      type: [OmissionRef],
      description:
        'The best-scoring nodes outside FOCUS, best first (first: 0 to 1,000, default 20).',
      args: { first: t.arg.int() },
      resolve: (p, { first }) =>
        unwrapResult(p.omittedFor(first ?? 20)).map((o) => ({ ...o, threadId: p.threadId })),
    }),
    omittedCount: t.exposeInt('omittedCount', {
      description: 'Every node of the graph that is not in FOCUS.',
    }),
    budget: t.field({ type: BudgetRef, resolve: (p) => p.budget }),
  }),
});

builder.objectField(ThreadRef, 'projection', (t) =>
  t.field({
    type: ProjectionRef,
    description:
      "The prompt view of the thread's current state for one model call (Projection | ProjectionOverflowError | ValidationError).",
    args: { input: t.arg({ type: ProjectionInputRef, required: true }) },
    errors: {
      types: [ProjectionOverflowError, ValidationError],
      directResult: true,
      union: { name: 'ProjectionResult' },
    },
    resolve: async (th, { input }, ctx) => unwrapResult(await ctx.reads.projection(th.id, input)),
  }),
);
