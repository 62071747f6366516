/**
 * What the peer benchmark asks of each system under test. Every method does the one thing a
 * user of that system would call for it; the bench times the calls and then, outside the timed
 * part, turns what they returned into a `ConversationView` for the content check.
 */
import type { ConversationView, Turn } from './workload.js';

export type Backend = 'sqlite' | 'postgres';

/** LangGraph's own graph and API, checkpointed by WeftSaver (src/langgraph) instead of its savers. */
export const ON_WEFT_SAVER = 'LangGraph on WeftSaver';

/** LangGraph's graph and calls with a checkpointer that stores nothing (peers/reference-saver.ts). */
export const NO_STORAGE = 'LangGraph, nothing stored';

/** A point in a side's history a user would remember (a log index, a checkpoint config). */
export type Mark = unknown;

/** What a read returned, kept opaque until `view` turns it into the comparable form. */
export type Snapshot = unknown;

export interface Side {
  readonly system: 'Weft' | 'LangGraph' | typeof ON_WEFT_SAVER | typeof NO_STORAGE;
  readonly backend: Backend;
  /** Stores one turn the way this system records a turn. */
  writeTurn(turn: Turn): Promise<void>;
  /**
   * LangGraph only, for sizes whose turn-by-turn history is too big to write: stores these turns
   * with one `invoke` (all their messages as the input), so the latest and middle checkpoints
   * hold the same state as turn by turn would, without the history in between.
   */
  writeCompacted?(turns: Turn[]): Promise<void>;
  /** The point right after the last written turn (called untimed, e.g. at the middle turn). */
  mark(): Promise<Mark>;
  /** The latest state, read by the client that wrote it (Weft answers from its thread cache). */
  readLatest(): Promise<Snapshot>;
  /** A freshly opened client on the same database (opened untimed), to read the latest state cold. */
  coldReader(): Promise<{ read(): Promise<Snapshot>; close(): Promise<void> }>;
  /** The state as of a mark (time travel). */
  readAt(mark: Mark): Promise<Snapshot>;
  /** Forks the history at a mark; returns the fork's state as the system reads it after forking (untimed). */
  fork(mark: Mark): Promise<() => Promise<Snapshot>>;
  view(snapshot: Snapshot): ConversationView;
  /**
   * LangGraph sides: milliseconds so far during which a call of the checkpointer (getTuple, list,
   * put, putWrites) was pending. LangGraph runs its next step while a put is pending, so this
   * bounds the saver's share of a turn from above; a CPU profile tells them apart.
   */
  saverMs?(): number;
  /** Database bytes used (checkpointed SQLite files; Postgres database size growth). */
  bytes(): Promise<number>;
  close(): Promise<void>;
}
