/** Enums: SCREAMING_SNAKE in GraphQL, the seeds' lowercase spellings inside. */
import { NODE_KINDS } from '../core/identity.js';
import { RUN_ACTION_TYPES, WORKFLOW_STATUSES } from '../core/run/index.js';
import { builder } from './builder.js';

const valuesOf = <T extends string>(values: readonly T[]) =>
  Object.fromEntries(values.map((v) => [v.toUpperCase(), { value: v }])) as Record<
    Uppercase<T>,
    { value: T }
  >;

export const NodeKindEnum = builder.enumType('NodeKind', {
  description: 'The ten structural kinds of a causal node (seed 000).',
  values: valuesOf(NODE_KINDS),
});

export const RunStatusEnum = builder.enumType('RunStatus', {
  description: 'Run lifecycle statuses (seed 004).',
  values: valuesOf(WORKFLOW_STATUSES),
});

export const ActionTypeEnum = builder.enumType('ActionType', {
  description: 'Public run actions (seed 004); internal `_…` actions are not dispatchable.',
  values: valuesOf(RUN_ACTION_TYPES),
});
