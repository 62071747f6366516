/**
 * Shared execution of subscription events. A subscription runs its document once per source
 * event; with 1,000 clients on one thread that is 1,000 executions (and as many read-model
 * reads) of the same document over the same event. This envelop plugin replaces the subscribe
 * function: each subscriber keeps its own source stream (its cursor, replay, de-duplication and
 * gap repair stay per subscriber, see stream.ts), but the execution of an event is memoised per
 *
 *   (source event object, printed document, operation name, variables, caller identity)
 *
 * so identical subscriptions execute once per event and share the result object. The source
 * event objects are shared between subscribers because the hub hands the same LogItem to every
 * listener and the streams build one payload per item / effect (subscriptions.ts); events read
 * back from the store during a replay are a subscriber's own objects and are executed for it
 * alone. Each shared execution gets a context of its own with fresh DataLoaders, so it reads the
 * committed state of that event and nothing cached by one subscriber reaches another.
 *
 * Authorisation: the caller identity in the key comes from `identify(context)`. The default
 * takes `principal`, `tenantId` and `scopes` from the context (whichever are present) and the
 * auth plugin's `auth` (tenant, scopes, key id), so executions are shared per API key only; an
 * auth plugin may pass its own `identify`. `identify` returning undefined turns sharing off for that subscriber (it
 * is then executed exactly as graphql-yoga would).
 */

import { performance } from 'node:perf_hooks';
import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  execute,
  print,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { canonicalJson } from '../core/canonical.js';
import { DIRECT, type DirectTicket, type MaybeDirect } from '../events/index.js';
import { createLoaders, type GraphQLContext } from '../graphql/context.js';

export interface SharedSubscriptionOptions {
  /**
   * A stable text identifying everything about the caller that can change a result
   * (principal, tenant, scopes); undefined: do not share this subscriber's executions.
   */
  identify?: (context: Record<string, unknown>) => string | undefined;
}

/** Context fields that identify the caller for authorisation (the default `identify`). */
export const IDENTITY_FIELDS = ['principal', 'tenantId', 'scopes'] as const;

export function defaultIdentify(context: Record<string, unknown>): string | undefined {
  const identity: Record<string, unknown> = {};
  for (const field of IDENTITY_FIELDS) {
    if (context[field] !== undefined) identity[field] = context[field];
  }
  // The auth plugin's caller (src/server/auth): tenant, scopes and key, so nothing is shared
  // between keys.
  const auth = (context as Partial<GraphQLContext>).auth;
  if (auth !== undefined) {
    identity.auth = {
      authenticated: auth.authenticated,
      tenant: auth.tenant,
      scopes: [...auth.scopes].sort(),
      keyId: auth.keyId,
    };
  }
  try {
    return canonicalJson(identity);
  } catch {
    return undefined; // not plain data: no safe key, no sharing
  }
}

const printed = new WeakMap<DocumentNode, string>();
const printOf = (document: DocumentNode): string => {
  let text = printed.get(document);
  if (text === undefined) {
    text = print(document);
    printed.set(document, text);
  }
  return text;
};

/** The key of everything but the event that an execution depends on; undefined: no sharing. */
function keyOf(
  args: ExecutionArgs,
  identify: (context: Record<string, unknown>) => string | undefined,
): string | undefined {
  const context = (args.contextValue ?? {}) as Record<string, unknown>;
  const identity = identify(context);
  if (identity === undefined) return undefined;
  let variables: string;
  try {
    variables = canonicalJson(args.variableValues ?? {});
  } catch {
    return undefined;
  }
  return JSON.stringify([printOf(args.document), args.operationName ?? null, variables, identity]);
}

/**
 * Results by source event, then by key. Weak in the event: an entry lives while some
 * subscriber still holds the event, so nothing outlives the fan-out of one commit.
 */
const executions = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();
/** The settled ones among them, to be taken without a promise step for each subscriber. */
const settled = new WeakMap<Promise<ExecutionResult>, ExecutionResult>();

function executeShared(
  args: ExecutionArgs,
  key: string,
  payload: unknown,
): Promise<ExecutionResult> {
  if (typeof payload !== 'object' || payload === null) return executeEvent(args, payload);
  let byKey = executions.get(payload);
  if (byKey === undefined) {
    byKey = new Map();
    executions.set(payload, byKey);
  }
  let result = byKey.get(key);
  if (result === undefined) {
    const made: Promise<ExecutionResult> = executeEvent(args, payload).then((done) => {
      if (typeof done.data === 'object' && done.data !== null) texts.set(done.data, undefined);
      settled.set(made, done);
      return done;
    });
    result = made;
    byKey.set(key, result);
  }
  return result;
}

/**
 * The JSON text of shared results' `data`, made on first use and reused for every subscriber
 * that sends it (src/server/websocket.ts): one serialisation per event and document, not one
 * per socket. Weak in the result: gone with the fan-out of the commit.
 */
const texts = new WeakMap<object, string | undefined>();

/** The JSON text of `data` when it is a shared result's, else undefined. */
export function sharedText(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !texts.has(data)) return undefined;
  let text = texts.get(data);
  if (text === undefined) {
    text = JSON.stringify(data);
    texts.set(data, text);
  }
  return text;
}

/** Executes the document for one event, with a context of its own (fresh loaders). */
async function executeEvent(args: ExecutionArgs, payload: unknown): Promise<ExecutionResult> {
  const context = args.contextValue as GraphQLContext | undefined;
  const contextValue =
    context?.reads === undefined ? context : { ...context, loaders: createLoaders(context.reads) };
  return execute({ ...args, rootValue: payload, contextValue });
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';

/** Maps source events to (shared) results, wiring `return()` through to the source. */
function mapEvents(
  source: AsyncIterable<unknown>,
  map: (payload: unknown) => Promise<ExecutionResult>,
): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  return {
    async next(): Promise<IteratorResult<ExecutionResult>> {
      const step = await iterator.next();
      if (step.done === true) return { done: true, value: undefined };
      return { done: false, value: await map(step.value) };
    },
    async return(): Promise<IteratorResult<ExecutionResult>> {
      await iterator.return?.();
      return { done: true, value: undefined };
    },
    async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
      if (iterator.throw !== undefined) await iterator.throw(error);
      else await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * A graphql-ws operation that may be sent to directly (set by websocket.ts): its id, and the
 * socket's send with its bounds (send-buffer.ts).
 */
export interface DirectDelivery {
  id: string;
  send(text: string): void;
  /** False once the socket closes or is cut as a slow consumer. */
  open(): boolean;
}

interface DirectTarget {
  delivery: DirectDelivery;
  /** Set once the operation has ended (graphql-ws called return()). */
  stopped: boolean;
  /** The start of a `next` message of this operation, up to its data. */
  head: string;
  /** Whether the caller's key still holds for an item read at `notBefore` (auth/plugin.ts). */
  valid: ((notBefore?: number) => Promise<boolean>) | undefined;
  /** When the item about to be sent was read or arrived (as the auth guard asks). */
  itemsAt: () => number | undefined;
}

function directTargetOf(context: unknown): DirectTarget | undefined {
  const c = (context ?? {}) as {
    directDelivery?: DirectDelivery;
    auth?: unknown;
    keyStillValid?: (notBefore?: number) => Promise<boolean>;
    delivery?: { itemsAt: number | undefined };
    events?: { lastItemAt?: number };
  };
  const delivery = c.directDelivery;
  if (delivery === undefined) return undefined;
  // A caller whose key is checked per item is sent to directly only when that check can be made.
  if (c.auth !== undefined && c.keyStillValid === undefined) return undefined;
  return {
    delivery,
    stopped: false,
    head: `{"id":${JSON.stringify(delivery.id)},"type":"next","payload":{"data":`,
    valid: c.auth === undefined ? undefined : c.keyStillValid,
    itemsAt: () => c.delivery?.itemsAt ?? c.events?.lastItemAt,
  };
}

/**
 * Direct delivery: a WebSocket operation's results go to its socket from here, as one shared
 * text framed with the operation's id, instead of one by one through graphql-ws's loop and the
 * result hooks of every plugin (a dozen promise steps per message, which at thousands of
 * subscribers was most of what a commit cost). What those hooks are for still holds: the key is
 * checked for every item as the auth guard checks it, and a result they would change (one with
 * errors, which are masked and logged; one whose key no longer holds, which the guard reports;
 * one without a shared text) goes through graphql-ws as before, in order, since the next item is
 * not taken until graphql-ws asks for it.
 */
function sendDirect(
  source: AsyncIterable<unknown>,
  map: (payload: unknown) => Promise<ExecutionResult>,
  target: DirectTarget,
): AsyncIterableIterator<ExecutionResult> {
  const iterator = source[Symbol.asyncIterator]();
  const done = { done: true, value: undefined } as const;
  return {
    async next(): Promise<IteratorResult<ExecutionResult>> {
      for (;;) {
        if (target.stopped) return done;
        const step = await iterator.next();
        if (step.done === true) return done;
        const pending = map(step.value);
        const result = settled.get(pending) ?? (await pending);
        const text = result.errors === undefined ? sharedText(result.data) : undefined;
        if (text === undefined || !target.delivery.open()) return { done: false, value: result };
        if (target.valid !== undefined) {
          const valid = await target.valid(target.itemsAt()).catch(() => false);
          if (!valid) return { done: false, value: result };
        }
        if (target.stopped) return done;
        target.delivery.send(`${target.head}${text}}}`);
      }
    },
    async return(): Promise<IteratorResult<ExecutionResult>> {
      target.stopped = true;
      await iterator.return?.();
      return done;
    },
    async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
      target.stopped = true;
      if (iterator.throw !== undefined) await iterator.throw(error);
      else await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** The tickets of one (event, key) and, at the same positions, whose they are. */
interface Batch {
  tickets: DirectTicket[];
  targets: DirectTarget[];
}

/** Direct tickets by the shared execution they wait for (one batch per event and key). */
const batches = new WeakMap<Promise<ExecutionResult>, Batch>();
/** The batch of direct tickets of (event, key), made (and queued after the key's last) on first use. */
function batchOf(
  args: ExecutionArgs,
  key: string,
  payload: unknown,
  /** The last batch of each key (the plugin's): a key's batches are written in order. */
  lastBatch: Map<string, Promise<void>>,
): Batch {
  const pending = executeShared(args, key, payload);
  const known = batches.get(pending);
  if (known !== undefined) return known;
  const batch: Batch = { tickets: [], targets: [] };
  batches.set(pending, batch);
  const previous = lastBatch.get(key);
  const written: Promise<void> = (previous === undefined ? pending : previous.then(() => pending))
    .then((result) => writeBatch(batch, result))
    .catch(() => {
      // A failed execution (or send) is its readers' to report, one by one as before: what was
      // not sent goes back to them (a settled ticket ignores this). Never rejects: the key's
      // next batch waits on it.
      for (const ticket of batch.tickets) ticket.settle(false);
    })
    .finally(() => {
      if (lastBatch.get(key) === written) lastBatch.delete(key);
    });
  lastBatch.set(key, written);
  return batch;
}

/** Direct delivery's slice: writing a batch yields to other work at least this often. */
const BATCH_SLICE_MS = 2;

/**
 * Sends one shared result to every subscriber of a batch: one text, one key check (the
 * subscribers of a key share the identity it checks), one frame per socket operation. What
 * cannot go out this way goes back to its subscriber's own reader (settled untaken): a result
 * with errors or without a shared text, a revoked key, a subscriber that left direct mode.
 */
async function writeBatch({ tickets, targets }: Batch, result: ExecutionResult): Promise<void> {
  const text = result.errors === undefined ? sharedText(result.data) : undefined;
  const first = targets[0];
  if (text === undefined || first === undefined) {
    for (const ticket of tickets) ticket.settle(false);
    return;
  }
  if (first.valid !== undefined) {
    let latest = 0;
    for (const ticket of tickets) latest = Math.max(latest, ticket.arrivedAt);
    if (!(await first.valid(latest).catch(() => false))) {
      for (const ticket of tickets) ticket.settle(false);
      return;
    }
  }
  let sliceStart = performance.now();
  for (let i = 0; i < tickets.length; i++) {
    const ticket = tickets[i]!;
    const direct = targets[i]!;
    if (!ticket.deliverable()) {
      ticket.settle(false);
      continue;
    }
    if (!direct.stopped && direct.delivery.open()) {
      direct.delivery.send(`${direct.head}${text}}}`);
    }
    ticket.settle(true);
    if (performance.now() - sliceStart >= BATCH_SLICE_MS && i + 1 < tickets.length) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

/**
 * The envelop plugin (graphql-yoga, and through yoga's envelop graphql-ws). Other plugins'
 * `onSubscribeResult` hooks (error masking, metrics) still see every subscriber's results; they
 * must not mutate a result in place, since it is shared.
 */
export function useSharedSubscriptions(options: SharedSubscriptionOptions = {}): Plugin {
  const identify = options.identify ?? defaultIdentify;
  const lastBatch = new Map<string, Promise<void>>();
  return {
    onSubscribe({ subscribeFn, setSubscribeFn }) {
      setSubscribeFn(async (args: ExecutionArgs) => {
        const key = keyOf(args, identify);
        if (key === undefined) return subscribeFn(args);
        const source = await createSourceEventStream(args);
        // An error before the stream exists: answer it exactly as the default path does.
        if (!isAsyncIterable(source)) return subscribeFn(args);
        // Each event executes with loaders of its own (executeEvent): what the subscribe step
        // loaded would otherwise stay cached, and held, for as long as the subscription lives.
        const context = args.contextValue as GraphQLContext | undefined;
        if (context?.reads !== undefined) context.loaders = createLoaders(context.reads);
        const map = (payload: unknown) => executeShared(args, key, payload);
        const direct = directTargetOf(args.contextValue);
        if (direct === undefined) return mapEvents(source, map);
        // Values the group hands over while this subscriber waits go out in batches, one per
        // shared execution (see writeBatch).
        (source as MaybeDirect)[DIRECT]?.((ticket) => {
          const batch = batchOf(args, key, ticket.value, lastBatch);
          batch.tickets.push(ticket);
          batch.targets.push(direct);
        });
        return sendDirect(source, map, direct);
      });
    },
  };
}
