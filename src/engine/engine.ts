import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import type { Clock, IdSource } from '../core/ports.js';
import {
  type Committed,
  commitEvent,
  createThreadMachine,
  type ThreadEvent,
  type ThreadMachineOptions,
  type ThreadState,
} from '../core/thread/index.js';
import {
  type IdempotencyRecord,
  openThreadStore,
  projectEntry,
  type ReadModelChanges,
  type ThreadStore,
} from '../store/read-model/index.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from './checks.js';
import { createKeyedLock, createThreadCache } from './thread-cache.js';
import type { CommittedEvent, EngineOptions } from './types.js';

const systemClock: Clock = { now: () => new Date().toISOString() };
const uuids: IdSource = { next: () => randomUUID() };

/** An idempotency key's scope and the hash of the request it came with. */
export interface IdempotencyClaim {
  scope: string;
  key: string;
  requestHash: string;
}

/** What a thread command does with the loaded state: the event to record and the answer. */
export interface ThreadStep<T> {
  plan(state: ThreadState, now: string): Result<ThreadEvent>;
  respond(committed: Committed): T;
}

/**
 * The engine's runtime: the ports, the thread cache, and the one write path every command takes
 * — load → plan → commitEvent → persist (entry + read models + idempotency record, one
 * transaction) → publish after commit.
 */
export function createRuntime(options: EngineOptions) {
  const store: ThreadStore =
    options.store ??
    (options.databaseUrl !== undefined
      ? openThreadStore(options.databaseUrl, options.storeOptions)
      : missing('createEngine needs a databaseUrl or a store'));
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? uuids;
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  const machineOptions: ThreadMachineOptions = {
    ...options.machineOptions,
    importLimits: { maxPayloadBytes, ...options.machineOptions?.importLimits },
  };
  const maxAttempts = Math.max(1, options.maxAttempts ?? 5);
  const cache = createThreadCache(options.cacheSize ?? 1000);
  const withLock = lockFor(store);
  const onPublishError =
    options.onPublishError ??
    ((error: unknown, event: CommittedEvent) =>
      console.error(`weft: publishing entry of thread ${event.threadId} failed`, error));

  /**
   * The latest state of a thread: the cached one, or (with `refresh`, or when nothing is cached)
   * the cached one caught up with the entries stored after it. NOT_FOUND for an unknown thread.
   */
  async function load(threadId: string, refresh = false): Promise<Result<ThreadState>> {
    const cached = cache.get(threadId);
    if (cached !== undefined && !refresh) return ok(cached);
    const tail = await store.readEntries(threadId, cached?.length ?? 0);
    if (cached === undefined && tail.length === 0) return err(threadNotFound(threadId));
    let state = cached ?? createThreadMachine().initial;
    if (tail.length > 0) {
      const signed = tail.every((e) => e.verification?.stateHash !== undefined);
      const machine = createThreadMachine({ ...machineOptions, trustRecordedIds: signed });
      for (const entry of tail) {
        const applied = machine.apply(state, entry);
        if (!applied.ok) return applied;
        if (
          entry.verification !== undefined &&
          entry.verification.stateHash !== applied.value[0].stateHash
        ) {
          return err({
            code: 'VERIFICATION_FAILED',
            message: `thread ${threadId} entry ${entry.index} does not match its state hash: run verify`,
            index: entry.index,
            entryId: entry.id,
          });
        }
        state = applied.value[0];
      }
      cache.set(threadId, state);
    }
    return ok(state);
  }

  async function publish(event: CommittedEvent): Promise<void> {
    if (options.publisher === undefined) return;
    try {
      await options.publisher.publish(event);
    } catch (error) {
      onPublishError(error, event);
    }
  }

  const stamp = (now: string) => ({ id: ids.next(), recordedAt: now });

  const record = <T>(
    claim: IdempotencyClaim | undefined,
    threadId: string,
    response: T,
    now: string,
  ): IdempotencyRecord | undefined =>
    claim === undefined
      ? undefined
      : { ...claim, response: canonicalJson(response), threadId, createdAt: new Date(now) };

  /**
   * Commits one event on an existing thread. Without `expectedIndex`, a race lost to another
   * writer reloads and plans again (up to maxAttempts); with it, a stale index is CONFLICT.
   */
  function onThread<T>(
    threadId: string,
    expectedIndex: number | undefined,
    claim: IdempotencyClaim | undefined,
    step: ThreadStep<T>,
  ): Promise<Result<T>> {
    return withLock(threadId, async () => {
      let refresh = false;
      for (let attempt = 1; ; attempt++) {
        const loaded = await load(threadId, refresh);
        if (!loaded.ok) return loaded;
        const state = loaded.value;
        if (expectedIndex !== undefined && expectedIndex !== state.length) {
          // The cache may be behind the database: judge only a state caught up just now.
          if (refresh) return err(conflict(threadId, expectedIndex, state.length));
          refresh = true;
          continue;
        }
        const now = clock.now();
        const event = step.plan(state, now);
        if (!event.ok) return event;
        const committed = commitEvent(state, event.value, stamp(now), machineOptions);
        if (!committed.ok) return committed;
        const response = step.respond(committed.value);
        const { entry, effects } = committed.value;
        const changes = projectEntry(state, committed.value.state, effects, entry, threadId);
        const written = await store.commit(changes, {
          idempotency: record(claim, threadId, response, now),
        });
        if (written.ok) {
          cache.set(threadId, committed.value.state);
          await publish({ threadId, entries: [entry], effects, logLength: entry.index + 1 });
          return ok(response);
        }
        if (written.error.code !== 'CONFLICT') return written;
        if (expectedIndex !== undefined) {
          const actualIndex = written.error.actualIndex;
          return err(conflict(threadId, expectedIndex, actualIndex));
        }
        if (attempt >= maxAttempts) return written;
        refresh = true;
      }
    });
  }

  /** Commits precomputed changes of a new thread (create, import, fork). */
  function newThread<T>(
    threadId: string,
    changes: ReadModelChanges,
    state: ThreadState,
    claim: IdempotencyClaim | undefined,
    response: T,
    now: string,
    published: Omit<CommittedEvent, 'threadId' | 'logLength'>,
  ): Promise<Result<T>> {
    return withLock(threadId, async () => {
      const written = await store.commit(changes, {
        idempotency: record(claim, threadId, response, now),
      });
      if (!written.ok) {
        if (written.error.code !== 'CONFLICT') return written;
        return err({
          ...written.error,
          message: `thread ${threadId} already exists: choose another id`,
        });
      }
      cache.set(threadId, state);
      await publish({ threadId, ...published, logLength: state.length });
      return ok(response);
    });
  }

  /**
   * Runs `command` under an idempotency key: a stored record with the same request hash
   * answers with the stored response and writes nothing; a different request is
   * IDEMPOTENCY_KEY_REUSED. A concurrent first use is settled by the record's unique key.
   */
  async function idempotent<T>(
    scope: string,
    key: string | undefined,
    request: unknown,
    command: (claim: IdempotencyClaim | undefined) => Promise<Result<T>>,
  ): Promise<Result<T>> {
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
    // The first answer is the stored one, exactly: a retry must not see a different shape.
    return result.ok ? ok(JSON.parse(canonicalJson(result.value)) as T) : result;
  }

  return {
    store,
    clock,
    ids,
    maxPayloadBytes,
    machineOptions,
    cache,
    load,
    onThread,
    newThread,
    idempotent,
    stamp,
  };
}

export type Runtime = ReturnType<typeof createRuntime>;

/**
 * Commands on one thread run one after another per store: engines sharing a store object (and
 * so its writer) share these locks too. Otherwise two engines' commands on one thread would land
 * in the same group commit, planned on the same state, and the one queued second would lose
 * every time to the other engine's next command (which plans from its cache, with no reload).
 */
const storeLocks = new WeakMap<ThreadStore, ReturnType<typeof createKeyedLock>>();

function lockFor(store: ThreadStore): ReturnType<typeof createKeyedLock> {
  let lock = storeLocks.get(store);
  if (lock === undefined) {
    lock = createKeyedLock();
    storeLocks.set(store, lock);
  }
  return lock;
}

function missing(message: string): never {
  throw new Error(message);
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

const keyReused = (scope: string, key: string): WeftError => ({
  code: 'IDEMPOTENCY_KEY_REUSED',
  message: `idempotency key ${key} was already used for a different ${scope} request: use a new key`,
  key,
});
