/**
 * One commit as the writer gets it (writer.ts `WriteItem`): its entries packed (packed-entry.ts),
 * its search text derived, every client-supplied column sealed (sealed-rows.ts) — in one go, or
 * in time slices for a commit of very many nodes (an import).
 */
import type { FieldCodec } from '../crypto/index.js';
import type { StoredEntryRow } from '../tables/index.js';
import { packEntry, packEntryInSlices } from './packed-entry.js';
import type { LogEntryRow, NodeRow, ReadModelChanges } from './rows.js';
import { type IdempotencyRecord, sealChanges, sealNode, sealRecord } from './sealed-rows.js';
import { nodeTextRows } from './search-queries.js';
import type { CommitKey } from './thread-keys.js';
import { mapInSlices, type Pause } from './time-slices.js';
import type { WriteItem } from './writer.js';

/**
 * The entries as stored: packed (without the payloads of the nodes each one created, which the
 * node rows of the same transaction hold) where that applies, else as text. See packed-entry.ts.
 * Packing works on the plain texts; sealing (encryption at rest) comes after.
 */
function storedEntries(
  entries: readonly LogEntryRow[],
  nodes: readonly NodeRow[],
  codec: FieldCodec,
  verbatim: ReadonlyArray<string | null> | undefined,
): StoredEntryRow[] {
  const byEntry = new Map<number, Array<{ sequence: number; payload: string }>>();
  for (const node of nodes) {
    let list = byEntry.get(node.logIndex);
    if (list === undefined) {
      list = [];
      byEntry.set(node.logIndex, list);
    }
    list.push({ sequence: node.sequence, payload: node.payload });
  }
  return entries.map((row, i) => {
    const kept = verbatim?.[i] ?? null;
    if (kept !== null) {
      return {
        ...row,
        entry: codec.sealText(row.entry),
        packed: null,
        verbatim: codec.sealText(kept),
      };
    }
    return storedEntry(row, packEntry(row.entry, byEntry.get(row.index) ?? [], row.parts), codec);
  });
}

function storedEntry(row: LogEntryRow, packed: Uint8Array | null, codec: FieldCodec) {
  return packed === null
    ? { ...row, entry: codec.sealText(row.entry), packed: null, verbatim: null }
    : { ...row, entry: '', packed: codec.sealBytes(packed), verbatim: null };
}

/**
 * `storedItem` for a commit of very many nodes (an import; never log-only), in time slices:
 * the entry is packed, the search text derived and the rows sealed a chunk at a time, with the
 * deflating off the event loop. Same rows.
 */
export async function storedItemInSlices(
  changes: ReadModelChanges,
  record: IdempotencyRecord | undefined,
  codec: FieldCodec,
  indexed: boolean,
  key: CommitKey | undefined,
  pause: Pause,
): Promise<WriteItem> {
  const own = key?.codec ?? codec;
  const entries: StoredEntryRow[] = [];
  for (const row of changes.entries) {
    const created = await mapInSlices(
      changes.nodes.filter((node) => node.logIndex === row.index),
      (nodes) => nodes.map((node) => ({ sequence: node.sequence, payload: node.payload })),
      pause,
    );
    const packed =
      row.parts === undefined
        ? await packEntryInSlices(row.entry, created, pause)
        : packEntry(row.entry, created, row.parts);
    entries.push(storedEntry(row, packed, own));
    await pause();
  }
  const texts = indexed
    ? await mapInSlices(changes.nodes, (nodes) => nodeTextRows(nodes, codec.encrypted), pause)
    : undefined;
  if (!codec.encrypted) return { changes, entries, record, texts };
  const nodes = await mapInSlices(
    changes.nodes,
    (rows) => rows.map((node) => sealNode(own, node)),
    pause,
  );
  const sealed = sealChanges(own, { ...changes, nodes: [] });
  return {
    changes: { ...sealed.changes, nodes },
    entries,
    record: record === undefined ? undefined : sealRecord(codec, record),
    twins: sealed.twins,
    texts,
    threadKey: key?.row,
  };
}

/**
 * One commit as stored: entries packed, then every client-supplied column sealed with `codec`
 * (sealed-rows.ts), the idempotency key hashed. With the plain codec only the packing happens;
 * the caller's objects are never changed.
 */
export function storedItem(
  changes: ReadModelChanges,
  record: IdempotencyRecord | undefined,
  codec: FieldCodec,
  indexed: boolean,
  key?: CommitKey,
): WriteItem {
  // The thread's rows under its data key; the idempotency record (not the thread's) under `codec`.
  const own = key?.codec ?? codec;
  const entries = storedEntries(changes.entries, changes.nodes, own, changes.logOnly?.verbatim);
  // The search text comes from the plain payloads, before they are sealed.
  const texts = indexed ? nodeTextRows(changes.nodes, codec.encrypted) : undefined;
  if (!codec.encrypted) return { changes, entries, record, texts };
  const sealed = sealChanges(own, changes);
  return {
    changes: sealed.changes,
    entries,
    record: record === undefined ? undefined : sealRecord(codec, record),
    twins: sealed.twins,
    texts,
    threadKey: key?.row,
  };
}
