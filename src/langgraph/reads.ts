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
import { type HeldList, ItemCache, type Known, MISS } from './items.js';
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
        'l' in w.value
          ? (await decodeItems(serde, index, w.value.l, w.value.l.length)).out
          : await decode(serde, index.values.get(w.value.x)!),
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
  const key = versionKey(channel, version);
  const list = itemHashes(index, channel, version)!;
  const held = index.items.list(key);
  const knowns: Array<Known | undefined> = [];
  const { out, shared } = await decodeItems(serde, index, list.hashes, list.length, held, knowns);
  if (held?.objects !== undefined && held.length === list.length && shared === list.length) {
    // Every object is the one held, unchanged: nothing new to hold.
    index.items.rememberList(key, held);
  } else {
    const { length, hashes } = list;
    index.items.rememberList(key, { length, hashes, objects: out.slice(), knowns });
  }
  return out;
}

/** A list of items by hash, each decoded once per process (see ItemCache). */
async function decodeItems(
  serde: SerializerProtocol,
  index: ThreadIndex,
  hashes: readonly string[],
  length: number,
  held?: HeldList,
  knowns: Array<Known | undefined> = [],
): Promise<{ out: unknown[]; shared: number }> {
  // Items decoded before are taken as they are (no promise each: a long list is mostly these),
  // first by position from the list as last held, then by hash.
  const shared = ItemCache.sharedPrefix(held, length, undefined, hashes);
  if (held?.objects !== undefined && shared === length && held.length === length) {
    // All of it the held objects, unchanged (the common read): one copy, nothing else to note.
    return { out: held.objects.slice(0, length), shared };
  }
  const out: unknown[] = new Array(length);
  const missing: number[] = [];
  for (let i = 0; i < shared; i++) {
    out[i] = held!.objects![i];
    knowns[i] = held!.knowns![i];
  }
  for (let i = shared; i < length; i++) {
    const hash = hashes[i]!;
    const at = ItemCache.heldAt(held, i);
    if (at !== undefined && at.hash === hash) {
      out[i] = held!.objects![i];
      knowns[i] = at;
      continue;
    }
    const item = index.items.decodedItem(hash);
    if (item === MISS) {
      missing.push(i);
    } else {
      out[i] = item;
      knowns[i] = index.items.knownOf(item);
    }
  }
  await Promise.all(
    missing.map(async (i) => {
      const hash = hashes[i]!;
      const item = await decode(serde, index.values.get(hash)!);
      knowns[i] = index.items.remember(item, hash, true);
      out[i] = item;
    }),
  );
  return { out, shared };
}

/**
 * The item hashes of an array value: its base's (followed down the chain to the nearest version
 * computed before, or to a whole list) and its own. Shared with the cache: do not change it.
 */
export function itemHashes(
  index: ThreadIndex,
  channel: string,
  version: ChannelVersion,
): HeldList | undefined {
  const key = versionKey(channel, version);
  const cached = index.items.list(key);
  if (cached !== undefined) return cached;
  const parts: string[][] = [];
  let blob = index.blobs.get(key);
  let from: HeldList | undefined;
  const seen = new Set<string>();
  while (blob !== undefined && 'a' in blob) {
    const baseKey = versionKey(channel, blob.b);
    if (seen.has(baseKey)) return undefined;
    seen.add(baseKey);
    parts.push(blob.a);
    from = index.items.list(baseKey);
    if (from !== undefined) break;
    blob = index.blobs.get(baseKey);
  }
  if (from === undefined) {
    if (blob === undefined || !('l' in blob)) return undefined;
    from = { length: blob.l.length, hashes: blob.l };
  }
  const out = from.hashes.slice(0, from.length);
  for (let i = parts.length - 1; i >= 0; i--) for (const hash of parts[i]!) out.push(hash);
  const list: HeldList = { length: out.length, hashes: out };
  index.items.rememberList(key, list);
  return list;
}
