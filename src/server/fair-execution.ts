/**
 * Large reads take turns per caller. A page of a thousand nodes keeps the event loop busy for tens
 * of milliseconds; eight of them at once from one caller made everyone else wait for seconds. So
 * an operation that asks for many items (the product of the `first`/`last` sizes along any path
 * of its selection, at least HEAVY_ITEMS) runs only when no other such operation of the same
 * caller (API key; in open mode, everyone together) is running; the others wait their turn, in
 * order; so does any search (searchNodes), which reads up to a thousand texts whatever its page.
 * Other callers, and small operations of the same caller, never wait. Together with the
 * loaders yielding between levels of a selection, another client waits for at most a slice of
 * one large page, not for all of them.
 *
 * More than MAX_WAITING operations waiting for one caller are refused with 429
 * TOO_MANY_REQUESTS: a client that fires large pages faster than they can be answered learns so
 * at once instead of piling them up in memory.
 */

import { performance } from 'node:perf_hooks';
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  getOperationAST,
  Kind,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../graphql/context.js';

/** Items an operation may ask for and still run without taking a turn. */
export const HEAVY_ITEMS = 200;
/** Large operations of one caller waiting for their turn, at most. */
export const MAX_WAITING = 32;
const PAGE_ARGS: ReadonlySet<string> = new Set(['first', 'last']);
/** Fields that read and rank many rows whatever page they return: each counts as large. */
const HEAVY_FIELDS: ReadonlySet<string> = new Set(['searchNodes']);
/** Fragment spreads followed at most (documents are depth-limited before this runs anyway). */
const MAX_STEPS = 10_000;

/**
 * The largest product of page sizes (`first`/`last`, literal or variable) along any path of the
 * operation's selection; a field without one counts 1. Bounded work whatever the document.
 */
export function requestedItems(
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): number {
  const operation = getOperationAST(document, operationName);
  if (operation === null || operation === undefined) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  }
  let steps = 0;
  const sizeOf = (value: ValueNode): number => {
    const v =
      value.kind === Kind.INT
        ? Number(value.value)
        : value.kind === Kind.VARIABLE
          ? variables?.[value.name.value]
          : undefined;
    return typeof v === 'number' && Number.isFinite(v) && v > 1 ? v : 1;
  };
  const walk = (set: SelectionSetNode, seen: ReadonlySet<string>): number => {
    let most = 1;
    for (const selection of set.selections) {
      if (++steps > MAX_STEPS) return most;
      if (selection.kind === Kind.FIELD) {
        let size = HEAVY_FIELDS.has(selection.name.value) ? HEAVY_ITEMS : 1;
        for (const arg of selection.arguments ?? []) {
          if (PAGE_ARGS.has(arg.name.value)) size = Math.max(size, sizeOf(arg.value));
        }
        const inner = selection.selectionSet === undefined ? 1 : walk(selection.selectionSet, seen);
        most = Math.max(most, size * inner);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        most = Math.max(most, walk(selection.selectionSet, seen));
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (fragment === undefined || seen.has(name)) continue;
        most = Math.max(most, walk(fragment.selectionSet, new Set([...seen, name])));
      }
    }
    return most;
  };
  return walk(operation.selectionSet, new Set());
}

/**
 * The share of the time one caller's waiting large operations may run back to back: after one
 * that took d ms, the next waiting one starts d × (1 − HEAVY_SHARE) / HEAVY_SHARE ms later (at
 * most MAX_PAUSE_MS), so a caller that keeps a queue of searches full cannot keep the event loop
 * (and the database) busy all the time. A caller with nothing waiting is never paused.
 */
export const HEAVY_SHARE = 0.5;
/** The longest pause between one caller's waiting large operations. */
export const MAX_PAUSE_MS = 250;

/** How long the next waiting large operation of a caller waits after one that ran `ranMs`. */
export const pauseAfter = (ranMs: number): number =>
  Math.min((Math.max(0, ranMs) * (1 - HEAVY_SHARE)) / HEAVY_SHARE, MAX_PAUSE_MS);

/** One caller's turn: the running operation's release, and those waiting after it. */
interface Lane {
  waiting: Array<() => void>;
}

export interface FairExecution {
  plugin: Plugin;
  /** Large operations waiting for their turn now (all callers). */
  waiting(): number;
}

export function createFairExecution(): FairExecution {
  const lanes = new Map<string, Lane>();
  let waitingTotal = 0;

  const acquire = (caller: string): Promise<void> | undefined => {
    const lane = lanes.get(caller);
    if (lane === undefined) {
      lanes.set(caller, { waiting: [] });
      return undefined;
    }
    if (lane.waiting.length >= MAX_WAITING) {
      throw new GraphQLError(
        `${MAX_WAITING} large operations of this caller are already waiting their turn: wait for their answers before sending more, or ask for smaller pages (under ${HEAVY_ITEMS} items)`,
        { extensions: { code: 'TOO_MANY_REQUESTS', http: { status: 429 } } },
      );
    }
    waitingTotal++;
    return new Promise<void>((resolve) => lane.waiting.push(resolve));
  };
  const release = (caller: string, ranMs: number) => {
    const lane = lanes.get(caller);
    if (lane === undefined) return;
    const next = lane.waiting.shift();
    if (next === undefined) {
      lanes.delete(caller);
      return;
    }
    waitingTotal--;
    // Never in this microtask: a caller's queued operations would otherwise run back to back,
    // each straight after the last, with no I/O polled between them (SQLite reads answer
    // synchronously), so no other client would be heard until all ran.
    const pause = pauseAfter(ranMs);
    if (pause < 1) setImmediate(next);
    else setTimeout(next, pause);
  };

  const plugin: Plugin = {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation === 'subscription') return;
      const items = requestedItems(
        args.document,
        args.operationName,
        args.variableValues as Record<string, unknown> | undefined,
      );
      if (items < HEAVY_ITEMS) return;
      const auth = (args.contextValue as Partial<GraphQLContext>).auth;
      const caller = auth?.keyId ?? `tenant:${auth?.tenant ?? ''}`;
      setExecuteFn(async (executionArgs) => {
        const turn = acquire(caller);
        if (turn !== undefined) await turn;
        const started = performance.now();
        try {
          return await executeFn(executionArgs);
        } finally {
          release(caller, performance.now() - started);
        }
      });
    },
  };
  return { plugin, waiting: () => waitingTotal };
}
