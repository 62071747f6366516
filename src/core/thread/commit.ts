import { err, ok, type Result } from '../errors.js';
import { findJsonUnsafe, LOG_SCHEMA_VERSION, type LogEntry } from '../log/index.js';
import { applyThreadEntry, type ThreadEffect, type ThreadMachineOptions } from './apply.js';
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
  if (unsafe) {
    return err({
      code: 'VALIDATION_FAILED',
      message: `${unsafe.path}: ${unsafe.reason}`,
      issues: [{ path: unsafe.path, message: unsafe.reason }],
    });
  }
  const unsigned: LogEntry = {
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
