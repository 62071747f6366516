import { canonicalListPieces } from '../canonical.js';
import { err, ok, type Result } from '../errors.js';
import { CHUNK, type Steps } from '../graph/index.js';
import {
  findJsonUnsafe,
  type JsonUnsafe,
  LOG_SCHEMA_VERSION,
  type LogEntry,
} from '../log/index.js';
import {
  applyCreationEntrySteps,
  applyThreadEntry,
  type ThreadEffect,
  type ThreadMachineOptions,
} from './apply.js';
import {
  type EntryTextParts,
  joinParts,
  nodesEntryParts,
  signParts,
  signText,
} from './entry-text.js';
import type { ThreadEvent } from './events.js';
import type { ThreadState } from './state.js';
import { unsignedEntryText } from './state-delta.js';

export const THREAD_MACHINE_ID = 'weft.thread';
export const THREAD_MACHINE_VERSION = '1';

/** What the runtime supplies for one entry: its id and time come from ports, never the core. */
export interface EntryStamp {
  id: string;
  recordedAt: string;
  causationId?: string;
  correlationId?: string;
}

export interface Committed {
  entry: LogEntry;
  /** canonicalJson(entry): the text the store keeps and the hash chain is over. */
  text: string;
  /** The same text in parts around the node payloads (a `nodes_appended` entry of 2+ nodes). */
  parts?: EntryTextParts;
  state: ThreadState;
  effects: ThreadEffect[];
}

/**
 * Turns a planned event into the next log entry of `state`: checks it is plain JSON (naming the
 * offending path), applies it, and signs the entry with the resulting `verification.stateHash`.
 * Pure; nothing is written — the engine persists `entry` and publishes `effects` after commit.
 */
export function commitEvent(
  state: ThreadState,
  event: ThreadEvent,
  stamp: EntryStamp,
  options: ThreadMachineOptions = {},
): Result<Committed> {
  const unsafe = findJsonUnsafe(event, '$.event');
  if (unsafe) return err(notJson(unsafe));
  const unsigned = unsignedEntry(state, event, stamp);
  const parts = nodesEntryParts(unsigned);
  const unsignedText = parts === undefined ? unsignedEntryText(unsigned) : joinParts(parts);
  const applied = applyThreadEntry(state, unsigned, options, unsignedText);
  if (!applied.ok) return applied;
  const [next, effects] = applied.value;
  return ok({
    entry: { ...unsigned, verification: { stateHash: next.stateHash } },
    text: signText(unsignedText, next.stateHash),
    ...(parts === undefined ? {} : { parts: signParts(parts, next.stateHash) }),
    state: next,
    effects,
  });
}

/**
 * `commitEvent` in steps (see `Steps`), for the first event of a thread: a `state_imported`
 * event's nodes are checked, rendered and hashed a chunk at a time, so a driver can pause
 * between chunks. Any other event is committed in one step. Same result as `commitEvent`. Pure.
 */
export function* commitEventSteps(
  state: ThreadState,
  event: ThreadEvent,
  stamp: EntryStamp,
  options: ThreadMachineOptions = {},
): Steps<Result<Committed>> {
  const nodes = importedNodes(event);
  if (nodes === undefined || state.length !== 0) return commitEvent(state, event, stamp, options);
  // The event without its nodes, then each node: the same checks, a chunk at a time.
  const shell = { ...event, state: { ...(event as { state: object }).state, nodes: [] } };
  const unsafe = findJsonUnsafe(shell, '$.event');
  if (unsafe) return err(notJson(unsafe));
  for (let i = 0; i < nodes.length; i++) {
    const found = findJsonUnsafe(nodes[i], `$.event.state.nodes[${i}]`);
    if (found) return err(notJson(found));
    if (i > 0 && i % CHUNK === 0) yield;
  }
  const unsigned = unsignedEntry(state, event, stamp);
  // canonicalJson(unsigned), which is its unsigned text, in pieces.
  const pieces = yield* canonicalListPieces(unsigned, ['event', 'state', 'nodes'], CHUNK);
  if (pieces === undefined) return commitEvent(state, event, stamp, options);
  const applied = yield* applyCreationEntrySteps(state, unsigned, options, pieces);
  if (!applied.ok) return applied;
  const [next, effects] = applied.value;
  const unsignedText = yield* joinInSteps(pieces);
  return ok({
    entry: { ...unsigned, verification: { stateHash: next.stateHash } },
    text: signText(unsignedText, next.stateHash),
    state: next,
    effects,
  });
}

/** The nodes of a `state_imported` event, if it has a node list. */
function importedNodes(event: ThreadEvent): unknown[] | undefined {
  if (event.type !== 'state_imported') return undefined;
  const nodes = (event.state as { nodes?: unknown } | null | undefined)?.nodes;
  return Array.isArray(nodes) && nodes.length > 0 ? nodes : undefined;
}

/** `pieces.join('')`, a chunk of pieces at a time. */
function* joinInSteps(pieces: readonly string[]): Steps<string> {
  const joined: string[] = [];
  for (let at = 0; at < pieces.length; at += CHUNK) {
    joined.push(pieces.slice(at, at + CHUNK).join(''));
    yield;
  }
  return joined.join('');
}

const notJson = (unsafe: JsonUnsafe) => ({
  code: 'VALIDATION_FAILED' as const,
  message: `${unsafe.path}: ${unsafe.reason}`,
  issues: [{ path: unsafe.path, message: unsafe.reason }],
});

/** The entry `event` becomes after `state`, unsigned. */
function unsignedEntry(state: ThreadState, event: ThreadEvent, stamp: EntryStamp): LogEntry {
  return {
    schemaVersion: LOG_SCHEMA_VERSION,
    id: stamp.id,
    index: state.length,
    recordedAt: stamp.recordedAt,
    machineId: THREAD_MACHINE_ID,
    machineVersion: THREAD_MACHINE_VERSION,
    event: event as unknown as LogEntry['event'],
    ...(stamp.causationId === undefined ? {} : { causationId: stamp.causationId }),
    ...(stamp.correlationId === undefined ? {} : { correlationId: stamp.correlationId }),
  };
}
