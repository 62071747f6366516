/**
 * The floor of the write-time-per-turn figure: a checkpointer that stores nothing, keeping the
 * objects LangGraph hands it by reference (one thread, in memory, its latest few checkpoints) and
 * handing them back. What a turn costs on it is LangGraph's own work per turn (its loop, and
 * `messagesStateReducer`, which passes over the whole message list at every step), the part no
 * saver can remove; a real saver's own cost per turn is what it adds above this.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';

const KEPT = 8;

export class ReferenceSaver extends BaseCheckpointSaver {
  private readonly tuples = new Map<string, CheckpointTuple>();
  private readonly writes = new Map<string, CheckpointPendingWrite[]>();
  private latest: string | undefined;

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const id = (config.configurable?.checkpoint_id as string | undefined) ?? this.latest;
    const tuple = id === undefined ? undefined : this.tuples.get(id);
    return tuple === undefined
      ? undefined
      : { ...tuple, pendingWrites: this.writes.get(id!) ?? [] };
  }

  async *list(): AsyncGenerator<CheckpointTuple> {
    for (const id of [...this.tuples.keys()].sort().reverse()) {
      const tuple = await this.getTuple({ configurable: { checkpoint_id: id } });
      if (tuple !== undefined) yield tuple;
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    _newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const { thread_id, checkpoint_ns = '', checkpoint_id: parent } = config.configurable ?? {};
    const saved = { configurable: { thread_id, checkpoint_ns, checkpoint_id: checkpoint.id } };
    this.tuples.set(checkpoint.id, {
      config: saved,
      checkpoint,
      metadata,
      ...(parent === undefined
        ? {}
        : { parentConfig: { configurable: { thread_id, checkpoint_ns, checkpoint_id: parent } } }),
    });
    if (this.latest === undefined || checkpoint.id > this.latest) this.latest = checkpoint.id;
    // Only the latest few: a turn reads the latest, and holding every step's message list would
    // make the floor's heap (and, written in lockstep, its neighbour's garbage collection) grow
    // with the square of the turns, which no saver that stores elsewhere pays.
    while (this.tuples.size > KEPT) {
      const oldest = this.tuples.keys().next().value!;
      this.tuples.delete(oldest);
      this.writes.delete(oldest);
    }
    return saved;
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const id = config.configurable?.checkpoint_id as string;
    const held = this.writes.get(id) ?? [];
    for (const [channel, value] of writes) held.push([taskId, channel, value]);
    this.writes.set(id, held);
  }

  async deleteThread(): Promise<void> {
    this.tuples.clear();
    this.writes.clear();
    this.latest = undefined;
  }
}
