/**
 * The canonical text of a `nodes_appended` entry in parts: the text between the node payloads
 * (`pieces`) and each payload's canonical text (`payloads`), so that
 * `pieces[0] + payloads[0] + pieces[1] + … + payloads[n-1] + pieces[n]` is canonicalJson(entry).
 * A commit computes them once and every later step reuses them: the hash chain and the stored
 * row take the joined text, the node rows take the payload texts, and the store packs the entry
 * (its text without the payloads the node rows hold) from the pieces without searching the text.
 */
import { canonicalJson } from '../canonical.js';
import type { LogEntry } from '../log/index.js';
import type { RecordedNode } from './events.js';

export interface EntryTextParts {
  /** `payloads.length + 1` texts around the payloads. */
  pieces: string[];
  /** The canonical text of each recorded node's payload, in event order. */
  payloads: string[];
}

/** Stands for a node's payload in the skeleton. */
const PAYLOAD_MARK = '\u0000weft-payload:';
/** How the mark appears in canonical text: JSON escapes the NUL. */
const PAYLOAD_MARK_TEXT = canonicalJson(PAYLOAD_MARK).slice(0, -1);

/**
 * The parts of a `nodes_appended` entry with at least two nodes, canonicalising every payload
 * once: the entry is written as a skeleton with a mark in place of each payload — a payload's
 * place and the key order around it do not depend on its value — and split at the marks.
 * Undefined for other entries (the caller canonicalises as usual), or if the marks are not found
 * exactly once each (a payload text containing the mark).
 */
export function nodesEntryParts(entry: LogEntry): EntryTextParts | undefined {
  const event = entry.event as unknown as { type: string; nodes?: unknown };
  if (event.type !== 'nodes_appended' || !Array.isArray(event.nodes)) return undefined;
  const recorded = event.nodes as RecordedNode[];
  if (recorded.length < 2) return undefined;
  const payloads = recorded.map((node) => canonicalJson(node.payload));
  const skeleton = canonicalJson({
    ...entry,
    event: { ...event, nodes: recorded.map((node, i) => ({ ...node, payload: PAYLOAD_MARK + i })) },
  });
  const split = skeleton.split(PAYLOAD_MARK_TEXT);
  if (split.length !== recorded.length + 1) return undefined;
  const pieces = [split[0]!];
  for (let i = 0; i < recorded.length; i++) {
    const part = split[i + 1]!;
    const tail = `${i}"`;
    if (!part.startsWith(tail)) return undefined;
    pieces.push(part.slice(tail.length));
  }
  return { pieces, payloads };
}

/** The text the parts stand for. */
export function joinParts(parts: EntryTextParts): string {
  let text = parts.pieces[0]!;
  for (let i = 0; i < parts.payloads.length; i++) text += parts.payloads[i]! + parts.pieces[i + 1]!;
  return text;
}

/**
 * The parts of the entry signed with `stateHash`, given the parts of its unsigned text:
 * `verification` sorts after every other key of an entry, so the signature is the last member.
 */
export function signParts(parts: EntryTextParts, stateHash: string): EntryTextParts {
  const pieces = [...parts.pieces];
  pieces[pieces.length - 1] = signText(pieces[pieces.length - 1]!, stateHash);
  return { pieces, payloads: parts.payloads };
}

/** `text` (an unsigned entry's canonical text, or its last piece) with the signature appended. */
export const signText = (text: string, stateHash: string): string =>
  `${text.slice(0, -1)},"verification":{"stateHash":${JSON.stringify(stateHash)}}}`;
