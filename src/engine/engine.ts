/**
 * The engine's runtime: the ports and options resolved once, and the parts every command uses,
 * each in its own module — the thread cache and its loader (thread-cache.ts), snapshot writing
 * (snapshots.ts) and time travel (snapshot-restore.ts), idempotency (idempotency.ts) and the one
 * write path (commit.ts). This file only wires them.
 */
import { randomUUID } from 'node:crypto';
import type { Result } from '../core/errors.js';
import type { Clock, IdSource } from '../core/ports.js';
import type { ThreadMachineOptions, ThreadState } from '../core/thread/index.js';
import { createInvalidations } from '../store/cache.js';
import { openThreadStore, type ThreadStore } from '../store/read-model/index.js';
import { type Committer, createCommitter } from './commit.js';
import { createIdempotent, type Idempotent } from './idempotency.js';
import { resolveEngineOptions } from './options.js';
import { createPayloadSalts, type PayloadSalts } from './payload-salts.js';
import { createSnapshotRestorer } from './snapshot-restore.js';
import { createSnapshotWriter } from './snapshots.js';
import { createThreadTenants, type ThreadTenants } from './tenancy.js';
import {
  createKeyedLock,
  createThreadCache,
  createThreadLoader,
  type LoadThread,
  lineageRoot,
  type ThreadCache,
} from './thread-cache.js';
import type { CommittedEvent, EngineOptions, SnapshotPolicy } from './types.js';

const systemClock: Clock = { now: () => new Date().toISOString() };
const uuids: IdSource = { next: () => randomUUID() };
/**
 * Threads whose last full snapshot the snapshot writer remembers (a few ids and run maps each,
 * shared with the states): a count, unlike the state cache, since its entries are small.
 */
const SNAPSHOT_BASES = 1000;

/** What the commands are built on (see createRuntime). */
export interface Runtime extends Committer {
  store: ThreadStore;
  clock: Clock;
  ids: IdSource;
  maxPayloadBytes: number;
  /** How long a large command holds the event loop before others get a turn (ms). */
  sliceMs: number;
  machineOptions: ThreadMachineOptions;
  cache: ThreadCache;
  load: LoadThread;
  /** The state after the first `at` entries of a thread whose latest state is `latest`. */
  stateAt(threadId: string, at: number, latest: ThreadState): Promise<Result<ThreadState>>;
  snapshots: SnapshotPolicy | false;
  idempotent: Idempotent;
  /** Which tenant owns each thread, remembered for this runtime (see tenancy.ts). */
  tenants: ThreadTenants;
  /** Which threads salt their payloads (payload-salts.ts). */
  salts: PayloadSalts;
  /** The retention default in days (retention.ts); undefined: none. */
  retentionDays: number | undefined;
  /**
   * Runs `work(root)` while no other work of this engine runs in the lineage of `threadId`
   * (every thread sharing history with it has the same root): forks and redactions go through
   * it, so a fork is either made before a redaction, and shares it, or reads after it.
   */
  inLineage<T>(threadId: string, work: (root: string) => Promise<T>): Promise<T>;
}

/**
 * The engine's runtime: the ports, the thread cache, and the one write path every command takes
 * — load → plan → commitEvent → persist (entry + read models + idempotency record, one
 * transaction) → publish after commit.
 */
export function createRuntime(given: EngineOptions): Runtime {
  const options = resolveEngineOptions(given);
  const store: ThreadStore =
    options.store ??
    (options.databaseUrl !== undefined
      ? openThreadStore(options.databaseUrl, options.storeOptions)
      : missing('createEngine needs a databaseUrl or a store'));
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? uuids;
  const { maxPayloadBytes, retentionDays, machineOptions, snapshots } = options;
  const onSnapshotRejected =
    options.onSnapshotRejected ??
    ((threadId: string, index: number, reason: string) =>
      console.warn(`weft: snapshot ${index} of thread ${threadId} ignored: ${reason}`));
  // What makes a thread-derived value stale, shared by every cache of this runtime: a deletion
  // or redaction the thread cache is told of reaches the salts, tenants and snapshot bases too.
  const invalidations = createInvalidations();
  const cache = createThreadCache(options.cacheBytes, invalidations);
  const salts = createPayloadSalts(store, invalidations);
  const loadState = createThreadLoader(store, cache, machineOptions);
  // A thread's salt is looked up beside its state: a command after a read then reaches the
  // writer with no read of its own first (and joins the group commit of its turn).
  const load: typeof loadState = async (threadId, refresh) => {
    const [loaded] = await Promise.all([loadState(threadId, refresh), salts.of(threadId)]);
    return loaded;
  };
  const restorer = createSnapshotRestorer(store, machineOptions, onSnapshotRejected);
  const tenants = createThreadTenants(store, invalidations);
  const locks = createKeyedLock();
  const committer = createCommitter({
    tenants,
    salts,
    store,
    clock,
    ids,
    machineOptions,
    maxAttempts: options.maxAttempts,
    cache,
    load,
    snapshots: createSnapshotWriter(snapshots, SNAPSHOT_BASES, invalidations),
    // Commands on one thread run one after another in this runtime (every tenant view of the
    // engine shares it), so the cached state they plan on is current unless someone else wrote.
    withLock: locks,
    publisher: options.publisher,
    onPublishError:
      options.onPublishError ??
      ((error: unknown, event: CommittedEvent) =>
        console.error(`weft: publishing entry of thread ${event.threadId} failed`, error)),
  });
  return {
    store,
    clock,
    ids,
    maxPayloadBytes,
    sliceMs: options.sliceMs,
    machineOptions,
    cache,
    load,
    stateAt: (threadId, at, latest) => restorer.stateAt(threadId, at, latest),
    snapshots,
    idempotent: createIdempotent(store),
    tenants,
    salts,
    retentionDays,
    async inLineage(threadId, work) {
      const root = await lineageRoot(store, threadId);
      // NUL never occurs in a thread's key, so this lock is no thread's.
      return locks(`\u0000lineage\u0000${root}`, () => work(root));
    },
    ...committer,
  };
}

function missing(message: string): never {
  throw new Error(message);
}
