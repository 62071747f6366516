import { z } from 'zod';
import { err, ok, type Result } from '../errors.js';
import { findPlainJsonIssue } from './plain-json.js';
import {
  CompensationActionSchema,
  IsoDateTimeSchema,
  JsonObjectSchema,
  JsonValueSchema,
  LessonProvenanceEntrySchema,
  plainNumber,
  TAINT_SOURCES,
  toValidationIssues,
} from './schema.js';
import { WaitingReasonSchema, WorkflowStatusSchema } from './status.js';

/** The seven public action types; GraphQL spells them SCREAMING_SNAKE. */
export const RUN_ACTION_TYPES = [
  'update_memory',
  'set_status',
  'goto_node',
  'handoff',
  'request_human_input',
  'resume_from_human',
  'merge_parallel_results',
] as const;
export type RunActionType = (typeof RUN_ACTION_TYPES)[number];

/** Engine-only action types. They never come from an API caller (`parseRunAction` refuses them). */
export const INTERNAL_RUN_ACTION_TYPES = [
  '_init',
  '_fail',
  '_retry',
  '_complete',
  '_timeout',
  '_cancel',
  '_advance',
  '_track_usage',
  '_push_compensation',
  '_pop_compensation',
  '_increment_iteration',
  '_record_lessons',
  '_taint',
] as const;
export type InternalRunActionType = (typeof INTERNAL_RUN_ACTION_TYPES)[number];

const count = () => plainNumber().int().nonnegative();
const nodeIdString = () => z.string().min(1);

/** Where untrusted data came from; `created_at` defaults to the reduction's `now`. */
export const TaintInputSchema = z.strictObject({
  source: z.enum(TAINT_SOURCES),
  tool_name: z.string().optional(),
  server_id: z.string().optional(),
  agent_id: z.string().optional(),
  node_id: z.string().optional(),
  derived_from: z.array(z.string()).optional(),
  created_at: IsoDateTimeSchema.optional(),
});
export type TaintInput = z.infer<typeof TaintInputSchema>;

const LessonProvenanceRegistrySchema = z.record(z.string(), LessonProvenanceEntrySchema);

/** Taint and derivation markers shared by the payloads that write memory. */
const memoryWriteFields = {
  /** Marks every key of `updates` as coming from this untrusted source. */
  taint: TaintInputSchema.optional(),
  /** Per-key taint, for updates that mix sources. */
  taint_by_key: z.record(z.string(), TaintInputSchema).optional(),
  /** Memory keys read to produce `updates`; tainted ones make the outputs `derived`-tainted. */
  input_keys: z.array(z.string()).optional(),
};

export const UpdateMemoryPayloadSchema = z.strictObject({
  updates: JsonObjectSchema,
  ...memoryWriteFields,
});
export const SetStatusPayloadSchema = z.strictObject({
  status: WorkflowStatusSchema,
  /** Stored as `last_error` when the target is `failed`. */
  error: z.string().optional(),
  reason: z.string().optional(),
  supervisor_completion_reason: z.string().optional(),
  lesson_provenance: LessonProvenanceRegistrySchema.optional(),
});
export const GotoNodePayloadSchema = z.strictObject({ node_id: nodeIdString() });
export const HandoffPayloadSchema = z.strictObject({
  node_id: nodeIdString(),
  supervisor_id: z.string().min(1),
  reasoning: z.string(),
  memory_updates: JsonObjectSchema.optional(),
  lesson_provenance: LessonProvenanceRegistrySchema.optional(),
});
export const RequestHumanInputPayloadSchema = z.strictObject({
  waiting_for: WaitingReasonSchema.optional(),
  /** How long the pause may last; the default is 24 h. */
  timeout_ms: plainNumber().int().positive().optional(),
  /** The review payload shown to the human; stored as `pending_approval`. */
  pending_approval: JsonValueSchema.optional(),
  memory_updates: JsonObjectSchema.optional(),
});
export const ResumeFromHumanPayloadSchema = z.strictObject({
  decision: z.string().min(1),
  response: JsonValueSchema.optional(),
  memory_updates: JsonObjectSchema.optional(),
});
export const MergeParallelResultsPayloadSchema = z.strictObject({
  updates: JsonObjectSchema,
  ...memoryWriteFields,
  /** Accepted for cycgraph compatibility and ignored: usage is charged from metadata.token_usage. */
  total_tokens: plainNumber().optional(),
});

export const ActionMetadataSchema = z.strictObject({
  node_id: z.string().optional(),
  agent_id: z.string().optional(),
  timestamp: IsoDateTimeSchema.optional(),
  attempt: plainNumber().int().positive().optional(),
  duration_ms: plainNumber().nonnegative().optional(),
  model: z.string().optional(),
  token_usage: z
    .strictObject({
      input_tokens: count(),
      output_tokens: count(),
      cost_usd: plainNumber().nonnegative().optional(),
    })
    .optional(),
});
export type ActionMetadata = z.infer<typeof ActionMetadataSchema>;

const actionBase = {
  id: z.string().min(1),
  idempotencyKey: z.string().min(1).optional(),
  compensation: CompensationActionSchema.optional(),
  metadata: ActionMetadataSchema.optional(),
};

export const RUN_ACTION_PAYLOAD_SCHEMAS = {
  update_memory: UpdateMemoryPayloadSchema,
  set_status: SetStatusPayloadSchema,
  goto_node: GotoNodePayloadSchema,
  handoff: HandoffPayloadSchema,
  request_human_input: RequestHumanInputPayloadSchema,
  resume_from_human: ResumeFromHumanPayloadSchema,
  merge_parallel_results: MergeParallelResultsPayloadSchema,
} as const satisfies Record<RunActionType, z.ZodType>;

const publicAction = <T extends RunActionType>(type: T) =>
  z.strictObject({
    ...actionBase,
    type: z.literal(type),
    payload: RUN_ACTION_PAYLOAD_SCHEMAS[type],
  });

export const RunActionSchema = z.discriminatedUnion('type', [
  publicAction('update_memory'),
  publicAction('set_status'),
  publicAction('goto_node'),
  publicAction('handoff'),
  publicAction('request_human_input'),
  publicAction('resume_from_human'),
  publicAction('merge_parallel_results'),
]);
/** A public reducer action: what API callers and agents dispatch. */
export type RunAction = z.infer<typeof RunActionSchema>;
export type RunActionPayload<T extends RunActionType> = z.infer<
  (typeof RUN_ACTION_PAYLOAD_SCHEMAS)[T]
>;

export const INTERNAL_RUN_ACTION_PAYLOAD_SCHEMAS = {
  /** pending → scheduled → running; sets started_at and optionally enters `start_node`. */
  _init: z.strictObject({ start_node: nodeIdString().optional() }),
  /** A node failed: retry while retries are left (and `retryable` is not false), else fail. */
  _fail: z.strictObject({ error: z.string(), retryable: z.boolean().optional() }),
  /** retrying → running: the engine starts the next attempt. */
  _retry: z.strictObject({}),
  _complete: z.strictObject({}),
  /** A deadline fired (logged, so replay is deterministic). */
  _timeout: z.strictObject({
    kind: z.enum(['execution', 'approval']).optional(),
    reason: z.string().optional(),
  }),
  /** Cancel; with `rollback` the compensation stack is drained LIFO into events. */
  _cancel: z.strictObject({ reason: z.string().optional(), rollback: z.boolean().optional() }),
  _advance: z.strictObject({ node_id: nodeIdString() }),
  _track_usage: z.strictObject({
    // Bounded: a model name is a key of the indexed spend rows (see MAX_RESOURCE_KEY_BYTES).
    model: z.string().min(1).max(512),
    node_id: z.string().optional(),
    input_tokens: count(),
    output_tokens: count(),
    cost_usd: plainNumber().nonnegative().optional(),
  }),
  _push_compensation: z.strictObject({
    action_id: z.string().min(1),
    compensation_action: CompensationActionSchema,
  }),
  _pop_compensation: z.strictObject({}),
  _increment_iteration: z.strictObject({}),
  _record_lessons: z.strictObject({
    entry_id: z.string().min(1),
    node_id: z.string().min(1),
    agent_id: z.string().optional(),
    fact_ids: z.array(z.string()),
  }),
  _taint: z.strictObject({ key: z.string().min(1), metadata: TaintInputSchema }),
} as const satisfies Record<InternalRunActionType, z.ZodType>;

const internalAction = <T extends InternalRunActionType>(type: T) =>
  z.strictObject({
    id: z.string().min(1).optional(),
    type: z.literal(type),
    payload: INTERNAL_RUN_ACTION_PAYLOAD_SCHEMAS[type],
  });

export const InternalRunActionSchema = z.discriminatedUnion('type', [
  internalAction('_init'),
  internalAction('_fail'),
  internalAction('_retry'),
  internalAction('_complete'),
  internalAction('_timeout'),
  internalAction('_cancel'),
  internalAction('_advance'),
  internalAction('_track_usage'),
  internalAction('_push_compensation'),
  internalAction('_pop_compensation'),
  internalAction('_increment_iteration'),
  internalAction('_record_lessons'),
  internalAction('_taint'),
]);
/** An engine-only action (`_`-prefixed type). */
export type InternalRunAction = z.infer<typeof InternalRunActionSchema>;
export type InternalRunActionPayload<T extends InternalRunActionType> = z.infer<
  (typeof INTERNAL_RUN_ACTION_PAYLOAD_SCHEMAS)[T]
>;

/** Anything `reduceRun` accepts. */
export type AnyRunAction = RunAction | InternalRunAction;

const PUBLIC_TYPES: ReadonlySet<string> = new Set(RUN_ACTION_TYPES);
const INTERNAL_TYPES: ReadonlySet<string> = new Set(INTERNAL_RUN_ACTION_TYPES);

export const isInternalRunAction = (action: AnyRunAction): action is InternalRunAction =>
  action.type.startsWith('_');

function invalid(message: string, path: string): Result<never> {
  return err({ code: 'VALIDATION_FAILED', message, issues: [{ path, message }] });
}

/**
 * Validates a public action from an untrusted caller: its type, its type-specific payload, its
 * compensation and metadata. Internal (`_`) types are refused. Pure.
 */
export function parseRunAction(raw: unknown): Result<RunAction> {
  const type = typeOf(raw);
  if (typeof type === 'string' && type.startsWith('_')) {
    return invalid(
      `Action type '${type}' is internal to the engine; dispatch one of ${RUN_ACTION_TYPES.join(', ')}.`,
      '$.type',
    );
  }
  if (typeof type !== 'string' || !PUBLIC_TYPES.has(type)) {
    return invalid(
      `Action type must be one of ${RUN_ACTION_TYPES.join(', ')} (got ${JSON.stringify(type) ?? 'nothing'}).`,
      '$.type',
    );
  }
  const notJson = notPlainJson(raw, type);
  if (notJson !== undefined) return notJson;
  return fromZod(RunActionSchema.safeParse(raw), `Invalid ${type} action`);
}

/** Validates an engine-internal action (used by the reducer). Pure. */
export function parseInternalRunAction(raw: unknown): Result<InternalRunAction> {
  const type = typeOf(raw);
  if (typeof type !== 'string' || !INTERNAL_TYPES.has(type)) {
    return invalid(
      `Internal action type must be one of ${INTERNAL_RUN_ACTION_TYPES.join(', ')} (got ${JSON.stringify(type) ?? 'nothing'}).`,
      '$.type',
    );
  }
  const notJson = notPlainJson(raw, type);
  if (notJson !== undefined) return notJson;
  return fromZod(InternalRunActionSchema.safeParse(raw), `Invalid ${type} action`);
}

/** Validates either kind, chosen by the `_` prefix of the type. */
export function parseAnyRunAction(raw: unknown): Result<AnyRunAction> {
  const type = typeOf(raw);
  return typeof type === 'string' && type.startsWith('_')
    ? parseInternalRunAction(raw)
    : parseRunAction(raw);
}

/**
 * `parseAnyRunAction` for an action read back from a log entry. The entry was parsed from JSON
 * text, so it cannot hold a cycle or a non-JSON value, and its nesting was accepted when it was
 * recorded: only the schema is checked, which keeps replay as cheap as it was and keeps logs
 * written under another nesting bound readable. Internal to the core.
 */
export function parseRecordedRunAction(raw: unknown): Result<AnyRunAction> {
  const type = typeOf(raw);
  if (typeof type !== 'string' || !(PUBLIC_TYPES.has(type) || INTERNAL_TYPES.has(type))) {
    return parseAnyRunAction(raw); // its error names the type
  }
  return type.startsWith('_')
    ? fromZod(InternalRunActionSchema.safeParse(raw), `Invalid ${type} action`)
    : fromZod(RunActionSchema.safeParse(raw), `Invalid ${type} action`);
}

/**
 * Refuses an action that is not plain JSON or nests too deeply, naming the path, before the
 * schema sees it: the recursive schema would overflow the stack on a cycle or a very deep value,
 * and for a bigint, function or symbol it could only say "Invalid input" one level up.
 */
function notPlainJson(raw: unknown, type: string): Result<never> | undefined {
  const issue = findPlainJsonIssue(raw);
  if (issue === undefined) return undefined;
  return err({
    code: 'VALIDATION_FAILED',
    message: `Invalid ${type} action: ${issue.path}: ${issue.message}. Send plain JSON and dispatch again.`,
    issues: [issue],
  });
}

function typeOf(raw: unknown): unknown {
  return typeof raw === 'object' && raw !== null ? (raw as { type?: unknown }).type : undefined;
}

function fromZod<T>(result: z.ZodSafeParseResult<T>, what: string): Result<T> {
  if (result.success) return ok(result.data);
  const issues = toValidationIssues(result.error);
  const first = issues[0];
  const detail = first ? `: ${first.path}: ${first.message}` : '';
  return err({
    code: 'VALIDATION_FAILED',
    message: `${what}${detail}. Fix the listed fields and dispatch again.`,
    issues,
  });
}
