/**
 * Idempotency keys: every write passes `idempotent`, which refuses input that could not be stored
 * and read back exactly, and answers a retry under a used key from the stored record. The record
 * itself is written by the commit, in the transaction of the entry (see commit.ts).
 */
import { canonicalJson, canonicalListPieces } from '../core/canonical.js';
import { err, ok, type Result, type ValidationIssue, type WeftError } from '../core/errors.js';
import { CHUNK } from '../core/graph/index.js';
import { sha256Hex, sha256Parts } from '../core/hash.js';
import { findInputIssue, findTextIssue, type InputIssueOptions } from '../core/text.js';
import {
  drive,
  type IdempotencyRecord,
  type Pause,
  type ThreadStore,
} from '../store/read-model/index.js';
import { type CarriesCommitted, COMMITTED, carrying } from './committed.js';

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
  large?: LargeRequest,
) => Promise<Result<T>>;

/**
 * A request holding one very long list (an import's nodes): it is checked and hashed a chunk of
 * items at a time, pausing between chunks (time-slices.ts). Same outcome as in one go.
 */
export interface LargeRequest {
  /** Keys from the request down to the list. */
  list: readonly string[];
  pause: Pause;
}

/** `idempotent` over the records of `store`. */
export function createIdempotent(store: Pick<ThreadStore, 'findIdempotencyRecord'>): Idempotent {
  return async function idempotent<T>(
    scope: string,
    key: string | undefined,
    request: unknown,
    command: (claim: IdempotencyClaim | undefined) => Promise<Result<T>>,
    large?: LargeRequest,
  ): Promise<Result<T>> {
    // Every write passes here, so this is where ids, keys and text that could not be stored and
    // read back exactly (a lone surrogate, a NUL, an integer past 2^53) are refused, the same way
    // on every backend. With
    // a key, the request is hashed (below): one too deep for that gets an answer, not a stack
    // overflow; without one, each command's own bounds name the deep value.
    const inputOptions = {
      ...(key === undefined ? {} : { maxDepth: MAX_REQUEST_DEPTH }),
      exactNumbers: true,
    };
    const badText =
      findTextIssue(key, '$.idempotencyKey') ??
      (large === undefined
        ? findInputIssue(request, '$', inputOptions)
        : await inputIssueInSlices(request, inputOptions, large));
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
    const requestHash =
      large === undefined
        ? sha256Hex(canonicalJson(request ?? null))
        : await requestHashInSlices(request ?? null, large);
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

/** `findInputIssue(request, '$', options)` with the list of `large` checked a chunk at a time. */
async function inputIssueInSlices(
  request: unknown,
  options: InputIssueOptions,
  large: LargeRequest,
): Promise<ValidationIssue | undefined> {
  const list = listAt(request, large.list);
  if (list === undefined) return findInputIssue(request, '$', options);
  const shell = findInputIssue(replacedAt(request, large.list, []), '$', options);
  if (shell !== undefined) return shell;
  const root = `$.${large.list.join('.')}`;
  for (let i = 0; i < list.length; i++) {
    const item = findInputIssue(list[i], `${root}[${i}]`, {
      ...options,
      atDepth: large.list.length + 2,
    });
    if (item !== undefined) return item;
    if (i > 0 && i % CHUNK === 0) await large.pause();
  }
  return undefined;
}

/** `sha256Hex(canonicalJson(request))`, rendered and hashed a chunk of the list at a time. */
async function requestHashInSlices(request: unknown, large: LargeRequest): Promise<string> {
  const pieces = await drive(canonicalListPieces(request, large.list, CHUNK), large.pause);
  if (pieces === undefined) return sha256Hex(canonicalJson(request));
  const hash = sha256Parts();
  for (let i = 0; i < pieces.length; i++) {
    hash.update(pieces[i]!);
    if (i > 0 && i % CHUNK === 0) await large.pause();
  }
  return hash.hex();
}

const listAt = (value: unknown, path: readonly string[]): unknown[] | undefined => {
  const list = path.reduce<unknown>(
    (at, key) =>
      typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined,
    value,
  );
  return Array.isArray(list) ? list : undefined;
};

/** `value` with what is at `path` replaced by `by` (copies along the path only). */
function replacedAt(value: unknown, path: readonly string[], by: unknown): unknown {
  if (path.length === 0) return by;
  const record = value as Record<string, unknown>;
  const [key, ...rest] = path as [string, ...string[]];
  return { ...record, [key]: replacedAt(record[key], rest, by) };
}
