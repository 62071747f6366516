/**
 * Compact storage of log entries that create nodes. A `nodes_appended` entry's canonical text
 * holds every new node's payload, which the node read model stores as well (`node.payload`, the
 * same canonical text). So the store keeps the entry text once without those payloads — cut out
 * where they stood, the cuts remembered by node sequence — and deflated: `log_entry.packed`,
 * with `log_entry.entry` empty. Reading splices the payloads back from the node rows, which
 * gives the exact original text by construction (each cut removed precisely that node's payload
 * text). An entry whose new payloads are tiny (or that creates no node), or whose text does not
 * contain a payload where expected, is stored as plain text.
 *
 * Tampering stays visible: the hash chain covers the entry text, so a changed node payload
 * changes the text read back, and verification fails at that entry.
 */
import { promisify } from 'node:util';
import { deflateRaw, deflateRawSync, inflateRawSync } from 'node:zlib';
import { CHUNK, runSteps, type Steps } from '../../core/graph/index.js';
import type { EntryTextParts } from '../../core/thread/entry-text.js';
import { drive, type Pause } from './time-slices.js';

const deflateRawAsync = promisify(deflateRaw);

/** A node the entry created: its sequence and canonical payload text (the node row's payload). */
export interface CreatedPayload {
  sequence: number;
  payload: string;
}

const PAYLOAD_KEY = '"payload":';
/** Fast and still ~4× on the skeletons (ids, kinds, parents): the append path pays for it. */
const DEFLATE = { level: 1 } as const;
/**
 * Smaller bodies are stored without deflating (first byte RAW): for an entry of a node or two
 * the saving is small and inflating every entry would slow down replays of many small entries.
 */
const DEFLATE_FROM_BYTES = 2048;
const RAW = 0;
const DEFLATED = 1;
/**
 * Entries whose new payloads total less are stored as text: below this the packed form's header
 * (`{"s":[sequence],"p":[lengths]}`, ~30 bytes for one node) would outweigh what the cut saves.
 * Every larger payload is stored once, in its node row; reading a window of entries fetches the
 * payloads of all its packed entries in one range query (log-reads.ts).
 */
const PACK_FROM_PAYLOAD_CHARS = 64;

/**
 * The packed form of `text`, or null when it is better stored as is. Format: one byte (RAW or
 * DEFLATED), then the body as UTF-8, deflated or not: a JSON header line
 * `{"s":[sequences],"p":[lengths]}` — the node sequence whose payload goes into each cut, and the
 * length (UTF-16 units) of each piece of text between cuts — then the pieces, concatenated.
 */
export function packEntry(
  text: string,
  created: readonly CreatedPayload[],
  parts?: EntryTextParts,
  /** Pack whatever the payloads' size (a redaction's entry, see redaction.ts). */
  always = false,
): Uint8Array | null {
  if (!worthPacking(created, always)) return null;
  const cut = parts === undefined ? runSteps(cutText(text, created)) : cutParts(parts, created);
  if (cut === null) return null;
  const body = bodyOf(cut);
  if (body.length < DEFLATE_FROM_BYTES) return Buffer.concat([Buffer.of(RAW), body]);
  return Buffer.concat([Buffer.of(DEFLATED), deflateRawSync(body, DEFLATE)]);
}

/**
 * `packEntry` for an entry of very many nodes (an import): the text is cut in time slices (see
 * time-slices.ts) and deflated off the event loop, in libuv's thread pool. Same bytes.
 */
export async function packEntryInSlices(
  text: string,
  created: readonly CreatedPayload[],
  pause: Pause,
): Promise<Uint8Array | null> {
  if (!worthPacking(created, false)) return null;
  const cut = await drive(cutText(text, created), pause);
  if (cut === null) return null;
  const body = bodyOf(cut);
  if (body.length < DEFLATE_FROM_BYTES) return Buffer.concat([Buffer.of(RAW), body]);
  return Buffer.concat([Buffer.of(DEFLATED), await deflateRawAsync(body, DEFLATE)]);
}

function worthPacking(created: readonly CreatedPayload[], always: boolean): boolean {
  let payloadChars = 0;
  for (const node of created) payloadChars += node.payload.length;
  return (payloadChars >= PACK_FROM_PAYLOAD_CHARS || always) && created.length > 0;
}

const bodyOf = (cut: Cut) =>
  Buffer.from(`${JSON.stringify({ s: cut.sequences, p: cut.lengths })}\n${cut.pieces.join('')}`);

interface Cut {
  /** The node sequence whose payload goes after each piece but the last. */
  sequences: number[];
  pieces: string[];
  lengths: number[];
}

/** The text cut at each created node's payload, found by searching the text in order. */
function* cutText(text: string, created: readonly CreatedPayload[]): Steps<Cut | null> {
  const cut: Cut = { sequences: [], pieces: [], lengths: [] };
  let cursor = 0;
  for (let i = 0; i < created.length; i++) {
    const node = created[i]!;
    if (i > 0 && i % CHUNK === 0) yield;
    // The payload key, then this node's payload text (checked in place: no concatenated needle).
    let at = text.indexOf(PAYLOAD_KEY, cursor);
    while (at >= 0 && !text.startsWith(node.payload, at + PAYLOAD_KEY.length)) {
      at = text.indexOf(PAYLOAD_KEY, at + 1);
    }
    if (at < 0) return null;
    const start = at + PAYLOAD_KEY.length;
    cut.pieces.push(text.slice(cursor, start));
    cut.lengths.push(start - cursor);
    cut.sequences.push(node.sequence);
    cursor = start + node.payload.length;
  }
  cut.pieces.push(text.slice(cursor));
  cut.lengths.push(text.length - cursor);
  return cut;
}

/**
 * The same cut from the entry's parts (core/thread/entry-text.ts), without searching: the
 * created nodes are those of the event's nodes, in order, whose payloads they hold; a recorded
 * node that created nothing (its content existed) keeps its payload in the text.
 */
function cutParts(parts: EntryTextParts, created: readonly CreatedPayload[]): Cut | null {
  const cut: Cut = { sequences: [], pieces: [], lengths: [] };
  let pending = parts.pieces[0]!;
  let next = 0;
  for (let i = 0; i < parts.payloads.length; i++) {
    const payload = parts.payloads[i]!;
    const node = created[next];
    if (node !== undefined && node.payload === payload) {
      cut.pieces.push(pending);
      cut.lengths.push(pending.length);
      cut.sequences.push(node.sequence);
      pending = parts.pieces[i + 1]!;
      next++;
    } else {
      pending += payload + parts.pieces[i + 1]!;
    }
  }
  if (next !== created.length) return null;
  cut.pieces.push(pending);
  cut.lengths.push(pending.length);
  return cut;
}

/** A packed entry opened: the node sequences it needs, and how to put the text back together. */
export interface OpenedEntry {
  sequences: number[];
  /** The original text, given the payload text of each needed sequence. */
  join(payloadOf: (sequence: number) => string | undefined): string;
}

export function openPackedEntry(packed: Uint8Array): OpenedEntry {
  const bytes = Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  const kind = bytes[0];
  if (kind !== RAW && kind !== DEFLATED) {
    throw new Error(`log storage is damaged: unknown packed entry kind ${kind}`);
  }
  const rest = bytes.subarray(1);
  const body = (kind === RAW ? rest : inflateRawSync(rest)).toString('utf8');
  const newline = body.indexOf('\n');
  const header = JSON.parse(body.slice(0, newline)) as { s: number[]; p: number[] };
  const text = body.slice(newline + 1);
  return {
    sequences: header.s,
    join(payloadOf) {
      let out = '';
      let cursor = 0;
      for (let i = 0; i < header.p.length; i++) {
        const length = header.p[i]!;
        out += text.slice(cursor, cursor + length);
        cursor += length;
        if (i < header.s.length) {
          const sequence = header.s[i]!;
          const payload = payloadOf(sequence);
          if (payload === undefined) {
            throw new Error(
              `log storage is damaged: a packed entry needs the payload of node ${sequence}, which is missing`,
            );
          }
          out += payload;
        }
      }
      return out;
    },
  };
}

/** A stored log_entry row as read: plain text, or packed. */
export interface StoredEntry {
  entry: string;
  packed: Uint8Array | null;
}

/**
 * The canonical texts of stored rows, in order. `payloads(min, max)` returns the payload texts
 * of the thread's nodes with sequence in `[min, max]`; it is called at most once. With `null`,
 * no payload is read: each cut gets `null` (a reader that needs the entries' other fields only).
 */
export async function entryTexts(
  rows: readonly StoredEntry[],
  payloads: ((min: number, max: number) => Promise<Map<number, string>>) | null,
): Promise<string[]> {
  const opened = rows.map((row) =>
    row.packed === null || row.entry !== '' ? null : openPackedEntry(row.packed),
  );
  if (payloads === null) {
    return rows.map((row, i) => opened[i]?.join(() => 'null') ?? row.entry);
  }
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const entry of opened) {
    for (const sequence of entry?.sequences ?? []) {
      if (sequence < min) min = sequence;
      if (sequence > max) max = sequence;
    }
  }
  const texts = min <= max ? await payloads(min, max) : new Map<number, string>();
  return rows.map((row, i) => opened[i]?.join((sequence) => texts.get(sequence)) ?? row.entry);
}
