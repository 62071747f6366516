/**
 * The one write path every command takes: under the thread's lock, load → plan → commitEvent →
 * persist (entry + read models + snapshot when due + idempotency record, one transaction) →
 * update the cache → publish after commit. A lost race re-plans on the caught-up state.
 */
import { err, ok, type Result } from '../core/errors.js';
import type { NodeSalt } from '../core/graph/index.js';
import type { Clock, IdSource } from '../core/ports.js';
import {
  type Committed,
  commitEvent,
  type EntryStamp,
  type ThreadEvent,
  type ThreadMachineOptions,
  type ThreadState,
  withPayloadSalt,
} from '../core/thread/index.js';
import {
  DEFAULT_TENANT,
  type Pause,
  projectEntry,
  type ReadModelChanges,
  type ThreadStore,
} from '../store/read-model/index.js';
import { conflict } from './checks.js';
import { carrying, committedViews } from './committed.js';
import { type IdempotencyClaim, idempotencyRecord } from './idempotency.js';
import type { PayloadSalts } from './payload-salts.js';
import type { SnapshotWriter } from './snapshots.js';
import type { ThreadTenants } from './tenancy.js';
import type { Derivation, KeyedLock, LoadThread, ThreadCache } from './thread-cache.js';
import type { CommittedEvent, Publisher } from './types.js';

/** What a thread command does with the loaded state: the event to record and the answer. */
export interface ThreadStep<T> {
  plan(state: ThreadState, now: string): Result<ThreadEvent>;
  respond(committed: Committed): T;
}

export interface CommitDeps {
  store: Pick<ThreadStore, 'commit'>;
  clock: Clock;
  ids: IdSource;
  machineOptions: ThreadMachineOptions;
  /** Attempts of a command without expectedIndex that keeps losing races (at least 1). */
  maxAttempts: number;
  cache: ThreadCache;
  load: LoadThread;
  snapshots: SnapshotWriter;
  /** Serialises the commands on one thread: one lock per runtime, shared by its tenant views. */
  withLock: KeyedLock;
  /** Learns the owner of each thread this runtime creates; names the owner of a thread written. */
  tenants: Pick<ThreadTenants, 'remember' | 'known'>;
  /** Which threads salt their payloads: their commands plan on a salted view. */
  salts: PayloadSalts;
  publisher?: Publisher | undefined;
  onPublishError: (error: unknown, event: CommittedEvent) => void;
}

export interface Committer {
  /** The id and time of an entry recorded at `now`. */
  stamp(now: string): EntryStamp;
  /**
   * Commits one event on an existing thread. Without `expectedIndex`, a race lost to another
   * writer reloads and plans again (up to maxAttempts); with it, a stale index is CONFLICT.
   */
  onThread<T>(
    threadId: string,
    expectedIndex: number | undefined,
    claim: IdempotencyClaim | undefined,
    step: ThreadStep<T>,
  ): Promise<Result<T>>;
  /** Tells subscribers the thread was deleted (after commit). */
  publishDeleted(threadId: string): Promise<void>;
  /** Forgets what the snapshot writer knows of a thread whose snapshots were removed. */
  forgetSnapshots(threadId: string): void;
  /** Tells subscribers of entries committed outside onThread (after commit). */
  publish(event: CommittedEvent): Promise<void>;
  /** Attempts of a command that keeps losing races (CommitDeps.maxAttempts). */
  readonly maxAttempts: number;
  /** Runs `work` while no other command of this engine runs on the thread. */
  exclusive<T>(threadId: string, work: () => Promise<T>): Promise<T>;
  /**
   * Commits precomputed changes of a new thread (create, import, fork). `under`: what a fork's
   * state was derived under (its source lineage's derivation, taken before reading the source);
   * a fork without one is not cached.
   */
  newThread<T>(
    threadId: string,
    changes: ReadModelChanges,
    state: ThreadState,
    claim: IdempotencyClaim | undefined,
    response: T,
    now: string,
    published: Omit<CommittedEvent, 'threadId' | 'logLength'>,
    under?: Derivation,
    /** For a thread of very many nodes (an import): its rows are stored in time slices. */
    pause?: Pause,
  ): Promise<Result<T>>;
}

/** What preparing a commit needs of the committer. */
interface CommitParts {
  stamp: (now: string) => EntryStamp;
  plannedOptions: ThreadMachineOptions;
  snapshots: CommitDeps['snapshots'];
  tenants: CommitDeps['tenants'];
}

/**
 * One command's entry planned on `state` (salted for planning in a salted thread), committed
 * in memory and projected into the rows to write, with the snapshot due after it and the views
 * its answer shows. Nothing is written.
 */
function prepareCommit<T>(
  { stamp, plannedOptions, snapshots, tenants }: CommitParts,
  threadId: string,
  state: ThreadState,
  salt: NodeSalt | undefined,
  step: ThreadStep<T>,
  now: string,
) {
  const event = step.plan(salt === undefined ? state : withPayloadSalt(state, salt), now);
  if (!event.ok) return event;
  const committed = commitEvent(state, event.value, stamp(now), plannedOptions);
  if (!committed.ok) return committed;
  const response = step.respond(committed.value);
  const { entry, effects, text, parts } = committed.value;
  const changes = projectEntry(state, committed.value.state, effects, entry, threadId, text, parts);
  const snapshot = snapshots.after(threadId, state, committed.value.state, entry.recordedAt);
  if (snapshot !== undefined) changes.snapshots = [snapshot.row];
  const views = committedViews(changes, committed.value.state, {
    tenantId: tenants.known(threadId),
    salted: salt !== undefined,
    // Not in the log: whoever shows it reads it.
    expiresAt: undefined,
  });
  return ok({ committed: committed.value, response, changes, snapshot, views });
}

export function createCommitter(deps: CommitDeps): Committer {
  const { store, clock, ids, machineOptions, maxAttempts, cache, load, snapshots, withLock } = deps;
  const { tenants } = deps;
  // Every event committed here was just planned by the core from the state it is applied to: the
  // ids of the nodes it records were computed from their content by the same code one step
  // earlier, so applying it takes them as recorded instead of hashing every node a second time.
  // (Imports, whose ids come from elsewhere, commit through thread-commands and are checked.)
  const plannedOptions: ThreadMachineOptions = { ...machineOptions, trustRecordedIds: true };

  async function publish(event: CommittedEvent): Promise<void> {
    if (deps.publisher === undefined) return;
    try {
      await deps.publisher.publish(event);
    } catch (error) {
      deps.onPublishError(error, event);
    }
  }

  const stamp = (now: string): EntryStamp => ({ id: ids.next(), recordedAt: now });
  const parts: CommitParts = { stamp, plannedOptions, snapshots, tenants };

  function onThread<T>(
    threadId: string,
    expectedIndex: number | undefined,
    claim: IdempotencyClaim | undefined,
    step: ThreadStep<T>,
  ): Promise<Result<T>> {
    return withLock(threadId, async () => {
      let salt = await deps.salts.of(threadId);
      let refresh = false;
      for (let attempt = 1; ; attempt++) {
        const loaded = await load(threadId, refresh);
        if (!loaded.ok) return loaded;
        // Behind the database, the thread may have been deleted and made again elsewhere.
        if (refresh) {
          deps.salts.forget(threadId);
          salt = await deps.salts.of(threadId);
        }
        const state = loaded.value;
        if (expectedIndex !== undefined && expectedIndex !== state.length) {
          // The cache may be behind the database: judge only a state caught up just now.
          if (refresh) return err(conflict(threadId, expectedIndex, state.length));
          refresh = true;
          continue;
        }
        const now = clock.now();
        const prepared = prepareCommit(parts, threadId, state, salt, step, now);
        if (!prepared.ok) return prepared;
        const { committed, response, changes, snapshot, views } = prepared.value;
        const { entry, effects, text } = committed;
        const written = await store.commit(changes, {
          idempotency: idempotencyRecord(claim, threadId, response, now),
        });
        if (written.ok) {
          cache.set(threadId, committed.state, { from: state, texts: [text] });
          snapshot?.committed();
          await publish({ threadId, entries: [entry], effects, logLength: entry.index + 1 });
          return ok(carrying(response, views));
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

  function newThread<T>(
    threadId: string,
    changes: ReadModelChanges,
    state: ThreadState,
    claim: IdempotencyClaim | undefined,
    response: T,
    now: string,
    published: Omit<CommittedEvent, 'threadId' | 'logLength'>,
    given?: Derivation,
    pause?: Pause,
  ): Promise<Result<T>> {
    // A new thread of its own is the root of its lineage; a fork's state came from its source's.
    const under =
      given ?? (changes.thread.baseThreadId == null ? cache.derivation(threadId) : undefined);
    const snapshot = snapshots.ofNewThread(threadId, state, now, changes.snapshots);
    if (snapshot !== undefined) changes.snapshots = [...(changes.snapshots ?? []), snapshot.row];
    // A new thread's row is whole (its tenant, expiry and salt set). An import's nodes are no
    // part of its answer: only the frontier's are shown.
    const row = changes.thread;
    const views = committedViews({ ...changes, nodes: [] }, state, {
      tenantId: row.tenantId ?? DEFAULT_TENANT,
      salted: row.payloadSalt != null,
      expiresAt: row.expiresAt ?? null,
    });
    return withLock(threadId, async () => {
      const written = await store.commit(changes, {
        idempotency: idempotencyRecord(claim, threadId, response, now),
        pause,
      });
      if (!written.ok) {
        if (written.error.code !== 'CONFLICT') return written;
        return err({
          ...written.error,
          message: `thread ${threadId} already exists: choose another id`,
        });
      }
      cache.set(threadId, state, {
        texts: changes.entries.map((row) => row.entry),
        ...(under === undefined ? {} : { under }),
      });
      tenants.remember(threadId, changes.thread.tenantId ?? DEFAULT_TENANT);
      deps.salts.forget(threadId);
      snapshot?.committed();
      await publish({ threadId, ...published, logLength: state.length });
      return ok(carrying(response, views));
    });
  }

  const publishDeleted = (threadId: string) => {
    deps.salts.forget(threadId);
    return publish({ threadId, entries: [], effects: [], logLength: 0, deleted: true });
  };
  return {
    stamp,
    onThread,
    newThread,
    exclusive: withLock,
    publishDeleted,
    publish,
    maxAttempts,
    forgetSnapshots: (threadId) => snapshots.forget(threadId),
  };
}

/** Sleeps a random 0–2^attempt ms (at most ~100 ms) between attempts of a lost race. */
function backoff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(100, 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, ms));
}
