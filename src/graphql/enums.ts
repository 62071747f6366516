/**
 * Enums: SCREAMING_SNAKE in GraphQL, lowercase inside (the spelling stored in the log, in
 * payloads and in WorkflowState, so values travel unchanged between the API and stored data).
 * Every value carries a description: the schema is the reference a GraphiQL user or a generated
 * client sees, so it says what each value means and, for actions, what payload it takes.
 */
import type { NodeKind } from '../core/identity.js';
import { NODE_KINDS } from '../core/identity.js';
import type { RunActionType, WaitingReason, WorkflowStatus } from '../core/run/index.js';
import { RUN_ACTION_TYPES, WAITING_REASONS, WORKFLOW_STATUSES } from '../core/run/index.js';
import { builder } from './builder.js';

/** GraphQL values from the core's list; a value missing a description fails to type-check. */
const valuesOf = <T extends string>(values: readonly T[], descriptions: Record<T, string>) =>
  Object.fromEntries(
    values.map((v) => [v.toUpperCase(), { value: v, description: descriptions[v] }]),
  ) as Record<Uppercase<T>, { value: T; description: string }>;

const NODE_KIND_DESCRIPTIONS: Record<NodeKind, string> = {
  system: 'Instructions that frame the agent (a system prompt, a policy).',
  goal: 'What the agent was asked to achieve.',
  inference: 'A model call and what it produced.',
  semantic: 'A semantic memory entry (written with `remember`; keyed, versioned by its parents).',
  tool_call: 'A request to call a tool.',
  tool_result: 'What a tool returned (usually a child of its `TOOL_CALL`).',
  resource: 'A version of an external resource, named by `resourceKey` (a file, a URL).',
  verification: 'A check of earlier nodes (a test run, a review).',
  answer: 'An answer given to the user.',
  protocol_error: 'A malformed or failed exchange, kept for provenance.',
};

export const NodeKindEnum = builder.enumType('NodeKind', {
  description: 'The structural kind of a causal node. The kind is part of the content id.',
  values: valuesOf(NODE_KINDS, NODE_KIND_DESCRIPTIONS),
});

const RUN_STATUS_DESCRIPTIONS: Record<WorkflowStatus, string> = {
  pending: 'Created, not yet scheduled.',
  scheduled: 'Accepted for execution, not yet started.',
  running: 'Executing: actions are dispatched to it.',
  waiting: 'Paused for a human or an external event (`REQUEST_HUMAN_INPUT`); has a deadline.',
  retrying: 'A failed step is being retried.',
  completed: 'Finished successfully. Terminal.',
  failed: 'Finished with an error (`lastError`), or went over its iteration budget. Terminal.',
  cancelled: 'Stopped by `cancelRun`. Terminal.',
  timeout: 'Its approval wait or execution time ran out. Terminal.',
};

export const RunStatusEnum = builder.enumType('RunStatus', {
  description:
    'Where a run is in its lifecycle. COMPLETED, FAILED, CANCELLED and TIMEOUT are terminal: no ' +
    'status change leaves them.',
  values: valuesOf(WORKFLOW_STATUSES, RUN_STATUS_DESCRIPTIONS),
});

const ACTION_DESCRIPTIONS: Record<RunActionType, string> = {
  update_memory:
    'Writes memory keys, last writer wins. Payload: `updates` (object, required); optional ' +
    '`taint` ({ source, tool_name?, server_id?, agent_id?, node_id?, derived_from?, created_at? }) ' +
    'marking every written key, `taint_by_key` ({ key: taint }), `input_keys` (keys read to ' +
    'compute the update: tainted inputs make the outputs tainted as `derived`). Example: ' +
    '{ "updates": { "plan": ["read README"] } }.',
  set_status:
    'Moves the run to a status, if the lifecycle allows it. Payload: `status` (lowercase, ' +
    'required); optional ' +
    '`error` (becomes `lastError` when the target is `failed`), `reason`, ' +
    '`supervisor_completion_reason`, `lesson_provenance`. Example: { "status": "completed" }.',
  goto_node:
    'Enters a workflow node: sets `currentNode`, appends to `visitedNodes`, resets the retry ' +
    'count. Payload: `node_id` (required). Example: { "node_id": "summarise" }.',
  handoff:
    "Enters a node on a supervisor's decision, recorded in `supervisorHistory`. Payload: " +
    '`node_id`, `supervisor_id`, `reasoning` (required); optional `memory_updates` (object), ' +
    '`lesson_provenance`. Example: { "node_id": "researcher", "supervisor_id": "planner", ' +
    '"reasoning": "needs sources" }.',
  request_human_input:
    'Moves the run to WAITING with an approval deadline and announces `approvalRequested`. ' +
    'Payload (all optional): `waiting_for` (`human_approval` by default, `external_event`, ' +
    '`scheduled_time`, `rate_limit`, `resource_limit`), `timeout_ms` (default 24 h), ' +
    '`pending_approval` (object shown to the approver), `memory_updates`. Example: ' +
    '{ "pending_approval": { "question": "Publish?" }, "timeout_ms": 3600000 }.',
  resume_from_human:
    'Moves a WAITING run back to RUNNING and writes `human_decision` (and `human_response`) into ' +
    'memory. Payload: `decision` (required); optional `response`, `memory_updates`. ' +
    '`resolveApproval` does the same under the `approve` scope. Example: { "decision": "approved" }.',
  merge_parallel_results:
    'Merges the results of parallel branches into memory. Payload: `updates` (object, required); ' +
    'optional `taint`, `taint_by_key`, `input_keys` as for UPDATE_MEMORY. Example: ' +
    '{ "updates": { "summary_a": "short", "summary_b": "long" } }.',
};

export const ActionTypeEnum = builder.enumType('ActionType', {
  description:
    'The action types a client may `dispatch` to a run, each with its payload (`ActionInput.payload`, ' +
    'snake_case keys; unknown keys are refused with VALIDATION_FAILED). Every accepted dispatch ' +
    'counts one iteration. Actions the engine uses internally cannot be dispatched.',
  values: valuesOf(RUN_ACTION_TYPES, ACTION_DESCRIPTIONS),
});

/** The direction of an ordered list (threads, runs). */
export const OrderDirectionEnum = builder.enumType('OrderDirection', {
  values: {
    ASC: { value: 'asc', description: 'Oldest first.' },
    DESC: { value: 'desc', description: 'Newest first.' },
  } as const,
});

const WAITING_REASON_DESCRIPTIONS: Record<WaitingReason, string> = {
  human_approval: 'A person must approve or answer (the default of REQUEST_HUMAN_INPUT).',
  external_event: 'An event from outside the agent.',
  scheduled_time: 'A point in time.',
  rate_limit: 'A rate limit to clear.',
  resource_limit: 'A resource to become available.',
};

/** What a waiting run waits for. */
export const WaitingReasonEnum = builder.enumType('WaitingReason', {
  values: valuesOf(WAITING_REASONS, WAITING_REASON_DESCRIPTIONS),
});

/** Where an approval request stands. */
export const ApprovalStateEnum = builder.enumType('ApprovalState', {
  values: {
    PENDING: { value: 'pending', description: 'The run is waiting for an answer.' },
    RESOLVED: { value: 'resolved', description: 'The run was resumed (approved, rejected, …).' },
    EXPIRED: { value: 'expired', description: 'The wait ran out before anyone answered.' },
  } as const,
});
