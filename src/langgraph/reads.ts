/**
 * Reading checkpoints back from a thread's fold: the checkpoint with the channel values its
 * versions name (array values rebuilt from their append chain), its writes in the order live
 * execution applies them, and the pending sends of checkpoints older than format 4.
 */
import type {
  Checkpoint,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import {
  compareWritesSortKeys,
  maxChannelVersion,
  TASKS,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import { decode } from './codec.js';
import {
  type ChannelVersion,
  type StoredCheckpoint,
  type ThreadIndex,
  versionKey,
} from './thread-index.js';

export const MISSING = Symbol('missing');

/** `firstVersion`: the saver's `getNextVersion(undefined)`, for a migrated TASKS channel. */
export async function readTuple(
  serde: SerializerProtocol,
  firstVersion: ChannelVersion,
  index: ThreadIndex,
  threadId: string,
  ns: string,
  stored: StoredCheckpoint,
): Promise<CheckpointTuple> {
  const checkpoint = (await decode(serde, stored.checkpoint)) as Checkpoint;
  const channelValues: Record<string, unknown> = {};
  for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
    const value = await valueAt(serde, index, channel, version);
    if (value !== MISSING) channelValues[channel] = value;
  }
  checkpoint.channel_values = channelValues;
  if (checkpoint.v < 4 && stored.parentId !== undefined) {
    // Checkpoints of format < 4 kept pending sends as the parent's TASKS writes.
    const sends = await pendingWritesOf(serde, index, stored.parentId);
    channelValues[TASKS] = sends.filter((w) => w[1] === TASKS).map((w) => w[2]);
    const versions = Object.values(checkpoint.channel_versions ?? {});
    checkpoint.channel_versions = {
      ...checkpoint.channel_versions,
      [TASKS]: versions.length > 0 ? maxChannelVersion(...versions) : firstVersion,
    };
  }
  const tuple: CheckpointTuple = {
    config: {
      configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: stored.id },
    },
    checkpoint,
    metadata: (await decode(serde, stored.metadata)) as CheckpointMetadata,
    pendingWrites: await pendingWritesOf(serde, index, stored.id),
  };
  if (stored.parentId !== undefined) {
    tuple.parentConfig = {
      configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: stored.parentId },
    };
  }
  return tuple;
}

export async function pendingWritesOf(
  serde: SerializerProtocol,
  index: ThreadIndex,
  checkpointId: string,
): Promise<CheckpointPendingWrite[]> {
  const stored = [...(index.writes.get(checkpointId)?.values() ?? [])];
  stored.sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.taskPath, a.taskId, a.idx),
      writesSortKey(b.taskPath, b.taskId, b.idx),
    ),
  );
  return Promise.all(
    stored.map(
      async (w): Promise<CheckpointPendingWrite> => [
        w.taskId,
        w.channel,
        await decode(serde, index.values.get(w.hash)!),
      ],
    ),
  );
}

async function valueAt(
  serde: SerializerProtocol,
  index: ThreadIndex,
  channel: string,
  version: ChannelVersion,
) {
  const blob = index.blobs.get(versionKey(channel, version));
  if (blob === undefined || 'e' in blob) return MISSING;
  if ('x' in blob) return decode(serde, index.values.get(blob.x)!);
  const hashes = itemHashes(index, channel, version)!;
  return Promise.all(hashes.map((hash) => decodeItem(serde, index, hash)));
}

/** An array item, decoded once per thread fold (see ThreadIndex.decodedItems). */
async function decodeItem(serde: SerializerProtocol, index: ThreadIndex, hash: string) {
  if (index.decodedItems.has(hash)) return index.decodedItems.get(hash);
  const value = await decode(serde, index.values.get(hash)!);
  index.decodedItems.set(hash, value);
  if (typeof value === 'object' && value !== null) index.itemHash.set(value, hash);
  return value;
}

/** The item hashes of an array value: its base's (followed down the chain) and its own. */
export function itemHashes(
  index: ThreadIndex,
  channel: string,
  version: ChannelVersion,
): string[] | undefined {
  const parts: string[][] = [];
  let blob = index.blobs.get(versionKey(channel, version));
  const seen = new Set<string>();
  while (blob !== undefined && 'a' in blob) {
    const key = versionKey(channel, blob.b);
    if (seen.has(key)) return undefined;
    seen.add(key);
    parts.push(blob.a);
    blob = index.blobs.get(key);
  }
  if (blob === undefined || !('l' in blob)) return undefined;
  const out = [...blob.l];
  for (let i = parts.length - 1; i >= 0; i--) out.push(...parts[i]!);
  return out;
}
