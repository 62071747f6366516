import { canonicalJson } from '../core/canonical.js';
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { estimateJsonSize } from '../core/graph/json-value.js';
import { DEFAULT_IMPORT_LIMITS } from '../core/graph/types.js';
import { MAX_JSON_DEPTH } from '../core/run/plain-json.js';
import { findInputIssue, textProblem } from '../core/text.js';

/** Largest canonical JSON size of one payload-like value: an imported node's payload limit. */
export const DEFAULT_MAX_PAYLOAD_BYTES = DEFAULT_IMPORT_LIMITS.maxPayloadBytes;
/** Longest thread or run id a caller may choose. */
export const MAX_ID_LENGTH = 200;
/** Longest storage key the system caller may name: an id, the separator and a long tenant name. */
export const MAX_KEY_LENGTH = 2 * MAX_ID_LENGTH + 1;

export const invalid = (path: string, message: string): WeftError => ({
  code: 'VALIDATION_FAILED',
  message: `${path}: ${message}`,
  issues: [{ path, message }],
});

/** A caller-chosen id: a non-empty string of at most MAX_ID_LENGTH characters, storable text. */
export function checkId(value: unknown, path: string): Result<string> {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH) {
    return err(invalid(path, `must be a non-empty string of at most ${MAX_ID_LENGTH} characters`));
  }
  const problem = textProblem(value);
  return problem === undefined ? ok(value) : err(invalid(path, problem));
}

/** The first C0 control character (U+0000 to U+001F) in `text`, as its code; -1 for none. */
function firstControl(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x1f) return code;
  }
  return -1;
}

/**
 * The id of a new thread: a caller-chosen id (checkId) without C0 control characters, U+0000 to
 * U+001F, so that an id is never read as a tenant's storage key (see tenancy.ts).
 */
export function checkNewThreadId(value: unknown, path: string): Result<string> {
  const checked = checkId(value, path);
  if (!checked.ok) return checked;
  const control = firstControl(checked.value);
  if (control < 0) return checked;
  const code = control.toString(16).toUpperCase().padStart(4, '0');
  return err(
    invalid(
      path,
      `contains U+${code}: a thread id may not contain control characters (U+0000 to U+001F)`,
    ),
  );
}

/**
 * A storage key the system caller names a thread by: a thread id, or one qualified with its
 * tenant (longer than an id may be).
 */
export function checkThreadKey(value: unknown, path: string): Result<string> {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_KEY_LENGTH) {
    return err(invalid(path, `must be a non-empty string of at most ${MAX_KEY_LENGTH} characters`));
  }
  const problem = textProblem(value);
  return problem === undefined ? ok(value) : err(invalid(path, problem));
}

export function checkIndex(value: unknown, path: string): Result<number | undefined> {
  if (value === undefined) return ok(undefined);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    return err(invalid(path, 'must be an integer >= 0'));
  }
  return ok(value);
}

/** An optional count of at least one (a page size). */
export function checkLimit(value: unknown, path: string): Result<number | undefined> {
  if (value === undefined) return ok(undefined);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    return err(invalid(path, 'must be an integer >= 1'));
  }
  return ok(value);
}

/**
 * Refuses a value whose canonical JSON is larger than `limit` UTF-8 bytes, before any expensive
 * work. Values that are not JSON are left to the core, which names the offending path.
 */
export function checkSize(value: unknown, path: string, limit: number): Result<void> {
  if (value === undefined) return ok(undefined);
  // Cheapest bound first, without serialising: the estimate counts every character once, and
  // one character is at most 6 bytes of canonical JSON (an escape such as \u0000; otherwise at
  // most 3 UTF-8 bytes).
  const budget = Math.floor(limit / 6);
  if (estimateJsonSize(value, budget) <= budget) return ok(undefined);
  let text: string;
  try {
    text = canonicalJson(value);
  } catch {
    return ok(undefined);
  }
  // Cheap bound first: a UTF-8 byte count is at most 3× the UTF-16 length.
  if (text.length * 3 <= limit) return ok(undefined);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= limit) return ok(undefined);
  return err(
    invalid(path, `is ${bytes} bytes of JSON, over the limit of ${limit} (maxPayloadBytes)`),
  );
}

/**
 * Refuses a value nested deeper than MAX_JSON_DEPTH levels (the bound run values have), before
 * anything recurses over it.
 */
export function checkDepth(value: unknown, path: string): Result<void> {
  const issue = findInputIssue(value, path, { maxDepth: MAX_JSON_DEPTH });
  return issue === undefined
    ? ok(undefined)
    : err({
        code: 'VALIDATION_FAILED',
        message: `${issue.path}: ${issue.message}`,
        issues: [issue],
      });
}

/** The first failure of several checks, or ok. */
export function firstFailure(...results: Result<unknown>[]): Result<void> {
  for (const result of results) if (!result.ok) return result;
  return ok(undefined);
}

export const threadNotFound = (threadId: string): WeftError => ({
  code: 'NOT_FOUND',
  message: `thread ${threadId} does not exist`,
  entity: 'Thread',
  id: threadId,
});

export const conflict = (
  threadId: string,
  expectedIndex: number,
  actualIndex: number,
): WeftError => ({
  code: 'CONFLICT',
  message: `thread ${threadId} is at log index ${actualIndex}, not ${expectedIndex}: reload and retry with expectedIndex ${actualIndex}`,
  threadId,
  expectedIndex,
  actualIndex,
});
