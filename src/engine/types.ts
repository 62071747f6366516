import type { Result, WeftError } from '../core/errors.js';
import type { AgentState, CausalNode, SemanticNodeType } from '../core/graph/index.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import type { LogEntry, VerifyReport } from '../core/log/index.js';
import type { Clock, IdSource } from '../core/ports.js';
import type {
  NodeInput,
  ThreadEffect,
  ThreadMachineOptions,
  ThreadState,
} from '../core/thread/index.js';
import type { RunAsOf } from '../core/thread/runs-at.js';
import type {
  EntryReads,
  RunKey,
  ThreadStore,
  ThreadStoreOptions,
} from '../store/read-model/index.js';
import type { CarriesCommitted } from './committed.js';
import type { ThreadTenants } from './tenancy.js';
import type { ThreadCacheStats } from './thread-cache.js';

/** What the engine announces after a transaction committed: the wake-up for subscribers. */
export interface CommittedEvent {
  threadId: string;
  /** The entries the command appended (a fork: the copied prefix and its `thread_forked`). */
  entries: LogEntry[];
  effects: ThreadEffect[];
  logLength: number;
  /** The thread was deleted (no entries): its subscribers end. */
  deleted?: true;
}

/** The publisher port: called after commit, in commit order per thread. Failures are reported, never undone. */
export interface Publisher {
  publish(event: CommittedEvent): void | Promise<void>;
}

export interface EngineOptions {
  /** A database URL (SQLite `file:…`, `postgres://…`), already migrated; or give `store`. */
  databaseUrl?: string;
  /** How the store opened on `databaseUrl` writes (group commit: see ThreadStoreOptions). */
  storeOptions?: ThreadStoreOptions;
  store?: ThreadStore;
  clock?: Clock;
  ids?: IdSource;
  publisher?: Publisher;
  /** Called when the publisher throws or rejects. Default: console.error. */
  onPublishError?: (error: unknown, event: CommittedEvent) => void;
  machineOptions?: Omit<ThreadMachineOptions, 'trustRecordedIds'>;
  /** Largest canonical JSON size of one payload-like value (node payload, memory, action). Default 1 MiB. */
  maxPayloadBytes?: number;
  /**
   * How long a large command (importState) holds the event loop before other clients get a
   * turn, in ms (default 15; 0: a turn at every step of it). See store/read-model/time-slices.ts.
   */
  sliceMs?: number;
  /**
   * Bound on the estimated heap bytes of the thread states kept in memory (least recently used
   * evicted first; see src/engine/thread-cache.ts for the estimate). Default 256 MiB.
   */
  cacheBytes?: number;
  /** Attempts of a command without expectedIndex that keeps losing races (jittered backoff between them, up to 100 ms each). Default 30. */
  maxAttempts?: number;
  /** When to store a snapshot of a thread's state (see SnapshotPolicy). Default 100 entries, 1,000 nodes, every 10th full. */
  snapshots?: SnapshotPolicy | false;
  /** Called when a stored snapshot fails its checks and is ignored. Default: console.warn. */
  onSnapshotRejected?: (threadId: string, index: number, reason: string) => void;
  /**
   * Retention default: a thread created (or forked, or imported) without `expiresAt` expires
   * this many days after its creation (see retention.ts). Threads that exist already keep
   * theirs. Default: none (threads never expire unless given an expiry).
   */
  retentionDays?: number;
}

/**
 * A snapshot is written in the transaction of the entry that brings the log length to a
 * multiple of `entries`, or the node count across a multiple of `nodes` (0: that rule is off).
 * `stateAt` then replays at most about that many entries or nodes. At a multiple of `fullEvery`
 * times either the snapshot is full; the others hold only the runs changed since the last full
 * one the engine wrote (full too when it wrote none yet). `false` writes none (stored ones are
 * still used).
 */
export interface SnapshotPolicy {
  entries?: number;
  nodes?: number;
  /** Default 10; 1 makes every snapshot full. */
  fullEvery?: number;
}

interface Idempotent {
  /** A retry with the same key and request returns the first result and writes nothing. */
  idempotencyKey?: string;
}

export interface ThreadSettingsInput {
  metadata?: JsonValue;
  nodeTypes?: SemanticNodeType[];
  allowDynamicNodeTypes?: boolean;
}

/** When a new thread expires (retention.ts). */
interface Expiring {
  /**
   * An RFC 3339 date-time (one in the past: at the next sweep), or null: never, even with the
   * engine's `retentionDays`. Default: `retentionDays` after creation, if set.
   */
  expiresAt?: string | null;
}

export interface CreateThreadInput extends ThreadSettingsInput, Idempotent, Expiring {
  /** Default: a fresh id from the id source. */
  threadId?: string;
  /**
   * Salt every node's object payload with a `weft:salt` field keyed by a secret of the thread
   * (payload-salts.ts), so a redacted payload cannot be guessed from its id. Default false.
   */
  saltPayloads?: boolean;
}

export interface ImportStateInput extends ThreadSettingsInput, Idempotent, Expiring {
  threadId?: string;
  state: unknown;
}

export interface SetThreadExpiryInput extends Idempotent {
  threadId: string;
  /** An RFC 3339 date-time (one in the past: the thread goes at the next sweep), or null: never. */
  expiresAt: string | null;
}

export interface SetThreadExpiryResult {
  threadId: string;
  /** The expiry now set (ISO 8601, UTC), or null. */
  expiresAt: string | null;
}

export interface RetentionSweepInput {
  /** At most this many expired threads (default 100, at most 10,000); `next` then continues. */
  limit?: number;
  /** Only threads after this one in `(expiresAt, threadId)` order: the `next` of the previous page. */
  after?: { expiresAt: string; threadId: string } | undefined;
}

/** An expired thread the sweep deleted (named by storage key, like every system answer). */
export interface ExpiredThreadDeleted extends DeleteThreadResult {
  tenantId: string;
  expiresAt: string;
}

/** What one retention sweep did. */
export interface RetentionSweep {
  /** The engine clock's time: expiries at or before it had passed. */
  now: string;
  /** Expired threads the read model named. */
  found: number;
  deleted: ExpiredThreadDeleted[];
  /** Threads gone meanwhile (another sweep, a deleteThread) or whose expiry moved. */
  skipped: string[];
  failed: Array<{ threadId: string; error: WeftError }>;
  /** Set when the page was full: pass it as `after` to continue. */
  next?: { expiresAt: string; threadId: string };
}

export interface AppendNodesInput extends Idempotent {
  threadId: string;
  expectedIndex?: number;
  nodes: NodeInput[];
}

export interface RememberInput extends Idempotent {
  threadId: string;
  type: string;
  key: string;
  content: JsonValue;
  runId?: string;
}

export interface ForkThreadInput extends Idempotent {
  threadId: string;
  /** Copy `[0, upToIndex)`; default the whole log. At least 1. */
  upToIndex?: number;
  /** Default: a fresh id from the id source. */
  newThreadId?: string;
}

/** Run commands find the run's thread themselves; `threadId` picks a fork's copy of a run. */
interface RunAddress {
  runId: string;
  threadId?: string;
}

export interface StartRunInput extends Idempotent {
  threadId: string;
  goal: string;
  /** Default: a fresh id from the id source. */
  runId?: string;
  workflowId?: string;
  constraints?: string[];
  maxTokenBudget?: number;
  budgetUsd?: number;
  maxIterations?: number;
  maxRetries?: number;
  maxExecutionTimeMs?: number;
  memory?: JsonObject;
}

export interface ActionInput {
  /** Default: a fresh id from the id source. */
  id?: string;
  type: string;
  payload: JsonValue;
  compensation?: JsonValue;
  metadata?: JsonValue;
}

export interface DispatchInput extends RunAddress, Idempotent {
  expectedIndex?: number;
  action: ActionInput;
}

export interface ResolveApprovalInput extends RunAddress, Idempotent {
  decision: string;
  response?: JsonValue;
  memoryUpdates?: JsonObject;
}

export interface CancelRunInput extends RunAddress, Idempotent {
  reason?: string;
  rollback?: boolean;
}

export interface RecordUsageInput extends RunAddress, Idempotent {
  nodeId?: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
}

export interface ImportWorkflowStateInput extends Idempotent {
  threadId: string;
  state: unknown;
}

/**
 * A checkpoint of an agent framework's saver (src/langgraph): `data` is the saver's record, kept
 * in the log as given; `nodes` the causal nodes its new messages became (appended in the same
 * entry, like appendNodes').
 */
export interface SaveCheckpointInput extends Idempotent {
  threadId: string;
  expectedIndex?: number;
  checkpointId: string;
  parentCheckpointId?: string;
  data: JsonObject;
  nodes?: NodeInput[];
}

/** A task's intermediate writes against a saved checkpoint (see SaveCheckpointInput). */
export interface SaveCheckpointWritesInput extends Idempotent {
  threadId: string;
  checkpointId: string;
  taskId: string;
  data: JsonObject;
  nodes?: NodeInput[];
}

export interface ClearCheckpointsInput extends Idempotent {
  threadId: string;
}

/**
 * Every command's success names the entry it wrote and the log length after it; a first answer
 * (not a retry's) carries the views of what the entry committed.
 */
export interface Written extends CarriesCommitted {
  threadId: string;
  logIndex: number;
  logLength: number;
}

export interface AppendNodesResult extends Written {
  /** One per input node, in order: the new node, or the existing node with identical content. */
  nodes: CausalNode[];
}

export interface RememberResult extends Written {
  node: CausalNode;
  memory: { type: string; key: string };
}

export interface ImportStateResult extends Written {
  nodeCount: number;
}

export interface DeleteThreadInput extends Idempotent {
  threadId: string;
  /** Who asked, for the audit entry (an API key id; default `system`). */
  actor?: string;
}

export interface RedactNodesInput extends Idempotent {
  threadId: string;
  /** The nodes whose payloads are withheld (at most 1,000; repeats count once). */
  nodeIds: string[];
  /** Why, kept in each tombstone and in the log (at most 1,000 characters). */
  reason: string;
  /** Who asked, for the log (an API key id). */
  actor?: string;
}

export interface RedactNodesResult {
  threadId: string;
  /** The nodes redacted now. */
  redactedNodeIds: string[];
  /** The nodes named that were already redacted (nothing written for them). */
  alreadyRedactedNodeIds: string[];
  /** The thread's log length and state hash after the redaction's entry (unchanged when none). */
  logLength: number;
  stateHash: string;
}

export interface DeleteThreadResult {
  threadId: string;
  /** The thread's log length and final state hash when it was deleted (also audited). */
  logLength: number;
  stateHash: string;
}

export interface ForkThreadResult extends Written {
  forkedFrom: { threadId: string; upToIndex: number };
}

export interface RunResult extends Written {
  runId: string;
  status: string;
}

export interface StateAt {
  threadId: string;
  /** The log length the state is as of. */
  index: number;
  state: ThreadState;
  agentState: AgentState;
}

export interface RunsAt {
  threadId: string;
  /** The log length the runs are as of. */
  index: number;
  /** In the order they were started, each with the index of the last entry that changed it. */
  runs: RunAsOf[];
}

export interface DeadlineSweepInput {
  /** At most this many due runs (default 100, at most 10,000); `next` then continues. */
  limit?: number;
  /** Only runs after this `(threadId, runId)` key: the `next` of the previous page. */
  after?: RunKey | undefined;
}

/** A deadline that fired: the run is now timed out by the entry at `logIndex`. */
export interface FiredDeadline extends Written {
  runId: string;
  deadline: 'approval' | 'execution';
  /** When the deadline was due (the entry's `recordedAt` is when it fired). */
  dueAt: string;
  status: string;
}

/** What one sweep over due deadlines did. */
export interface DeadlineSweep {
  /** The engine clock's time the sweep looked for deadlines at or before. */
  now: string;
  /** Runs the read model named as due (candidates; the core decides on each thread's state). */
  found: number;
  fired: FiredDeadline[];
  /** Runs whose deadline no longer applied on their caught-up thread (resolved, ended, or timed out by another writer). */
  skipped: RunKey[];
  /** Runs whose entry could not be written (a CONFLICT lost on every attempt, a thread that fails to load). */
  failed: Array<RunKey & { error: WeftError }>;
  /** Set when the page was full: pass it as `after` to continue the sweep. */
  next?: RunKey;
}

/** How `Engine.readEntries` reads (see there): the store's own options, passed through. */
export type ReadEntriesOptions = EntryReads;

export interface Engine {
  createThread(input?: CreateThreadInput): Promise<Result<Written>>;
  importState(input: ImportStateInput): Promise<Result<ImportStateResult>>;
  appendNodes(input: AppendNodesInput): Promise<Result<AppendNodesResult>>;
  remember(input: RememberInput): Promise<Result<RememberResult>>;
  forkThread(input: ForkThreadInput): Promise<Result<ForkThreadResult>>;
  /**
   * Deletes a thread and everything only it holds; what its forks still read stays until the
   * last of them is gone. Recorded as a tenant audit entry (who, when, which thread, its final
   * state hash). NOT_FOUND for an unknown (or already deleted) thread.
   */
  deleteThread(input: DeleteThreadInput): Promise<Result<DeleteThreadResult>>;
  /**
   * Withholds the payloads of nodes for good (engine/redact.ts): in this thread, the thread
   * holding them and every fork sharing them, each live one recording a `nodes_redacted`
   * entry. NOT_FOUND for an unknown thread or node; nodes already redacted are reported, not
   * written again.
   */
  redactNodes(input: RedactNodesInput): Promise<Result<RedactNodesResult>>;
  /**
   * Sets (null: clears) when a live thread expires; not a log entry (its state hash stays).
   * NOT_FOUND for an unknown or deleted thread.
   */
  setThreadExpiry(input: SetThreadExpiryInput): Promise<Result<SetThreadExpiryResult>>;
  /**
   * Deletes live threads whose expiry has passed by the engine clock (one page of them), each
   * as deleteThread does with the actor `retention`: once, also with other engines and
   * processes sweeping the same database (one audit entry per thread).
   */
  deleteExpiredThreads(input?: RetentionSweepInput): Promise<Result<RetentionSweep>>;
  startRun(input: StartRunInput): Promise<Result<RunResult>>;
  dispatch(input: DispatchInput): Promise<Result<RunResult>>;
  resolveApproval(input: ResolveApprovalInput): Promise<Result<RunResult>>;
  cancelRun(input: CancelRunInput): Promise<Result<RunResult>>;
  recordUsage(input: RecordUsageInput): Promise<Result<RunResult>>;
  importWorkflowState(input: ImportWorkflowStateInput): Promise<Result<RunResult>>;
  /** One `checkpoint_saved` entry (see SaveCheckpointInput). */
  saveCheckpoint(input: SaveCheckpointInput): Promise<Result<AppendNodesResult>>;
  /** One `checkpoint_writes_saved` entry. */
  saveCheckpointWrites(input: SaveCheckpointWritesInput): Promise<Result<AppendNodesResult>>;
  /** One `checkpoints_cleared` entry: a saver's checkpoints before it no longer count. */
  clearCheckpoints(input: ClearCheckpointsInput): Promise<Result<Written>>;
  /**
   * The thread's stored log entries from `fromIndex` (default 0) on, in index order: what a
   * checkpoint saver folds its checkpoints from. NOT_FOUND for a thread with no entries. With
   * `nodePayloads: false`, the payloads of the nodes an entry created may read as null (those
   * stored apart from the entry are not read): for a reader that needs the entries' other fields.
   * `limit`: at most that many entries (a long log read page by page keeps less in memory).
   */
  readEntries(
    threadId: string,
    fromIndex?: number,
    options?: ReadEntriesOptions,
  ): Promise<Result<LogEntry[]>>;
  /**
   * Times out every run whose approval or execution deadline has passed by the engine clock
   * (one page of them): one `deadline_fired` entry per deadline, once, also with other engines
   * and processes sweeping the same database.
   */
  fireDueDeadlines(input?: DeadlineSweepInput): Promise<Result<DeadlineSweep>>;
  /** Replays the stored log and reports the first bad entry (strict: every entry signed; default true). */
  verify(threadId: string, options?: { strict?: boolean }): Promise<Result<VerifyReport>>;
  /** The state after the first `index` entries (default: all): nearest snapshot + replay of the rest. */
  stateAt(threadId: string, index?: number): Promise<Result<StateAt>>;
  /** The runs after the first `index` entries (a replay of that prefix). */
  runsAt(threadId: string, index: number): Promise<Result<RunsAt>>;
  /** The latest state (from the cache when current). */
  getState(threadId: string): Promise<Result<ThreadState>>;
  /**
   * The tenant this engine acts for; undefined: the system (every tenant), which names threads
   * by storage key (a thread's id for the default tenant's, `<id>` U+001F `<tenant>` for most
   * others: see src/engine/tenancy.ts) and sees keys in its answers.
   */
  readonly tenant: string | undefined;
  /**
   * The same engine acting for `tenant`: thread ids are the tenant's own (two tenants may each
   * have a thread `t1`; creating, forking to or importing under an id only another tenant uses
   * succeeds), its commands and reads see only that tenant's threads and runs (another tenant's
   * are NOT_FOUND, exactly like ones that do not exist), every answer names threads by id, new
   * threads belong to it, and idempotency keys are per tenant.
   */
  forTenant(tenant: string): Engine;
  /** The raw store: every tenant's data (system use only). */
  readonly store: ThreadStore;
  /**
   * Which tenant owns each thread of the store, remembered for this engine (shared by its
   * tenant views): what tenant lookups outside the engine (the hub's tenant filter, scoped
   * reads, the CLI) pass to the functions of tenancy.ts.
   */
  readonly tenants: ThreadTenants;
  /**
   * The thread-state cache's estimated size and counters: one cache per engine, shared by its
   * tenant views, so every view reports the same figures.
   */
  cacheStats(): ThreadCacheStats;
  close(): Promise<void>;
}
