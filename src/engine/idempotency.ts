/**
 * Idempotency keys: every write passes `idempotent`, which refuses input that could not be stored
 * and read back exactly, and answers a retry under a used key from the stored record. The record
 * itself is written by the commit, in the transaction of the entry (see commit.ts).
 */
import { canonicalJson } from '../core/canonical.js';
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { findInputIssue, findTextIssue } from '../core/text.js';
import type { IdempotencyRecord, ThreadStore } from '../store/read-model/index.js';
import { type CarriesCommitted, COMMITTED, carrying } from './views.js';

/** An idempotency key's scope and the hash of the request it came with. */
export interface IdempotencyClaim {
  scope: string;
  key: string;
  requestHash: string;
}

/**
 * Deepest nesting a command's request may have. Above the core's own bounds on the values in it
 * (256 for run values and metadata, 512 for node payloads, plus the request's own levels), so
 * those name the problem first; this one only keeps the request hash from overflowing the stack.
 */
export const MAX_REQUEST_DEPTH = 1024;

/**
 * Runs `command` under an idempotency key: a stored record with the same request hash answers
 * with the stored response and writes nothing; a different request is IDEMPOTENCY_KEY_REUSED. A
 * concurrent first use is settled by the record's unique key.
 */
export type Idempotent = <T>(
  scope: string,
  key: string | undefined,
  request: unknown,
  command: (claim: IdempotencyClaim | undefined) => Promise<Result<T>>,
) => Promise<Result<T>>;

/** `idempotent` over the records of `store`. */
export function createIdempotent(store: Pick<ThreadStore, 'findIdempotencyRecord'>): Idempotent {
  return async function idempotent<T>(
    scope: string,
    key: string | undefined,
    request: unknown,
    command: (claim: IdempotencyClaim | undefined) => Promise<Result<T>>,
  ): Promise<Result<T>> {
    // Every write passes here, so this is where ids, keys and text that could not be stored and
    // read back exactly (a lone surrogate, a NUL, an integer past 2^53) are refused, the same way
    // on every backend. With
    // a key, the request is hashed (below): one too deep for that gets an answer, not a stack
    // overflow; without one, each command's own bounds name the deep value.
    const badText =
      findTextIssue(key, '$.idempotencyKey') ??
      findInputIssue(request, '$', {
        ...(key === undefined ? {} : { maxDepth: MAX_REQUEST_DEPTH }),
        exactNumbers: true,
      });
    if (badText !== undefined) {
      return err({
        code: 'VALIDATION_FAILED',
        message: `${badText.path}: ${badText.message}`,
        issues: [badText],
      });
    }
    if (key === undefined) return command(undefined);
    if (typeof key !== 'string' || key.length === 0 || key.length > 200) {
      return err({
        code: 'VALIDATION_FAILED',
        message: 'idempotencyKey must be a non-empty string of at most 200 characters',
        issues: [{ path: '$.idempotencyKey', message: 'invalid key' }],
      });
    }
    const requestHash = sha256Hex(canonicalJson(request ?? null));
    const replayStored = async (): Promise<Result<T> | undefined> => {
      const stored = await store.findIdempotencyRecord(scope, key);
      if (stored === undefined) return undefined;
      if (stored.requestHash !== requestHash) return err(keyReused(scope, key));
      return ok(JSON.parse(stored.response) as T);
    };
    const earlier = await replayStored();
    if (earlier !== undefined) return earlier;
    const result = await command({ scope, key, requestHash });
    if (!result.ok && result.error.code === 'IDEMPOTENCY_KEY_REUSED') {
      return (await replayStored()) ?? result;
    }
    if (!result.ok) return result;
    // The first answer is the stored one, exactly: a retry must not see a different shape. The
    // views of what it committed (no part of the JSON) go along with the first answer only.
    const answer = JSON.parse(canonicalJson(result.value)) as T;
    return ok(carrying(answer, (result.value as CarriesCommitted)[COMMITTED]));
  };
}

/** The record a command under `claim` stores with its entry (none without a key). */
export const idempotencyRecord = <T>(
  claim: IdempotencyClaim | undefined,
  threadId: string,
  response: T,
  now: string,
): IdempotencyRecord | undefined =>
  claim === undefined
    ? undefined
    : { ...claim, response: canonicalJson(response), threadId, createdAt: new Date(now) };

const keyReused = (scope: string, key: string): WeftError => ({
  code: 'IDEMPOTENCY_KEY_REUSED',
  message: `idempotency key ${key} was already used for a different ${scope} request: use a new key`,
  key,
});
