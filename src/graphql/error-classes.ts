/**
 * The typed errors of the API, translated once from the engine's WeftError union. Each class is
 * a GraphQLError, so one thrown where no union catches it (a query) keeps its message and its
 * `extensions.code` (NOT_FOUND, BAD_USER_INPUT, …) instead of being masked.
 */
import { GraphQLError } from 'graphql';
import {
  IMPORT_RULE_CODES,
  isWeftFailure,
  type ValidationIssue,
  type WeftError,
} from '../core/errors.js';

/** `extensions.code` of errors that reach `errors[]`: the client-facing category. */
export const NOT_FOUND = 'NOT_FOUND';
export const BAD_USER_INPUT = 'BAD_USER_INPUT';

/** The longest word a message shows whole: a state hash with its punctuation fits. */
export const MAX_SHOWN_WORD = 80;
/** How much of a longer word (an id a client sent) a message shows, before "…". */
export const SHOWN_WORD_PREFIX = 64;

/**
 * `message` with every word (a run without whitespace) longer than MAX_SHOWN_WORD cut to its
 * first SHOWN_WORD_PREFIX characters and "…". Messages name the ids a request sent, which may be
 * any length: a 100,000-character id is not echoed back whole, in every message, from here.
 */
export function shownMessage(message: string): string {
  return message.replace(new RegExp(`\\S{${MAX_SHOWN_WORD + 1},}`, 'gu'), (word) => {
    return `${Array.from(word).slice(0, SHOWN_WORD_PREFIX).join('')}…`;
  });
}

export abstract class ApiError extends GraphQLError {
  /** The engine's specific code (CONFLICT, NODE_ID_MISMATCH, …). */
  readonly code: string;
  protected constructor(code: string, message: string, category: string = code) {
    super(shownMessage(message), { extensions: { code: category, weftCode: code } });
    this.code = code;
  }
}

export class ValidationError extends ApiError {
  readonly issues: ValidationIssue[];
  readonly nodeId: string | null;
  constructor(code: string, message: string, issues: ValidationIssue[], nodeId?: string) {
    super(code, message, BAD_USER_INPUT);
    this.issues = issues.map((issue) => ({ ...issue, message: shownMessage(issue.message) }));
    this.nodeId = nodeId ?? null;
    this.extensions.issues = this.issues;
  }
}

export class NotFoundError extends ApiError {
  readonly entity: string;
  readonly id: string;
  constructor(message: string, entity: string, id: string) {
    super('NOT_FOUND', message, NOT_FOUND);
    this.entity = entity;
    this.id = id;
  }
}

export class ConflictError extends ApiError {
  readonly threadId: string;
  readonly expectedIndex: number;
  readonly actualIndex: number;
  constructor(e: Extract<WeftError, { code: 'CONFLICT' }>) {
    super('CONFLICT', e.message);
    this.threadId = e.threadId;
    this.expectedIndex = e.expectedIndex;
    this.actualIndex = e.actualIndex;
  }
}

/** The state (an imported AgentState / WorkflowState, a stored log, a run) does not allow it. */
export class InvalidStateError extends ApiError {
  readonly nodeId: string | null;
  readonly runId: string | null;
  readonly index: number | null;
  constructor(
    code: string,
    message: string,
    at: { nodeId?: string | undefined; runId?: string | undefined; index?: number | undefined },
  ) {
    super(code, message);
    this.nodeId = at.nodeId ?? null;
    this.runId = at.runId ?? null;
    this.index = at.index ?? null;
  }
}

export class InvalidTransitionError extends ApiError {
  readonly from: string;
  readonly to: string;
  constructor(message: string, from: string, to: string) {
    super('INVALID_TRANSITION', message);
    this.from = from;
    this.to = to;
  }
}

export class BudgetExceededError extends ApiError {
  readonly runId: string | null;
  constructor(code: string, message: string, runId?: string) {
    super(code, message);
    this.runId = runId ?? null;
  }
}

export class IdempotencyKeyReusedError extends ApiError {
  readonly key: string;
  constructor(message: string, key: string) {
    super('IDEMPOTENCY_KEY_REUSED', message);
    this.key = key;
  }
}

export class ProjectionOverflowError extends ApiError {
  readonly requiredTokens: number;
  readonly maxPromptTokens: number;
  constructor(message: string, requiredTokens: number, maxPromptTokens: number) {
    super('PROJECTION_OVERFLOW', message);
    this.requiredTokens = requiredTokens;
    this.maxPromptTokens = maxPromptTokens;
  }
}

/** A read ran past WEFT_QUERY_TIMEOUT_MS and was stopped; nothing was written. */
export class QueryTimeoutError extends ApiError {
  readonly timeoutMs: number;
  constructor(message: string, timeoutMs: number) {
    super('QUERY_TIMEOUT', message);
    this.timeoutMs = timeoutMs;
    this.extensions.timeoutMs = timeoutMs;
  }
}

/**
 * An answer written as one JSON value would pass the bound of such answers; `paged` names the
 * paged fields that give the same data.
 */
export class AnswerTooLargeError extends ApiError {
  readonly field: string;
  readonly maxBytes: number;
  readonly paged: string;
  constructor(message: string, field: string, maxBytes: number, paged: string) {
    super('ANSWER_TOO_LARGE', message);
    this.field = field;
    this.maxBytes = maxBytes;
    this.paged = paged;
    this.extensions.maxBytes = maxBytes;
    this.extensions.paged = paged;
  }
}

const IMPORT_RULES: ReadonlySet<string> = new Set(IMPORT_RULE_CODES);

/** The API error for an engine error: the one translation of WeftError codes. */
export function toApiError(e: WeftError): ApiError {
  switch (e.code) {
    case 'VALIDATION_FAILED':
      return new ValidationError(e.code, e.message, e.issues);
    case 'UNKNOWN_PARENT':
      return new ValidationError(
        e.code,
        e.message,
        [{ path: '$.nodes', message: e.message }],
        e.nodeId,
      );
    case 'SEMANTIC_TYPE_NOT_ALLOWED':
      return new ValidationError(e.code, e.message, [{ path: '$.type', message: e.message }]);
    case 'NON_SERIALIZABLE':
      return new ValidationError(e.code, e.message, [{ path: e.path, message: e.message }]);
    case 'NOT_FOUND':
      return new NotFoundError(e.message, e.entity, e.id);
    case 'CONFLICT':
      return new ConflictError(e);
    case 'INVALID_TRANSITION':
      return new InvalidTransitionError(e.message, e.from, e.to);
    case 'INVALID_ACTION':
      return new InvalidStateError(e.code, e.message, { runId: e.runId });
    case 'BUDGET_EXCEEDED':
    case 'ITERATION_LIMIT_EXCEEDED':
      return new BudgetExceededError(e.code, e.message, e.runId);
    case 'SCHEMA_VERSION_UNSUPPORTED':
      return new InvalidStateError(e.code, e.message, {});
    case 'VERIFICATION_FAILED':
      return new InvalidStateError(e.code, e.message, { index: e.index });
    case 'IDEMPOTENCY_KEY_REUSED':
      return new IdempotencyKeyReusedError(e.message, e.key);
    case 'PROJECTION_OVERFLOW':
      return new ProjectionOverflowError(e.message, e.requiredTokens, e.maxPromptTokens);
    case 'QUERY_TIMEOUT':
      return new QueryTimeoutError(e.message, e.timeoutMs);
    case 'ANSWER_TOO_LARGE':
      return new AnswerTooLargeError(e.message, e.field, e.maxBytes, e.paged);
    default:
      if (IMPORT_RULES.has(e.code)) {
        return new InvalidStateError(e.code, e.message, { nodeId: e.nodeId });
      }
      return new InvalidStateError(e.code, e.message, {});
  }
}

/**
 * The typed error for one a read threw instead of returning (a WeftFailure from the store, such
 * as QUERY_TIMEOUT, out of a DataLoader or a query), in place of where graphql-js reported it;
 * undefined for anything else, which stays unexpected (masked).
 */
export function typedErrorOfThrown(error: unknown): GraphQLError | undefined {
  const cause = error instanceof GraphQLError ? error.originalError : error;
  if (!isWeftFailure(cause)) return undefined;
  const api = toApiError(cause.error);
  if (!(error instanceof GraphQLError)) return api;
  return new GraphQLError(api.message, {
    nodes: error.nodes ?? null,
    source: error.source ?? null,
    positions: error.positions ?? null,
    path: error.path ?? null,
    originalError: api,
    extensions: api.extensions,
  });
}

/** A ValidationError from input-validation issues (Standard Schema shape, as zod reports them). */
export function validationErrorOf(
  issues: ReadonlyArray<{
    message: string;
    path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined;
  }>,
): ValidationError {
  const list = issues.map((issue) => ({
    path: pathText(issue.path ?? []),
    message: issue.message,
  }));
  const message = list.map((i) => `${i.path}: ${i.message}`).join('; ');
  return new ValidationError('VALIDATION_FAILED', message, list);
}

function pathText(path: ReadonlyArray<PropertyKey | { key: PropertyKey }>): string {
  let out = '$';
  for (const part of path) {
    const key = typeof part === 'object' ? part.key : part;
    out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  }
  return out;
}

/** Unwraps an engine result for a resolver: the value, or the API error thrown. */
export function unwrapResult<T>(
  result: { ok: true; value: T } | { ok: false; error: WeftError },
): T {
  if (!result.ok) throw toApiError(result.error);
  return result.value;
}

export function notFound(entity: string, id: string): NotFoundError {
  return new NotFoundError(`${entity} ${id} does not exist`, entity, id);
}

export function badInput(path: string, message: string): ValidationError {
  return new ValidationError('VALIDATION_FAILED', `${path}: ${message}`, [{ path, message }]);
}
