/**
 * The value an approved or rejected interrupt resumes with, and how a graph reads it. A resume
 * value LangGraph can take is never `undefined` or `null` (it refuses those with
 * `EmptyInputError`), and a graph that only saw the reviewer's free-text response could not tell
 * a rejection from an approval; so the value carries both: `{ decision, response }`.
 */

/** What `interrupt()` returns when the graph is resumed with `Resume.value`. */
export interface ApprovalAnswer {
  /** As the approval was resolved: `approved`, `rejected`, or another word the resolver chose. */
  decision: string;
  /** The reviewer's response; `null` when none was given (never `undefined`). */
  response: unknown;
}

/** An answer read by `getApproval`: `approved` is true only for an explicit approval. */
export interface Approval extends ApprovalAnswer {
  approved: boolean;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a value has the `{ decision, response }` shape of an `ApprovalAnswer`. Pure. */
export function isApprovalAnswer(value: unknown): value is ApprovalAnswer {
  return (
    isRecord(value) &&
    typeof value.decision === 'string' &&
    value.decision !== '' &&
    'response' in value
  );
}

/**
 * Reads what `interrupt()` returned. Pure. Fails closed: only `{ decision: "approved" }` (or,
 * for graphs resumed the older way with the bare response, `{ approved: true }`) approves;
 * a rejection, any other decision, a missing or unrecognised value does not.
 */
export function getApproval(answer: unknown): Approval {
  if (isApprovalAnswer(answer)) {
    return {
      approved: answer.decision === 'approved',
      decision: answer.decision,
      response: answer.response ?? null,
    };
  }
  if (isRecord(answer) && typeof answer.approved === 'boolean') {
    return {
      approved: answer.approved,
      decision: answer.approved ? 'approved' : 'rejected',
      response: answer,
    };
  }
  return { approved: false, decision: 'unknown', response: answer ?? null };
}

/** `getApproval(answer).approved`: whether the reviewer approved. Pure. */
export function isApproved(answer: unknown): boolean {
  return getApproval(answer).approved;
}

/**
 * The resume value for a resolved approval. Pure. LangGraph hands a resume value that is not a
 * map of interrupt ids to every interrupt pending at the checkpoint, and one Weft approval
 * covers all of them, so each `interrupt()` of that step returns this same answer.
 */
export function createResumeValue(decision: string, response: unknown): ApprovalAnswer {
  return { decision, response: response ?? null };
}
