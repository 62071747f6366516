/**
 * Reading the log back: the one path every reader of `log_entry` takes (the engine's thread
 * store, the API's read queries, the event-log store). A stored entry may be sealed (encryption
 * at rest), packed (its node payloads cut out, see packed-entry.ts) or both; reading opens the
 * seal, then splices the payloads back from the node rows, so every reader gets the same text.
 * Reading the columns any other way misses one of the two steps.
 */
import { type FieldCodec, keyringOf } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { logEntry, node, type StoredEntryRow } from '../tables/index.js';
import { indexSpans, type Lineage, segmentOfSequence } from './lineage.js';
import { entryTexts } from './packed-entry.js';

/** Indices in `[from, to)`, at most `limit` of them. */
export interface LogWindow {
  from: number;
  to: number;
  limit: number;
  /**
   * False: the payloads of the nodes an entry created read as `null` where the store keeps them
   * apart from the entry (packed-entry.ts), so they are not read at all. The texts are then not
   * the canonical ones: for a reader of the entries' other fields, never for hashing.
   */
  nodePayloads?: boolean;
}

/** What `ThreadStore.readEntries` may leave out: node payloads kept apart, entries past `limit`. */
export type EntryReads = Partial<Pick<LogWindow, 'nodePayloads' | 'limit'>>;

/** Largest index value a query may bind: `log_index` is a 32-bit INTEGER on Postgres. */
export const MAX_LOG_INDEX = 2_147_483_647;

/** The window of at most `take` entries after index `afterIndex` (-1: from the start). */
export const windowAfter = (afterIndex: number, take: number): LogWindow => ({
  from: Math.max(0, afterIndex + 1),
  to: MAX_LOG_INDEX,
  limit: take,
});

export interface LogTexts {
  /** The canonical text: what hashes and replays are over. */
  text: string;
  /** The text as it was appended (differs from `text` only where the store kept it verbatim). */
  appended: string;
}

export interface StoredLogEntry extends LogTexts {
  index: number;
  entryId: string;
  type: string;
  recordedAt: Date;
}

const L = logEntry.c;
const N = node.c;
const CONTENT = [L.entry, L.packed, L.verbatim].join(', ');
const WINDOW = `FROM ${logEntry.sql} WHERE ${L.threadId} = ? AND ${L.index} >= ? AND ${L.index} < ? ORDER BY ${L.index} LIMIT ?`;
const HEAD = [L.index, L.entryId, L.type, L.recordedAt].join(', ');
const STATEMENTS = {
  texts: `SELECT ${CONTENT} ${WINDOW}`,
  rows: `SELECT ${HEAD}, ${CONTENT} ${WINDOW}`,
  heads: `SELECT ${HEAD} ${WINDOW}`,
  payloads: `SELECT ${N.sequence}, ${N.payload} FROM ${node.sql} WHERE ${N.threadId} = ? AND ${N.sequence} >= ? AND ${N.sequence} <= ?`,
};

/** What a read takes of each entry: its texts, its columns and texts, or its columns only. */
type ReadShape = keyof typeof STATEMENTS;

async function read(
  weft: WeftPrisma,
  codec: FieldCodec,
  threadId: string,
  window: LogWindow,
  shape: ReadShape,
): Promise<{ rows: StoredEntryRow[]; texts: LogTexts[] }> {
  const to = Math.min(window.to, MAX_LOG_INDEX);
  if (window.limit <= 0 || window.from >= to) return { rows: [], texts: [] };
  const rows = (
    await rawQuery(weft, STATEMENTS[shape], [threadId, window.from, to, window.limit])
  ).map((row) => logEntry.decode(row, weft.provider));
  if (rows.length === 0 || shape === 'heads') return { rows, texts: [] };
  // The rows of the thread holding them, under that thread's data key (thread-keys.ts).
  const keys = keyringOf(codec);
  await keys.load([threadId]);
  const own = keys.forThread(threadId);
  const opened = rows.map((row) => ({
    entry: own.openText(row.entry),
    packed: row.packed === null ? null : own.openBytes(row.packed),
  }));
  const canonical = await entryTexts(
    opened,
    window.nodePayloads === false
      ? null
      : async (min, max) => {
          const nodes = await rawQuery(weft, STATEMENTS.payloads, [threadId, min, max]);
          return new Map(
            nodes.map((row) => {
              const n = node.decode(row, weft.provider);
              return [n.sequence, own.openText(n.payload)];
            }),
          );
        },
  );
  const texts = canonical.map((text, i) => {
    const verbatim = rows[i]!.verbatim;
    return { text, appended: verbatim === null ? text : own.openText(verbatim) };
  });
  return { rows, texts };
}

/**
 * The window read stretch by stretch of the thread's lineage (lineage.ts): a shared entry is
 * read from the thread holding it, and its packed payloads from that thread's node rows.
 */
async function readLineage(
  weft: WeftPrisma,
  codec: FieldCodec,
  lineage: Lineage,
  window: LogWindow,
  shape: ReadShape,
): Promise<{ rows: StoredEntryRow[]; texts: LogTexts[] }> {
  const spans = indexSpans(lineage, window.from, Math.min(window.to, MAX_LOG_INDEX));
  if (spans.length === 1) {
    const s = spans[0]!;
    return read(weft, codec, s.threadId, { ...window, from: s.fromIndex, to: s.toIndex }, shape);
  }
  const out: { rows: StoredEntryRow[]; texts: LogTexts[] } = { rows: [], texts: [] };
  for (const s of spans) {
    const limit = window.limit - out.rows.length;
    if (limit <= 0) break;
    const part = await read(
      weft,
      codec,
      s.threadId,
      { ...window, from: s.fromIndex, to: s.toIndex, limit },
      shape,
    );
    out.rows.push(...part.rows);
    out.texts.push(...part.texts);
    // A stretch shorter than its bounds: the log ends there (nothing later can follow a gap).
    if (part.rows.length < Math.min(limit, s.toIndex - s.fromIndex)) break;
  }
  return out;
}

/** The texts of the thread's entries in `window`, in index order. */
export async function readLogTexts(
  weft: WeftPrisma,
  codec: FieldCodec,
  lineage: Lineage,
  window: LogWindow,
): Promise<LogTexts[]> {
  return (await readLineage(weft, codec, lineage, window, 'texts')).texts;
}

/** The thread's entries in `window` with their row columns, in index order. */
export async function readLogEntries(
  weft: WeftPrisma,
  codec: FieldCodec,
  lineage: Lineage,
  window: LogWindow,
): Promise<StoredLogEntry[]> {
  const { rows, texts } = await readLineage(weft, codec, lineage, window, 'rows');
  return rows.map((row, i) => ({
    index: row.index,
    entryId: row.entryId,
    type: row.type,
    recordedAt: row.recordedAt,
    ...texts[i]!,
  }));
}

/** What a list of entries shows without their bodies: a read of the index's columns only. */
export type LogEntryHead = Omit<StoredLogEntry, keyof LogTexts>;

/** The thread's entries in `window` without their texts (nothing is opened or spliced). */
export async function readLogHeads(
  weft: WeftPrisma,
  codec: FieldCodec,
  lineage: Lineage,
  window: LogWindow,
): Promise<LogEntryHead[]> {
  const { rows } = await readLineage(weft, codec, lineage, window, 'heads');
  return rows.map((row) => ({
    index: row.index,
    entryId: row.entryId,
    type: row.type,
    recordedAt: row.recordedAt,
  }));
}

/**
 * The index of the entry that logged node `sequence`, from its row in the stretch holding it:
 * one indexed lookup, where working it out from the log means folding the whole thread.
 */
export async function readNodeLogIndex(
  weft: WeftPrisma,
  lineage: Lineage,
  sequence: number,
): Promise<number | undefined> {
  if (!Number.isSafeInteger(sequence) || sequence < 1 || sequence > MAX_LOG_INDEX) return undefined;
  const stretch = segmentOfSequence(lineage, sequence);
  if (sequence <= stretch.fromSeq || sequence > stretch.toSeq) return undefined;
  const [row] = await rawQuery(
    weft,
    `SELECT ${N.logIndex} FROM ${node.sql} WHERE ${N.threadId} = ? AND ${N.sequence} = ?`,
    [stretch.threadId, sequence],
  );
  return row === undefined ? undefined : node.decode(row, weft.provider).logIndex;
}
