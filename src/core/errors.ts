/**
 * The one error union of the core. Every expected failure is a plain value keyed by `code`;
 * boundaries (store, GraphQL, CLI) translate it once. The `message` is presentation only and
 * should tell the reader what to do.
 */

/**
 * Codes of the AgentState import rules, in the order they are checked. The node rules among them
 * (resource key, semantic payload, vocabulary, parents) are also what the replay of a log refuses
 * a recorded node with.
 */
export const IMPORT_RULE_CODES = [
  'STATE_TOO_LARGE',
  'STATE_VERSION_UNSUPPORTED',
  'STATE_SHAPE_INVALID',
  'NODE_SHAPE_INVALID',
  'NODE_KIND_INVALID',
  'NODE_CREATED_AT_INVALID',
  'NODE_SEQUENCE_INVALID',
  'NODE_RESOURCE_KEY_INVALID',
  'NODE_SEMANTIC_INVALID',
  'NODE_SEMANTIC_TYPE_NOT_ALLOWED',
  'NODE_PARENTS_INVALID',
  'NODE_ID_DUPLICATE',
  'NODE_PARENT_NOT_EARLIER',
  'NODE_VERSION_PARENT_MISSING',
  'NODE_ID_MISMATCH',
  'FRONTIER_INVALID',
] as const;
export type ImportRuleCode = (typeof IMPORT_RULE_CODES)[number];

export interface ValidationIssue {
  /** JSON path of the offending value, e.g. `$.nodes[3].payload.x`. */
  path: string;
  message: string;
}

export type WeftError =
  | { code: 'VALIDATION_FAILED'; message: string; issues: ValidationIssue[] }
  /** A value holding data JSON would silently drop (a non-enumerable property), at `path`. */
  | { code: 'NON_SERIALIZABLE'; message: string; path: string }
  | { code: ImportRuleCode; message: string; nodeId?: string }
  | { code: 'UNKNOWN_PARENT'; message: string; nodeId: string }
  | { code: 'SEMANTIC_TYPE_NOT_ALLOWED'; message: string; type: string }
  | { code: 'NOT_FOUND'; message: string; entity: string; id: string }
  | {
      code: 'CONFLICT';
      message: string;
      threadId: string;
      expectedIndex: number;
      actualIndex: number;
    }
  | { code: 'INVALID_TRANSITION'; message: string; from: string; to: string }
  | { code: 'INVALID_ACTION'; message: string; runId?: string }
  | { code: 'BUDGET_EXCEEDED'; message: string; runId?: string }
  | { code: 'ITERATION_LIMIT_EXCEEDED'; message: string; runId?: string }
  | { code: 'SCHEMA_VERSION_UNSUPPORTED'; message: string; version: number; supported: number }
  | { code: 'VERIFICATION_FAILED'; message: string; index: number; entryId: string }
  | { code: 'IDEMPOTENCY_KEY_REUSED'; message: string; key: string }
  /**
   * An answer written as one JSON value (a thread's state) would be longer than the bound of
   * such answers: `paged` says which paged fields give the same data.
   */
  | { code: 'ANSWER_TOO_LARGE'; message: string; field: string; maxBytes: number; paged: string }
  /** A read ran past the configured time (WEFT_QUERY_TIMEOUT_MS) and was stopped. */
  | { code: 'QUERY_TIMEOUT'; message: string; timeoutMs: number }
  | {
      code: 'PROJECTION_OVERFLOW';
      message: string;
      requiredTokens: number;
      maxPromptTokens: number;
    };

export type WeftErrorCode = WeftError['code'];

/** A result value: core functions that can fail on input return this instead of throwing. */
export type Result<T, E = WeftError> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

/**
 * An exception carrying a WeftError, for the few places where unwinding is simpler than
 * threading a Result (deep inside a fold). Catch it at the boundary with `isWeftFailure`.
 */
export class WeftFailure extends Error {
  readonly error: WeftError;
  constructor(error: WeftError) {
    super(error.message);
    this.name = 'WeftFailure';
    this.error = error;
  }
}

export const isWeftFailure = (value: unknown): value is WeftFailure => value instanceof WeftFailure;

/** Unwraps a Result, throwing a WeftFailure on error. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new WeftFailure(result.error);
  return result.value;
}
