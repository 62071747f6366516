/**
 * WeftSaver: a LangGraph checkpoint saver whose checkpoints are entries of Weft threads. One
 * Weft thread per LangGraph (thread_id, checkpoint_ns); a checkpoint is one `checkpoint_saved`
 * entry holding only what is new since its parent — the channels in `newVersions`, each value
 * once per thread by content hash, and of an array channel that grew by appending (`messages`)
 * only the appended items — plus the causal nodes its new messages became. An `interrupt()` is
 * a Weft approval request; resolving it through Weft's API is what `waitForResume` returns.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  getCheckpointId,
  INTERRUPT,
  type PendingWrite,
  RESUME,
  type SerializerProtocol,
  WRITES_IDX_MAP,
} from '@langchain/langgraph-checkpoint';
import type { LogEntry } from '../core/log/index.js';
import type { NodeInput } from '../core/thread/index.js';
import type { Engine } from '../engine/index.js';
import { type ApprovalAnswer, createResumeValue } from './approval-answer.js';
import { requestApproval, settleFromResume } from './approvals.js';
import { contentHash, decode, type Encoded, encode } from './codec.js';
import { required } from './config.js';
import { Directory } from './directory.js';
import { fromEngine, WeftSaverError } from './errors.js';
import { type HeldList, writesBack } from './items.js';
import { messageNodes, overlay } from './messages.js';
import { itemHashes, readTuple } from './reads.js';
import { failRun, followRun } from './runs.js';
import { isPrefix, storeItems } from './store-items.js';
import {
  type BlobRecord,
  type ChannelVersion,
  type CheckpointData,
  ThreadIndex,
  versionKey,
  type WriteRecord,
} from './thread-index.js';

export interface WeftSaverOptions {
  /** An engine from `openEngine(url)` (or a tenant's view of one: `engine.forTenant(t)`). */
  engine: Engine;
  serde?: SerializerProtocol;
  /** How long an approval may wait before its run times out; default Weft's (24 h). */
  approvalTimeoutMs?: number;
  /** How often `waitForResume` looks for the resolution; default 200 ms. */
  pollIntervalMs?: number;
  /** Threads whose folded checkpoints are kept in memory (least recently used dropped); default 1,000. */
  cachedThreads?: number;
}

/** What resolving an interrupt's approval through Weft gave: resume the graph with `value`. */
export interface Resume {
  runId: string;
  decision: string;
  /** The reviewer's response as given (`undefined` when none was). */
  response: unknown;
  /**
   * What to resume with, `new Command({ resume: value })`: `{ decision, response }`, `response`
   * null when none was given. Never empty, so LangGraph always takes it; every interrupt pending
   * at the checkpoint gets it, and `getApproval(answer)` reads it in the graph.
   */
  value: ApprovalAnswer;
  /** Log index of the `approval_resolved` entry. */
  logIndex: number;
}

/** The Weft thread id of a LangGraph thread and namespace: stable, so every process agrees. */
export function weftThreadId(threadId: string, checkpointNs: string): string {
  const digest = createHash('sha256').update(JSON.stringify([threadId, checkpointNs]));
  return `lg_${digest.digest('hex').slice(0, 32)}`;
}

/** Entries read at once when catching up (see catchUp). */
const READ_PAGE = 1000;

const sameVersion = (a: ChannelVersion, b: ChannelVersion) => typeof a === typeof b && a === b;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new WeftSaverError('ABORTED', 'waitForResume was aborted'));
      },
      { once: true },
    );
  });

export class WeftSaver extends BaseCheckpointSaver {
  readonly engine: Engine;
  private readonly options: WeftSaverOptions;
  private readonly indexes = new Map<string, ThreadIndex>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly directory: Directory;

  constructor(options: WeftSaverOptions) {
    super(options.serde);
    if (options?.engine === undefined) {
      throw new WeftSaverError('INVALID_CONFIG', 'new WeftSaver({ engine }) needs an engine');
    }
    this.engine = options.engine;
    this.options = options;
    this.directory = new Directory(options.engine);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id as string | undefined;
    if (threadId === undefined) return undefined;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const index = await this.catchUp(weftThreadId(String(threadId), ns));
    if (index === undefined) return undefined;
    const id = getCheckpointId(config) || index.latestId;
    const stored = id === undefined ? undefined : index.checkpoints.get(id);
    return stored === undefined
      ? undefined
      : readTuple(this.serde, this.getNextVersion(undefined), index, String(threadId), ns, stored);
  }

  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options;
    let limit = options.limit;
    const threadId = config.configurable?.thread_id as string | undefined;
    const ns = config.configurable?.checkpoint_ns as string | undefined;
    const onlyId = config.configurable?.checkpoint_id as string | undefined;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    const threads =
      threadId !== undefined && ns !== undefined
        ? [{ threadId: String(threadId), checkpointNs: ns }]
        : (await this.directory.list()).filter(
            (e) =>
              (threadId === undefined || e.threadId === String(threadId)) &&
              (ns === undefined || e.checkpointNs === ns),
          );
    for (const { threadId: tid, checkpointNs } of threads) {
      const index = await this.catchUp(weftThreadId(tid, checkpointNs));
      if (index === undefined) continue;
      const ids = [...index.checkpoints.keys()].sort().reverse();
      for (const id of ids) {
        if (onlyId && id !== onlyId) continue;
        if (beforeId && id >= beforeId) continue;
        const stored = index.checkpoints.get(id)!;
        if (filter !== undefined) {
          const metadata = (await decode(this.serde, stored.metadata)) as Record<string, unknown>;
          if (!Object.entries(filter).every(([key, value]) => metadata?.[key] === value)) continue;
        }
        if (limit !== undefined) {
          if (limit <= 0) return;
          limit -= 1;
        }
        yield await readTuple(
          this.serde,
          this.getNextVersion(undefined),
          index,
          tid,
          checkpointNs,
          stored,
        );
      }
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const { threadId, ns } = required(config, 'put a checkpoint');
    const weftId = weftThreadId(threadId, ns);
    return this.locked(weftId, async () => {
      const index = await this.threadFor(threadId, ns, weftId);
      const parentId = config.configurable?.checkpoint_id as string | undefined;
      const parent = parentId === undefined ? undefined : index.checkpoints.get(parentId);
      const parentVersions =
        parent === undefined
          ? {}
          : (((await decode(this.serde, parent.checkpoint)) as Checkpoint).channel_versions ?? {});
      const { channel_values: channelValues = {}, ...skeleton } = checkpoint;
      const values: Record<string, Encoded> = {};
      const store = async (value: unknown): Promise<string> => {
        const encoded = await encode(this.serde, value);
        const hash = contentHash(encoded);
        if (!index.values.has(hash)) values[hash] = encoded;
        return hash;
      };
      const maps = {
        messageNodes: overlay(index.messageNodes),
        toolCallNodes: overlay(index.toolCallNodes),
      };
      const blobs: BlobRecord[] = [];
      const lists: Array<[string, HeldList]> = [];
      const nodes: NodeInput[] = [];
      for (const [channel, version] of Object.entries(newVersions)) {
        // Stored once: a (channel, version) names one value for good (versions are unique).
        if (index.blobs.has(versionKey(channel, version))) continue;
        const value = (channelValues as Record<string, unknown>)[channel];
        if (value === undefined) {
          blobs.push({ c: channel, v: version, e: 1 });
        } else if (Array.isArray(value)) {
          const baseVersion = parentVersions[channel];
          const base =
            baseVersion === undefined || sameVersion(baseVersion, version)
              ? undefined
              : itemHashes(index, channel, baseVersion);
          const held =
            base === undefined ? undefined : index.items.list(versionKey(channel, baseVersion!));
          const recheck = index.items.mustRecheck(parentId);
          const list = await storeItems(this.serde, index, value, values, held, recheck);
          lists.push([versionKey(channel, version), list]);
          // The shared part was checked against the base's own list (its hashes by position).
          const grew =
            base !== undefined &&
            base.length <= list.length &&
            (list.shared >= base.length ||
              isPrefix(base.hashes, base.length, list.hashes, list.shared));
          if (grew) {
            const added = list.hashes.slice(base!.length, list.length);
            blobs.push({ c: channel, v: version, b: baseVersion!, a: added });
            nodes.push(...messageNodes(value, base!.length, channel, maps));
          } else {
            blobs.push({ c: channel, v: version, l: list.hashes.slice(0, list.length) });
            nodes.push(...messageNodes(value, 0, channel, maps));
          }
        } else {
          blobs.push({ c: channel, v: version, x: await store(value) });
        }
      }
      const data: CheckpointData = {
        checkpoint: await encode(this.serde, skeleton),
        metadata: await encode(this.serde, metadata),
        values,
        blobs,
      };
      if (maps.messageNodes.added.size > 0 || maps.toolCallNodes.added.size > 0) {
        data.n = {};
        if (maps.messageNodes.added.size > 0) {
          data.n.m = Object.fromEntries(maps.messageNodes.added);
        }
        if (maps.toolCallNodes.added.size > 0) {
          data.n.t = Object.fromEntries(maps.toolCallNodes.added);
        }
      }
      const saved = await this.engine.saveCheckpoint({
        threadId: weftId,
        checkpointId: checkpoint.id,
        ...(parentId === undefined ? {} : { parentCheckpointId: parentId }),
        data: data as never,
        nodes,
      });
      if (!saved.ok) throw fromEngine(saved.error, `saving checkpoint ${checkpoint.id}`);
      this.fold(index, weftId, saved.value.logIndex, {
        type: 'checkpoint_saved',
        checkpointId: checkpoint.id,
        ...(parentId === undefined ? {} : { parentCheckpointId: parentId }),
        data,
        nodes: saved.value.nodes,
      });
      // The next step's base: known without walking the chain of versions down again.
      for (const [key, list] of lists) index.items.rememberList(key, list);
      const step = { threadId, ns, weftId, checkpoint, metadata, newVersions };
      if (await followRun(this.engine, index, step)) await this.catchUp(weftId);
      return {
        configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id },
      };
    });
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const { threadId, ns } = required(config, 'put writes');
    const checkpointId = config.configurable?.checkpoint_id as string | undefined;
    if (checkpointId === undefined) {
      throw new WeftSaverError(
        'INVALID_CONFIG',
        'putWrites needs config.configurable.checkpoint_id: the checkpoint the writes belong to',
      );
    }
    const weftId = weftThreadId(threadId, ns);
    await this.locked(weftId, async () => {
      const index = await this.threadFor(threadId, ns, weftId);
      const values: Record<string, Encoded> = {};
      const records: WriteRecord[] = [];
      for (const [i, [channel, value]] of writes.entries()) {
        const idx = WRITES_IDX_MAP[channel] || i;
        // A message this process holds, written back (perhaps edited in place): see rewritten.
        if (writesBack(index.items, value)) index.items.markRewritten(checkpointId);
        if (Array.isArray(value)) {
          // Item by item, as checkpoints keep lists: the messages a task writes are the ones
          // the next checkpoint adds, stored once.
          const list = await storeItems(this.serde, index, value, values);
          records.push({ i: idx, c: channel, l: list.hashes.slice(0, list.length) });
          continue;
        }
        const encoded = await encode(this.serde, value);
        const hash = contentHash(encoded);
        if (!index.values.has(hash)) values[hash] = encoded;
        records.push({ i: idx, c: channel, x: hash });
      }
      const data = { taskPath: taskPath ?? '', values, writes: records };
      const saved = await this.engine.saveCheckpointWrites({
        threadId: weftId,
        checkpointId,
        taskId,
        data: data as never,
      });
      if (!saved.ok) throw fromEngine(saved.error, `saving writes of task ${taskId}`);
      this.fold(index, weftId, saved.value.logIndex, {
        type: 'checkpoint_writes_saved',
        checkpointId,
        taskId,
        data,
        nodes: [],
      });
      const interrupts = writes.filter(([channel]) => channel === INTERRUPT);
      if (interrupts.length > 0) {
        await requestApproval(
          this.engine,
          this.options.approvalTimeoutMs,
          index,
          weftId,
          { threadId, ns, checkpointId },
          interrupts,
        );
        await this.catchUp(weftId);
      }
      if (await failRun(this.engine, index, { ns, weftId, checkpointId }, writes)) {
        await this.catchUp(weftId);
      }
      const resumes = writes.filter(([channel]) => channel === RESUME);
      if (resumes.length > 0 && (await settleFromResume(this.engine, index, weftId, resumes))) {
        await this.catchUp(weftId);
      }
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    for (const entry of await this.directory.list()) {
      if (entry.threadId !== threadId) continue;
      await this.locked(entry.weftThreadId, async () => {
        const cleared = await this.engine.clearCheckpoints({ threadId: entry.weftThreadId });
        if (!cleared.ok && cleared.error.code !== 'NOT_FOUND') {
          throw fromEngine(cleared.error, `deleting thread ${threadId}`);
        }
        this.indexes.delete(entry.weftThreadId);
      });
    }
  }

  /**
   * Waits until the approval requested for the interrupt at the thread's latest checkpoint (or
   * the one `config` names) is resolved through Weft (`resolveApproval`, the approvals inbox),
   * and returns its decision and response: resume with `new Command({ resume: value })`.
   * Throws APPROVAL_ENDED when the run timed out or was cancelled instead, ABORTED on `signal`.
   */
  async waitForResume(
    config: RunnableConfig,
    options: { signal?: AbortSignal; pollIntervalMs?: number } = {},
  ): Promise<Resume> {
    const { threadId, ns } = required(config, 'wait for a resume');
    const weftId = weftThreadId(threadId, ns);
    const every = options.pollIntervalMs ?? this.options.pollIntervalMs ?? 200;
    for (;;) {
      if (options.signal?.aborted) throw new WeftSaverError('ABORTED', 'waitForResume was aborted');
      const index = await this.catchUp(weftId);
      const target = (config.configurable?.checkpoint_id as string | undefined) ?? index?.latestId;
      const approval = index?.approvals.findLast((a) => a.checkpointId === target);
      const outcome = approval?.outcome;
      if (approval !== undefined && outcome?.kind === 'resolved') {
        return {
          runId: approval.runId,
          decision: outcome.decision,
          response: outcome.response,
          value: createResumeValue(outcome.decision, outcome.response),
          logIndex: outcome.index,
        };
      }
      if (outcome?.kind === 'ended') {
        throw new WeftSaverError(
          'APPROVAL_ENDED',
          `the approval of thread ${threadId} ended: ${outcome.reason}`,
        );
      }
      await sleep(every, options.signal);
    }
  }

  /**
   * Versions unique across branches, as LangGraph's own SQL savers make them: a fork (updateState
   * on a past checkpoint) counts on from an older version, and plain integers would name values
   * of the other branch. Ordered by the counter; the random part only tells branches apart.
   */
  override getNextVersion(current: number | string | undefined): number {
    const counter =
      current === undefined ? 0 : Number.parseInt(String(current).split('.')[0]!, 10) || 0;
    const unique = randomBytes(8).toString('hex');
    // LangGraph compares string versions; the declared number type is the base class's default.
    return `${String(counter + 1).padStart(32, '0')}.${unique}` as unknown as number;
  }

  /** The Weft thread that holds a LangGraph thread's (namespace's) checkpoints. */
  weftThreadId(config: RunnableConfig): string {
    const { threadId, ns } = required(config, 'name its Weft thread');
    return weftThreadId(threadId, ns);
  }

  /**
   * The thread's folded checkpoints, caught up with its log; undefined when it has none. The
   * entries are read without their nodes' payloads (a fold needs none of them: see
   * CheckpointData.n), unless `nodePayloads`.
   */
  private async catchUp(weftId: string, nodePayloads = false): Promise<ThreadIndex | undefined> {
    let index = this.indexes.get(weftId);
    for (;;) {
      const from = index?.length ?? 0;
      // Page by page: each page's texts and entries are garbage once folded, so a long log's
      // first read does not hold all of them at once (collecting those cost more than reading).
      const read = await this.engine.readEntries(weftId, from, { nodePayloads, limit: READ_PAGE });
      if (!read.ok) {
        if (read.error.code === 'NOT_FOUND') return undefined;
        throw fromEngine(read.error, `reading thread ${weftId}`);
      }
      index ??= new ThreadIndex();
      for (const entry of read.value) if (entry.index === index.length) index.apply(entry);
      if (read.value.length < READ_PAGE || index.length === from) break;
    }
    this.remember(weftId, index);
    return index;
  }

  private async threadFor(threadId: string, ns: string, weftId: string): Promise<ThreadIndex> {
    const existing = await this.catchUp(weftId);
    if (existing?.refsIncomplete === true) {
      // Entries from before CheckpointData.n: their nodes' payloads say which node each
      // message became, and the next write must know.
      this.indexes.delete(weftId);
      return (await this.catchUp(weftId, true))!;
    }
    if (existing !== undefined) return existing;
    await this.directory.register({ threadId, checkpointNs: ns, weftThreadId: weftId });
    const created = await this.engine.createThread({
      threadId: weftId,
      metadata: { langgraph: { threadId, checkpointNs: ns } },
    });
    if (!created.ok && created.error.code !== 'CONFLICT') {
      throw fromEngine(created.error, `creating the Weft thread of ${threadId}`);
    }
    const index = await this.catchUp(weftId);
    if (index === undefined) throw new WeftSaverError('NOT_FOUND', `thread ${weftId} vanished`);
    return index;
  }

  /** Folds an entry this saver just wrote, or catches up when others wrote in between. */
  private fold(index: ThreadIndex, weftId: string, logIndex: number, event: object): void {
    if (logIndex === index.length) {
      index.apply({ index: logIndex, event } as unknown as LogEntry);
    } else {
      this.indexes.delete(weftId); // the next read folds the log again
    }
  }

  private remember(weftId: string, index: ThreadIndex): void {
    this.indexes.delete(weftId);
    this.indexes.set(weftId, index);
    const bound = this.options.cachedThreads ?? 1000;
    while (this.indexes.size > bound) this.indexes.delete(this.indexes.keys().next().value!);
  }

  /** Writes of one Weft thread run one after another (deltas and parents are planned on the fold). */
  private locked<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.catch(() => undefined);
    this.locks.set(key, settled);
    void settled.then(() => {
      if (this.locks.get(key) === settled) this.locks.delete(key);
    });
    return next;
  }
}
