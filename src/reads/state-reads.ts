/**
 * The reads answered from the engine's thread state and log rather than the read model: spend,
 * state at an index, verification, diffs and projections.
 */
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { diffLogs, type VerifyReport } from '../core/log/index.js';
import {
  type CompileOptions,
  compileProjection,
  type OmittedNode,
  type Projection,
  type ProjectionInput,
} from '../core/projection/index.js';
import type { ThreadSpend } from '../core/thread/index.js';
import { isStorable } from '../engine/tenancy.js';
import type { Engine, StateAt } from '../engine/types.js';
import type { ReadQueries } from '../store/read-model/queries.js';
import { eventOf, type ThreadDiffView, toThreadView } from './views.js';

/**
 * A compiled projection of a thread's current state, with `omitted(limit)` listing the best
 * omitted candidates of that same state (compiled again on the same graph value, so the list
 * agrees with the view whatever was written since).
 */
export interface ProjectionView extends Projection {
  threadId: string;
  omittedFor(limit: number): Result<OmittedNode[]>;
}

/** The most omitted candidates one request may list. */
export const MAX_OMITTED_LIMIT = 1000;

/**
 * The o200k / cl100k counters, loaded on first use: evaluating them takes 1–2 s, which every
 * importer of the read API would otherwise pay. The module registry evaluates the module once and
 * hands every later import the same frozen table, so nothing is kept here.
 */
function tokenCountersFor(
  tokenizer: ProjectionInput['tokenizer'],
): Promise<CompileOptions['tokenCounters']> {
  if (tokenizer !== 'o200k' && tokenizer !== 'cl100k') return Promise.resolve(undefined);
  return import('../core/projection/gpt-tokenizer.js').then((m) => m.GPT_TOKEN_COUNTERS);
}

const invalid = (path: string, message: string): WeftError => ({
  code: 'VALIDATION_FAILED',
  message,
  issues: [{ path, message }],
});

/** Reads answered from the engine's thread state and log rather than the read model. */
export function createStateReads(engine: Engine, q: ReadQueries) {
  return {
    async spend(threadId: string): Promise<Result<ThreadSpend>> {
      // The thread row keeps it; a row that does not know it is answered from the folded state.
      const [row] = isStorable(threadId) ? await q.threads([threadId]) : [];
      const kept = row === undefined ? null : toThreadView(row).spend;
      if (kept !== null) return ok(kept);
      const state = await engine.getState(threadId);
      return state.ok ? ok(state.value.spend) : state;
    },

    stateAt: (threadId: string, index?: number): Promise<Result<StateAt>> =>
      engine.stateAt(threadId, index),

    verify: (threadId: string, strict: boolean): Promise<Result<VerifyReport>> =>
      engine.verify(threadId, { strict }),

    async diff(a: string, b: string): Promise<Result<ThreadDiffView>> {
      const [left, right] = await Promise.all([
        engine.store.readEntries(a),
        engine.store.readEntries(b),
      ]);
      for (const [id, entries] of [
        [a, left],
        [b, right],
      ] as const) {
        if (entries.length === 0) {
          return err({
            code: 'NOT_FOUND',
            message: `thread ${id} does not exist`,
            entity: 'Thread',
            id,
          });
        }
      }
      const diff = diffLogs(left, right);
      return ok({
        commonPrefix: diff.commonPrefix,
        onlyA: diff.onlyA.map((e) => eventOf(a, e)),
        onlyB: diff.onlyB.map((e) => eventOf(b, e)),
      });
    },

    async projection(threadId: string, input: ProjectionInput): Promise<Result<ProjectionView>> {
      const state = await engine.getState(threadId);
      if (!state.ok) return state;
      const graph = state.value.graph;
      const tokenCounters = await tokenCountersFor(input.tokenizer);
      const options: CompileOptions = tokenCounters === undefined ? {} : { tokenCounters };
      const compiled = compileProjection(graph, input, options);
      if (!compiled.ok) return compiled;
      return ok({
        ...compiled.value,
        threadId,
        omittedFor(limit: number) {
          if (!Number.isInteger(limit) || limit < 0 || limit > MAX_OMITTED_LIMIT) {
            return err(
              invalid('$.first', `first must be an integer from 0 to ${MAX_OMITTED_LIMIT}`),
            );
          }
          const again = compileProjection(graph, input, { ...options, omittedLimit: limit });
          return again.ok ? ok(again.value.omitted) : again;
        },
      });
    },
  };
}
