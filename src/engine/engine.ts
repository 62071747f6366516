import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import type { LogEntry } from '../core/log/index.js';
import type { Clock, IdSource } from '../core/ports.js';
import { findInputIssue, findTextIssue } from '../core/text.js';
import { foldThreadLog } from '../core/thread/fold.js';
import {
  type Committed,
  commitEvent,
  createThreadMachine,
  type ThreadEvent,
  type ThreadMachineOptions,
  type ThreadState,
} from '../core/thread/index.js';
import {
  applySnapshotDelta,
  parseStoredSnapshot,
  restoreParsedSnapshot,
  type SnapshotBase,
  serializeThreadSnapshot,
  serializeThreadSnapshotDelta,
  THREAD_SNAPSHOT_FORMAT,
  type ThreadSnapshot,
  type ThreadSnapshotDelta,
} from '../core/thread/snapshot.js';
import {
  type IdempotencyRecord,
  openThreadStore,
  projectEntry,
  type ReadModelChanges,
  type SnapshotRow,
  type ThreadStore,
} from '../store/read-model/index.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from './checks.js';
import { createKeyedLock, createThreadCache } from './thread-cache.js';
import type { CommittedEvent, EngineOptions, SnapshotPolicy } from './types.js';

/** A log entry with the canonical text it was read from. */
interface StoredEntry {
  entry: LogEntry;
  text: string;
}

/**
 * Default snapshot spacing: a snapshot every 100 entries / 1,000 nodes, so a stateAt replays at
 * most ~100 entries / ~1,000 nodes; every 10th is full, the others hold only the runs changed
 * since the last full one (see src/core/thread/snapshot.ts).
 */
export const DEFAULT_SNAPSHOT_POLICY: Required<SnapshotPolicy> = {
  entries: 100,
  nodes: 1000,
  fullEvery: 10,
};

export type SnapshotKind = 'full' | 'delta';

/**
 * Whether the step from `prev` to `next` crosses a snapshot point of `policy`, and which kind:
 * the log length to a multiple of `entries`, or the node count across a multiple of `nodes`;
 * `full` when that is also a multiple of `fullEvery` times either. Stateless, so every writer
 * (and a rebuild) puts snapshots at the same points.
 */
export function snapshotPointKind(
  policy: SnapshotPolicy | false,
  prev: ThreadState,
  next: ThreadState,
): SnapshotKind | undefined {
  if (policy === false || next.length === 0) return undefined;
  const crosses = (every: number | undefined, scale: number, a: number, b: number) =>
    every !== undefined &&
    every > 0 &&
    Math.floor(a / (every * scale)) < Math.floor(b / (every * scale));
  const at = (scale: number) =>
    crosses(policy.entries, scale, prev.length, next.length) ||
    crosses(policy.nodes, scale, prev.graph.count, next.graph.count);
  const fullEvery = Math.max(1, Math.floor(policy.fullEvery ?? DEFAULT_SNAPSHOT_POLICY.fullEvery));
  if (at(fullEvery)) return 'full';
  return at(1) ? 'delta' : undefined;
}

/** Whether the step from `prev` to `next` crosses a snapshot point of `policy` (either kind). */
export function crossesSnapshotPoint(
  policy: SnapshotPolicy | false,
  prev: ThreadState,
  next: ThreadState,
): boolean {
  return snapshotPointKind(policy, prev, next) !== undefined;
}

/**
 * The snapshot row of `state` (taken after the entry recorded at `recordedAt`): a delta against
 * `base` when `kind` is delta and the state extends that base, else full. Also returns the base
 * for the deltas after it (this snapshot when it is full) — to be kept only once the row is
 * committed.
 */
export function snapshotRow(
  threadId: string,
  state: ThreadState,
  recordedAt: string,
  kind: SnapshotKind = 'full',
  base?: SnapshotBase,
): { row: SnapshotRow; base: SnapshotBase | undefined } {
  const delta =
    kind === 'delta' && base !== undefined ? serializeThreadSnapshotDelta(state, base) : undefined;
  const text = delta ?? serializeThreadSnapshot(state);
  const checksum = sha256Hex(text);
  const row: SnapshotRow = {
    threadId,
    index: state.length,
    stateHash: state.stateHash,
    checksum,
    state: text,
    createdAt: new Date(recordedAt),
  };
  return {
    row,
    base:
      delta !== undefined
        ? base
        : { length: state.length, checksum, runs: state.runs, runOrder: state.runOrder },
  };
}

/**
 * Per thread, the last full snapshot this engine committed: what its delta snapshots are
 * written against (a thread without one gets a full snapshot). Least recently used evicted.
 */
function createSnapshotBases(capacity: number) {
  const bases = new Map<string, SnapshotBase>();
  return {
    get(threadId: string): SnapshotBase | undefined {
      const base = bases.get(threadId);
      if (base !== undefined) {
        bases.delete(threadId);
        bases.set(threadId, base);
      }
      return base;
    },
    set(threadId: string, base: SnapshotBase): void {
      const current = bases.get(threadId);
      if (current !== undefined && current.length > base.length) return;
      bases.delete(threadId);
      bases.set(threadId, base);
      if (bases.size > capacity) bases.delete(bases.keys().next().value as string);
    },
  };
}

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
  const maxAttempts = Math.max(1, options.maxAttempts ?? 30);
  const snapshots: SnapshotPolicy | false =
    options.snapshots === false ? false : { ...DEFAULT_SNAPSHOT_POLICY, ...options.snapshots };
  const onSnapshotRejected =
    options.onSnapshotRejected ??
    ((threadId: string, index: number, reason: string) =>
      console.warn(`weft: snapshot ${index} of thread ${threadId} ignored: ${reason}`));
  const cache = createThreadCache(options.cacheSize ?? 1000);
  const bases = createSnapshotBases(options.cacheSize ?? 1000);
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
    if (tail.length === 0) return cached === undefined ? err(threadNotFound(threadId)) : ok(cached);
    const folded = foldThreadLog(tail, {
      machine: machineOptions,
      ...(cached === undefined ? {} : { from: cached }),
    });
    if (!folded.ok) {
      return err({ ...folded.error, message: `thread ${threadId}: ${folded.error.message}` });
    }
    cache.set(threadId, folded.value);
    return folded;
  }

  /**
   * The state after the first `at` entries of a thread whose latest state is `latest`: from the
   * newest usable snapshot at or before `at` plus the replay of the entries after it, or else by
   * replaying the whole prefix. A snapshot is used only when its checksum, index and state hash
   * agree with its row and its state hash with the log entry it follows — a delta also only with
   * the full snapshot it names, checked the same way; one that fails is reported (the row at
   * fault) and skipped. Either way the answer is the replay's.
   */
  async function stateAt(
    threadId: string,
    at: number,
    latest: ThreadState,
  ): Promise<Result<ThreadState>> {
    if (at === latest.length) return ok(latest);
    if (at === 0) return ok(createThreadMachine().initial);
    // Newest first; an older one only when a newer one was rejected (at most three tries).
    let atMost = at;
    for (let tries = 0; tries < 3 && atMost >= 1; tries++) {
      const [row] = await store.findSnapshots(threadId, atMost, 1);
      if (row === undefined) break;
      const restored = await fromSnapshot(threadId, row, at, latest);
      if (restored.ok) return restored;
      const { index, reason } = restored.error;
      onSnapshotRejected(threadId, index, reason);
      atMost = Math.min(row.index, index) - 1;
    }
    return replayFrom(machineOptions, createThreadMachine().initial, await read(threadId, 0, at));
  }

  /** Why a snapshot row was not used: the row at fault (a delta's base, say) and the reason. */
  type Rejection = { index: number; reason: string };

  /** A row's snapshot, full or delta, if its checksum, shape, index and state hash agree. */
  function checkedRow(
    row: SnapshotRow,
  ): { ok: true; value: ThreadSnapshot | ThreadSnapshotDelta } | { ok: false; error: Rejection } {
    const rejected = (reason: string) => ({
      ok: false as const,
      error: { index: row.index, reason },
    });
    if (row.index < 1) return rejected('its index is not a log length after an entry');
    if (sha256Hex(row.state) !== row.checksum) return rejected('its checksum does not match');
    const parsed = parseStoredSnapshot(row.state);
    if (!parsed.ok) return rejected(parsed.error.message);
    const snapshot = parsed.value;
    if (snapshot.length !== row.index || snapshot.stateHash !== row.stateHash) {
      return rejected('its content does not match its index and state hash columns');
    }
    return { ok: true, value: snapshot };
  }

  /** The full snapshot a checked row stands for (a delta resolved against its checked base). */
  async function checkedSnapshot(
    threadId: string,
    row: SnapshotRow,
  ): Promise<{ ok: true; value: ThreadSnapshot } | { ok: false; error: Rejection }> {
    const rejected = (reason: string, index = row.index) => ({
      ok: false as const,
      error: { index, reason },
    });
    const checked = checkedRow(row);
    if (!checked.ok) return checked;
    const snapshot = checked.value;
    if (snapshot.format === THREAD_SNAPSHOT_FORMAT) return { ok: true, value: snapshot };
    const baseIndex = snapshot.base.length;
    const [baseRow] =
      baseIndex >= 1 && baseIndex < row.index
        ? await store.findSnapshots(threadId, baseIndex, 1)
        : [];
    if (baseRow?.index !== baseIndex) {
      return rejected(`the full snapshot at ${baseIndex} it is relative to is missing`);
    }
    if (baseRow.checksum !== snapshot.base.checksum) {
      return rejected(`the full snapshot at ${baseIndex} it is relative to has changed`);
    }
    const base = checkedRow(baseRow);
    if (!base.ok) return base;
    if (base.value.format !== THREAD_SNAPSHOT_FORMAT) {
      return rejected(`the snapshot at ${baseIndex} it is relative to is not full`, baseIndex);
    }
    // A delta's base is never resolved in turn: it must be full.
    const merged = applySnapshotDelta(snapshot, base.value, baseRow.checksum);
    return merged.ok ? merged : rejected(merged.error.message);
  }

  async function fromSnapshot(
    threadId: string,
    row: SnapshotRow,
    at: number,
    latest: ThreadState,
  ): Promise<{ ok: true; value: ThreadState } | { ok: false; error: Rejection }> {
    const rejected = (reason: string) => ({
      ok: false as const,
      error: { index: row.index, reason },
    });
    const snapshot = await checkedSnapshot(threadId, row);
    if (!snapshot.ok) return snapshot;
    // The entry the snapshot follows must carry its state hash: the tie to the log.
    const [anchor, ...tail] = await read(threadId, row.index - 1, at);
    if (anchor?.entry.verification?.stateHash !== row.stateHash) {
      return rejected(`its state hash is not the one of log entry ${row.index - 1}`);
    }
    // Sharing the latest state's storage: the tail replay re-appends the very nodes that state
    // holds after the snapshot's, so it fast-forwards over them instead of copying the storage.
    const restored = restoreParsedSnapshot(snapshot.value, latest);
    if (!restored.ok) return rejected(restored.error.message);
    const replayed = replayFrom(machineOptions, restored.value, tail);
    if (!replayed.ok) {
      return rejected(`the entries after it do not replay from it: ${replayed.error.message}`);
    }
    return replayed;
  }

  /** Entries [from, to) with the texts they were read from. */
  async function read(threadId: string, from: number, to: number): Promise<StoredEntry[]> {
    const texts = await store.readEntryTexts(threadId, from, to);
    return texts.map((text) => ({ text, entry: JSON.parse(text) as LogEntry }));
  }

  /** Folds `entries` (the log from `state.length` on) onto `state`. */
  function replayFrom(
    options: ThreadMachineOptions,
    state: ThreadState,
    entries: readonly StoredEntry[],
  ): Result<ThreadState> {
    return foldThreadLog(
      entries.map((e) => e.entry),
      { machine: options, from: state, texts: entries.map((e) => e.text) },
    );
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
        const kind = snapshotPointKind(snapshots, state, committed.value.state);
        const snapshot =
          kind === undefined
            ? undefined
            : snapshotRow(
                threadId,
                committed.value.state,
                entry.recordedAt,
                kind,
                bases.get(threadId),
              );
        if (snapshot !== undefined) changes.snapshots = [snapshot.row];
        const written = await store.commit(changes, {
          idempotency: record(claim, threadId, response, now),
        });
        if (written.ok) {
          cache.set(threadId, committed.value.state);
          if (snapshot?.base !== undefined) bases.set(threadId, snapshot.base);
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
        // A writer whose next command starts from a cached state beats one that reloads, every
        // time: back off (jittered, growing) so a steady competitor cannot starve this one.
        await backoff(attempt);
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
    // Full: the engine knows no base for a thread it has not written yet.
    const snapshot =
      crossesSnapshotPoint(snapshots, createThreadMachine().initial, state) &&
      !changes.snapshots?.some((s) => s.index === state.length)
        ? snapshotRow(threadId, state, now)
        : undefined;
    if (snapshot !== undefined) changes.snapshots = [...(changes.snapshots ?? []), snapshot.row];
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
      if (snapshot?.base !== undefined) bases.set(threadId, snapshot.base);
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
    stateAt,
    snapshots,
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

/**
 * Deepest nesting a command's request may have. Above the core's own bounds on the values in it
 * (256 for run values and metadata, 512 for node payloads, plus the request's own levels), so
 * those name the problem first; this one only keeps the request hash from overflowing the stack.
 */
export const MAX_REQUEST_DEPTH = 1024;

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

/** Sleeps a random 0–2^attempt ms (at most ~100 ms) between attempts of a lost race. */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(100, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
