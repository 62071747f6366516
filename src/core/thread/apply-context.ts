/**
 * What the handlers of one entry share: the options, the effects and the state-hash delta being
 * built as the entry is applied, and the errors more than one of them reports.
 */

import { quoteJson } from '../canonical.js';
import { err, isWeftFailure, ok, type Result, type WeftError } from '../errors.js';
import type { AgentState, CausalNode, GraphState, ImportLimits } from '../graph/index.js';
import type { LogEntry } from '../log/index.js';
import type { MemoryLimits, PriceTable, RunEvent } from '../run/index.js';
import type { NodeMeta } from './state.js';

/** What applying an entry caused, for the runtime to publish after commit. Never executed here. */
export type ThreadEffect =
  | { type: 'thread_created'; threadId: string }
  | { type: 'node_appended'; node: CausalNode; meta: NodeMeta }
  | { type: 'run_started'; runId: string }
  | { type: 'run_status_changed'; runId: string; from: string; to: string }
  | {
      type: 'approval_requested';
      runId: string;
      waitingFor: string;
      pendingApproval: unknown;
      timeoutAt: string | undefined;
    }
  | { type: 'run_event'; runId: string; event: RunEvent };

export interface ThreadMachineOptions {
  /**
   * Take recorded node ids as given instead of recomputing them from content. Only for replaying
   * a log this code wrote itself (its own store), with `verify: 'strict'` (or `'present'` on fully
   * signed logs): the state hash commits to every byte of each entry, payloads included, so a
   * payload changed after signing still fails verification at its index. It proves nothing about
   * a log from elsewhere (`weft import`): whoever wrote it could compute every hash, including
   * over a node whose id is not its content's. Leave this off there, and every id is recomputed
   * and checked (NODE_ID_MISMATCH). Every other node rule is checked either way.
   */
  trustRecordedIds?: boolean;
  prices?: PriceTable;
  memoryLimits?: MemoryLimits;
  importLimits?: ImportLimits;
  /**
   * The graph `prepareImportState` already checked and built from exactly `state` (the same
   * object, with this thread's vocabulary and these import limits): a `state_imported` entry of
   * that state takes it instead of checking and building it again. Any other state is checked.
   */
  importedGraph?: { state: AgentState; graph: GraphState };
}

export const invalid = (message: string): WeftError => ({
  code: 'VALIDATION_FAILED',
  message,
  issues: [{ path: '$.event', message }],
});

export interface ApplyContext {
  entry: LogEntry;
  options: ThreadMachineOptions;
  /** Undefined when the caller discards effects: then none are built. */
  effects: ThreadEffect[] | undefined;
  /**
   * The ids of the nodes the entry created, as the canonical JSON of the list without its
   * brackets (`"id1","id2"`), built as they are created.
   */
  created: string;
  /** Ids of the runs the entry changed, each once. */
  touchedRuns: string[];
  /** The reducer's events per touched run, in order: part of the state-hash delta. Lazy. */
  runEvents: Map<string, RunEvent[]> | undefined;
  /**
   * Set when a node of the entry is redacted (its payload a tombstone): the entry's text is no
   * longer the one its state hash was computed over, so the hash it records is taken as given.
   */
  withheld?: boolean;
}

export const runNotFound = (runId: string): WeftError => ({
  code: 'NOT_FOUND',
  message: `run ${runId} does not exist in this thread`,
  entity: 'Run',
  id: runId,
});

export function addCreated(ctx: ApplyContext, id: string): void {
  ctx.created = ctx.created === '' ? quoteJson(id) : `${ctx.created},${quoteJson(id)}`;
}

export function touch(ctx: ApplyContext, runId: string): void {
  if (!ctx.touchedRuns.includes(runId)) ctx.touchedRuns.push(runId);
}

/** Runs a core function that reports bad input by throwing a WeftFailure, as a Result. */
export function attempt<T>(fn: () => T): Result<T> {
  try {
    return ok(fn());
  } catch (error) {
    if (isWeftFailure(error)) return err(error.error);
    throw error;
  }
}
