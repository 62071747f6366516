/**
 * The Error interface and the typed error objects of mutation unions (`XResult = XSuccess |
 * errors`). Which errors a mutation can return is listed by the mutation; the classes and the
 * translation from the engine's codes live in error-classes.ts.
 */
import { builder } from './builder.js';
import { RunStatusEnum } from './enums.js';
import {
  type ApiError,
  BudgetExceededError,
  ConflictError,
  IdempotencyKeyReusedError,
  InvalidStateError,
  InvalidTransitionError,
  NotFoundError,
  ProjectionOverflowError,
  ValidationError,
} from './error-classes.js';

export const ErrorInterface = builder.interfaceRef<ApiError>('Error').implement({
  description:
    'An expected failure. `code` is stable (e.g. CONFLICT, NODE_ID_MISMATCH); `message` says what to do.',
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.exposeString('code'),
  }),
});

export const Issue = builder.objectRef<{ path: string; message: string }>('Issue').implement({
  description: 'One problem of an input, at a JSON path such as `$.nodes[2].payload`.',
  fields: (t) => ({ path: t.exposeString('path'), message: t.exposeString('message') }),
});

builder.objectType(ValidationError, {
  name: 'ValidationError',
  description: 'The input is malformed or breaks a rule.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ValidationError,
  fields: (t) => ({
    issues: t.field({ type: [Issue], resolve: (e) => e.issues }),
    nodeId: t.id({ nullable: true, resolve: (e) => e.nodeId }),
  }),
});

builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  description: 'A thread, run or node the input names does not exist.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof NotFoundError,
  fields: (t) => ({ entity: t.exposeString('entity'), id: t.exposeID('id') }),
});

builder.objectType(ConflictError, {
  name: 'ConflictError',
  description:
    'expectedIndex is stale: another write landed first. Reload and retry with actualIndex.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ConflictError,
  fields: (t) => ({
    threadId: t.exposeID('threadId'),
    expectedIndex: t.exposeInt('expectedIndex'),
    actualIndex: t.exposeInt('actualIndex'),
  }),
});

builder.objectType(InvalidStateError, {
  name: 'InvalidStateError',
  description:
    'An imported state, a stored log or a run state does not allow this (code says which rule).',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof InvalidStateError,
  fields: (t) => ({
    nodeId: t.id({ nullable: true, resolve: (e) => e.nodeId }),
    runId: t.id({ nullable: true, resolve: (e) => e.runId }),
    index: t.int({ nullable: true, resolve: (e) => e.index }),
  }),
});

builder.objectType(InvalidTransitionError, {
  name: 'InvalidTransitionError',
  description: 'The run cannot move between these statuses: its lifecycle forbids the move.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof InvalidTransitionError,
  fields: (t) => ({
    from: t.field({ type: RunStatusEnum, resolve: (e) => e.from as never }),
    to: t.field({ type: RunStatusEnum, resolve: (e) => e.to as never }),
  }),
});

builder.objectType(BudgetExceededError, {
  name: 'BudgetExceededError',
  description: 'A run budget or limit was exceeded.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof BudgetExceededError,
  fields: (t) => ({ runId: t.id({ nullable: true, resolve: (e) => e.runId }) }),
});

builder.objectType(IdempotencyKeyReusedError, {
  name: 'IdempotencyKeyReusedError',
  description: 'The idempotency key was used before for a different request: use a new key.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof IdempotencyKeyReusedError,
  fields: (t) => ({ key: t.exposeString('key') }),
});

builder.objectType(ProjectionOverflowError, {
  name: 'ProjectionOverflowError',
  description: 'The projection cannot fit in maxPromptTokens.',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ProjectionOverflowError,
  fields: (t) => ({
    requiredTokens: t.exposeInt('requiredTokens'),
    maxPromptTokens: t.exposeInt('maxPromptTokens'),
  }),
});

/** Errors any thread mutation can return. */
export const THREAD_ERRORS = [
  ValidationError,
  NotFoundError,
  ConflictError,
  InvalidStateError,
  IdempotencyKeyReusedError,
];

/** Errors any run mutation can return. */
export const RUN_ERRORS = [...THREAD_ERRORS, InvalidTransitionError, BudgetExceededError];
