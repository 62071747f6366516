import { z } from 'zod';
import type { ValidationIssue } from '../errors.js';
import type { JsonValue } from '../json.js';
import { WaitingReasonSchema, WorkflowStatusSchema } from './status.js';

/** The WorkflowState shape this build writes; older snapshots are migrated by hydration. */
export const CURRENT_STATE_SCHEMA_VERSION = 2;

// Seed-004 defaults.
export const DEFAULT_MAX_ITERATIONS = 50;
export const DEFAULT_MAX_EXECUTION_TIME_MS = 3_600_000;
export const DEFAULT_MAX_RETRIES = 3;
/** Default human-approval wait before the run times out: 24 h. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 86_400_000;
/** Largest memory value (canonical JSON, UTF-8 bytes) a merge accepts unless limits say otherwise. */
export const DEFAULT_MAX_MEMORY_VALUE_BYTES = 64 * 1024;

// Ring-buffer caps of the bounded history lists (oldest entries fall off first).
export const MAX_VISITED_NODES = 1000;
export const MAX_SUPERVISOR_HISTORY = 100;
export const MAX_MEMORY_DROPS = 100;

/** USD budget percentages that fire a threshold event once each, ascending. */
export const BUDGET_THRESHOLDS = [50, 75, 90, 100] as const;

/**
 * A finite number that is not -0: the log accepts only plain JSON, and -0 does not survive a
 * JSON round trip, so it is refused at the door rather than normalised silently.
 */
export const plainNumber = () =>
  z.number().refine((n) => !Object.is(n, -0), { message: '-0 is not plain JSON; send 0' });

/** Plain JSON (no undefined, NaN, Infinity, -0): what memory values and payloads are made of. */
export const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.string(),
    plainNumber(),
    z.boolean(),
    z.null(),
    z.array(JsonValueSchema),
    z.record(z.string(), JsonValueSchema),
  ]),
);
export const JsonObjectSchema = z.record(z.string(), JsonValueSchema);

/** An ISO 8601 / RFC 3339 timestamp with an offset (`Z` or `±hh:mm`). */
export const IsoDateTimeSchema = z.iso.datetime({ offset: true });

const count = () => plainNumber().int().nonnegative();

export const TAINT_SOURCES = [
  'mcp_tool',
  'custom_tool',
  'tool_node',
  'agent_response',
  'derived',
  'retrieval',
  'a2a',
] as const;
export type TaintSource = (typeof TAINT_SOURCES)[number];

export const TaintMetadataSchema = z.strictObject({
  source: z.enum(TAINT_SOURCES),
  tool_name: z.string().optional(),
  server_id: z.string().optional(),
  agent_id: z.string().optional(),
  node_id: z.string().optional(),
  derived_from: z.array(z.string()).optional(),
  bytes: count().optional(),
  created_at: IsoDateTimeSchema,
});
export type TaintMetadata = z.infer<typeof TaintMetadataSchema>;
export type TaintRegistry = Record<string, TaintMetadata>;

export const LessonProvenanceEntrySchema = z.strictObject({
  node_id: z.string(),
  agent_id: z.string().optional(),
  fact_ids: z.array(z.string()),
  retrieved_at: IsoDateTimeSchema,
});
export type LessonProvenanceEntry = z.infer<typeof LessonProvenanceEntrySchema>;
export type LessonProvenanceRegistry = Record<string, LessonProvenanceEntry>;

export const SpendSchema = z.strictObject({
  input_tokens: count(),
  output_tokens: count(),
  cost_usd: plainNumber().nonnegative(),
  calls: count(),
});
export type Spend = z.infer<typeof SpendSchema>;

export const CompensationActionSchema = z.strictObject({
  type: z.string().min(1),
  payload: JsonObjectSchema,
});
export type CompensationAction = z.infer<typeof CompensationActionSchema>;

export const CompensationEntrySchema = z.strictObject({
  action_id: z.string().min(1),
  compensation_action: CompensationActionSchema,
});
export type CompensationEntry = z.infer<typeof CompensationEntrySchema>;

export const SupervisorDecisionSchema = z.strictObject({
  supervisor_id: z.string(),
  delegated_to: z.string(),
  reasoning: z.string(),
  iteration: count(),
  timestamp: IsoDateTimeSchema,
});
export type SupervisorDecision = z.infer<typeof SupervisorDecisionSchema>;

/** One memory write the merge refused, kept so the refusal is visible after the run. */
export const MemoryDropSchema = z.strictObject({
  key: z.string(),
  // 'non_serializable' only appears in migrated cycgraph snapshots; Weft values are always JSON.
  reason: z.enum(['oversized', 'reserved_key', 'non_serializable']),
  /** Canonical JSON size of the refused value in UTF-8 bytes. */
  bytes: count(),
  /** The `maxValueBytes` limit in force when the value was refused. */
  limit: count(),
  at: IsoDateTimeSchema,
  node_id: z.string().optional(),
});
export type MemoryDrop = z.infer<typeof MemoryDropSchema>;

/**
 * The complete run state (WorkflowState, schema v2) as plain JSON: snake_case keys, timestamps as ISO
 * strings, no `undefined` values (an absent optional field is a missing key). Strict: unknown
 * top-level keys are rejected rather than silently dropped.
 */
export const WorkflowStateSchema = z.strictObject({
  state_schema_version: z.literal(CURRENT_STATE_SCHEMA_VERSION),
  _last_event_sequence_id: count().optional(),

  workflow_id: z.string().min(1),
  run_id: z.string().min(1),
  goal: z.string(),
  constraints: z.array(z.string()).default([]),

  status: WorkflowStatusSchema.default('pending'),
  current_node: z.string().optional(),
  iteration_count: count().default(0),
  max_iterations: plainNumber().int().positive().default(DEFAULT_MAX_ITERATIONS),
  started_at: IsoDateTimeSchema.optional(),
  max_execution_time_ms: plainNumber().int().positive().default(DEFAULT_MAX_EXECUTION_TIME_MS),

  retry_count: count().default(0),
  max_retries: count().default(DEFAULT_MAX_RETRIES),
  last_error: z.string().optional(),
  compensation_stack: z.array(CompensationEntrySchema).default([]),

  waiting_for: WaitingReasonSchema.optional(),
  waiting_since: IsoDateTimeSchema.optional(),
  waiting_timeout_at: IsoDateTimeSchema.optional(),

  total_tokens_used: count().default(0),
  max_token_budget: count().optional(),
  total_input_tokens: count().default(0),
  total_output_tokens: count().default(0),
  total_cost_usd: plainNumber().nonnegative().default(0),
  budget_usd: plainNumber().positive().optional(),
  budget_thresholds_fired: z.array(plainNumber()).default([]),
  model_breakdown: z.record(z.string(), SpendSchema).default({}),
  node_breakdown: z.record(z.string(), SpendSchema).default({}),

  memory: JsonObjectSchema.default({}),
  memory_drops: z.array(MemoryDropSchema).default([]),
  visited_nodes: z.array(z.string()).default([]),
  supervisor_history: z.array(SupervisorDecisionSchema).default([]),
  created_at: IsoDateTimeSchema,
  updated_at: IsoDateTimeSchema,

  taint_registry: z.record(z.string(), TaintMetadataSchema).default({}),
  lesson_provenance: z.record(z.string(), LessonProvenanceEntrySchema).default({}),
  pending_approval: JsonValueSchema.optional(),
  policy_approvals: z.record(z.string(), z.boolean()).default({}),
  subgraph_checkpoints: JsonObjectSchema.default({}),
  subgraph_stack: z.array(z.string()).default([]),
  swarm_handoff_count: count().default(0),
});
export type WorkflowState = z.infer<typeof WorkflowStateSchema>;

/** Zod issues as Weft validation issues with `$`-rooted JSON paths. */
export function toValidationIssues(error: z.ZodError, root = '$'): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: formatPath(root, issue.path),
    message: issue.message,
  }));
}

function formatPath(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (typeof part === 'string' && /^[A-Za-z_$][\w$]*$/.test(part)) out += `.${part}`;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}
