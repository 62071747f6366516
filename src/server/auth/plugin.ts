/**
 * The yoga/envelop plugin that authenticates every operation — HTTP, SSE and graphql-ws alike —
 * and scopes its context to the caller's tenant (engine, reads, loaders, event hub). Scopes are
 * then checked field by field by Pothos scope-auth (src/graphql/builder.ts). An open
 * subscription is checked again before each page of events — a page read from the store during
 * a replay, or what arrived live since the last check — and every revalidateMs while idle: once
 * its key is revoked it gets one UNAUTHENTICATED error and ends.
 *
 * Why a page and not an event: the events of a page were read (or committed) before the check
 * that covers them began, so no event committed after a revocation is delivered; what may still
 * get through after a revocation is the rest of a page read before it (at most hub.pageSize
 * events per subscription). A lookup per event would cost one key query per replayed event
 * whenever the hub is busy.
 */
import { performance } from 'node:perf_hooks';
import { type ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Authenticator } from '../../auth/authenticator.js';
import { scopeHub } from '../../auth/hub.js';
import type { Delivery, EventHub } from '../../events/types.js';
import { type AuthInfo, contextFor, type GraphQLContext } from '../../graphql/context.js';

type InitialContext = Partial<GraphQLContext> & {
  request?: { headers?: { get?(name: string): string | null } };
  req?: { headers?: Record<string, string | string[] | undefined> };
  connectionParams?: Readonly<Record<string, unknown>>;
  events?: EventHub;
};

/** The Authorization of an operation: HTTP header, graphql-ws connectionParams, or the upgrade request. */
export function authorizationOf(context: InitialContext): string | undefined {
  const fromHeader = context.request?.headers?.get?.('authorization');
  if (typeof fromHeader === 'string') return fromHeader;
  const params = context.connectionParams;
  if (params !== undefined) {
    for (const name of ['authorization', 'Authorization']) {
      const value = params[name];
      if (typeof value === 'string') return value;
    }
  }
  const upgrade = context.req?.headers?.authorization;
  return typeof upgrade === 'string' ? upgrade : undefined;
}

/** The refusal of a caller without a valid key: 401, before the document is even parsed. */
export function unauthenticatedError(auth: AuthInfo): GraphQLError {
  return new GraphQLError(`authentication required: ${auth.reason ?? 'no valid API key'}`, {
    extensions: {
      code: 'UNAUTHENTICATED',
      http: { status: 401, headers: { 'www-authenticate': 'Bearer realm="weft"' } },
    },
  });
}

export function useAuth(authenticator: Authenticator): Plugin {
  const watch = watcher(authenticator);
  // One key lookup per HTTP request: the gate in onParams and the context share it.
  const byRequest = new WeakMap<object, Promise<AuthInfo>>();
  const authenticate = (initial: InitialContext): Promise<AuthInfo> => {
    const request = initial.request as object | undefined;
    const known = request === undefined ? undefined : byRequest.get(request);
    if (known !== undefined) return known;
    const auth = authenticator.authenticate(authorizationOf(initial));
    if (request !== undefined) byRequest.set(request, auth);
    return auth;
  };
  return {
    // Without a valid key nothing is parsed, validated or executed — not `{ __typename }`, not
    // introspection — so neither the schema nor validation messages reach an unknown caller.
    // (graphql-ws refuses such a caller at connection_init.)
    async onParams({ request, setResult }) {
      const auth = await authenticate({ request } as InitialContext);
      if (!auth.authenticated) setResult({ errors: [unauthenticatedError(auth)] });
    },
    async onContextBuilding({ context, extendContext }) {
      const initial = context as InitialContext;
      const auth = await authenticate(initial);
      const scoped = contextFor(context as unknown as GraphQLContext, auth);
      const events = initial.events;
      extendContext({
        ...scoped,
        // For results sent without the guard below (shared-execution.ts, direct delivery).
        keyStillValid: (notBefore?: number) => authenticator.stillValid(auth, notBefore),
        ...(events === undefined
          ? {}
          : { events: scopeHub(events, scoped.engine.tenants, auth.tenant) }),
      } as never);
    },
    onSubscribe() {
      return {
        onSubscribeResult({ args, result, setResult }) {
          const context = args.contextValue as unknown as Partial<GraphQLContext> & {
            events?: EventHub;
            delivery?: Delivery;
          };
          const { auth, events, delivery } = context;
          if (auth === undefined || !isAsyncIterable(result)) return;
          setResult(
            guarded(
              result,
              (notBefore) => authenticator.stillValid(auth, notBefore),
              auth,
              watch,
              // The stream stamps each item with when its page was read (or it arrived live);
              // without a stamp, anything held arrived before the hub's latest delivery.
              () => delivery?.itemsAt ?? events?.lastItemAt,
            ),
          );
        },
      };
    },
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<ExecutionResult> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
  );
}

/**
 * Open subscriptions re-checked every `revalidateMs`, while any is open: one lookup per key
 * each time, however many subscriptions it holds (a sweep's checks share what began after it).
 */
type Watch = (check: (notBefore?: number) => Promise<boolean>, revoke: () => void) => () => void;

function watcher(authenticator: Authenticator): Watch {
  const watched = new Map<(notBefore?: number) => Promise<boolean>, () => void>();
  let timer: NodeJS.Timeout | undefined;
  const sweep = async () => {
    const at = performance.now();
    for (const [check, revoke] of [...watched]) {
      if (!(await check(at).catch(() => true))) revoke();
    }
  };
  return (check, revoke) => {
    if (authenticator.revalidateMs <= 0) return () => undefined;
    watched.set(check, revoke);
    timer ??= setInterval(() => void sweep(), authenticator.revalidateMs).unref();
    return () => {
      watched.delete(check);
      if (watched.size === 0 && timer !== undefined) {
        clearInterval(timer);
        timer = undefined;
      }
    };
  };
}

/**
 * The events of `source` while `valid()` holds; then one UNAUTHENTICATED error, and the end. An
 * idle subscription is checked by `watch` too, and ends the same way when its key is revoked.
 */
function guarded(
  source: AsyncIterable<ExecutionResult>,
  /** Whether the key still holds; a check begun at or after `notBefore` may answer it. */
  valid: (notBefore?: number) => Promise<boolean>,
  auth: AuthInfo,
  watch: Watch,
  /** When the item about to be delivered was read or arrived (Delivery.itemsAt). */
  itemsAt: () => number | undefined,
): AsyncIterableIterator<ExecutionResult> {
  const it = source[Symbol.asyncIterator]();
  let finished = false;
  let failed = false;
  let reported = false;
  const end = async (): Promise<IteratorResult<ExecutionResult>> => {
    finished = true;
    unwatch();
    await it.return?.();
    return { done: true, value: undefined };
  };
  // Revoked while idle: ending the source wakes a pending next(), which then reports it.
  const unwatch = watch(valid, () => {
    failed = true;
    void end();
  });
  const report = async (): Promise<IteratorResult<ExecutionResult>> => {
    reported = true;
    await end();
    const why = auth.keyId === null ? 'API keys exist now' : `API key ${auth.keyId} was revoked`;
    return {
      done: false,
      value: {
        errors: [
          new GraphQLError(`authentication required: ${why}; the subscription ended`, {
            extensions: { code: 'UNAUTHENTICATED' },
          }),
        ],
      },
    };
  };
  return {
    async next() {
      if (reported || (finished && !failed)) return { done: true, value: undefined };
      if (failed) return report();
      const step = await it.next();
      if (failed) return report();
      if (step.done === true) {
        finished = true;
        unwatch();
        return step;
      }
      if (!(await valid(itemsAt()).catch(() => false))) return report();
      return step;
    },
    return: end,
    async throw(error?: unknown) {
      finished = true;
      unwatch();
      if (it.throw !== undefined) return it.throw(error);
      await it.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
