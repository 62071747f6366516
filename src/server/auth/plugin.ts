/**
 * The yoga/envelop plugin that authenticates every operation — HTTP, SSE and graphql-ws alike —
 * and scopes its context to the caller's tenant (engine, reads, loaders, event hub). Scopes are
 * then checked field by field by Pothos scope-auth (src/graphql/builder.ts). An open
 * subscription is checked again before each event: once its key is revoked it gets one
 * UNAUTHENTICATED error and ends.
 */
import { type ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { type AuthInfo, contextFor, type GraphQLContext } from '../../graphql/context.js';
import type { EventHub } from '../events/types.js';
import type { Authenticator } from './authenticator.js';
import { scopeHub } from './hub.js';

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

export function useAuth(authenticator: Authenticator): Plugin {
  return {
    async onContextBuilding({ context, extendContext }) {
      const initial = context as InitialContext;
      const auth = await authenticator.authenticate(authorizationOf(initial));
      const scoped = contextFor(context as unknown as GraphQLContext, auth);
      const events = initial.events;
      extendContext({
        ...scoped,
        ...(events === undefined
          ? {}
          : { events: scopeHub(events, scoped.engine.store, auth.tenant) }),
      } as never);
    },
    onSubscribe() {
      return {
        onSubscribeResult({ args, result, setResult }) {
          const auth = (args.contextValue as unknown as Partial<GraphQLContext>).auth;
          if (auth === undefined || !isAsyncIterable(result)) return;
          setResult(guarded(result, () => authenticator.stillValid(auth), auth));
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

/** The events of `source` while `valid()` holds; then one UNAUTHENTICATED error, and the end. */
function guarded(
  source: AsyncIterable<ExecutionResult>,
  valid: () => Promise<boolean>,
  auth: AuthInfo,
): AsyncIterableIterator<ExecutionResult> {
  const it = source[Symbol.asyncIterator]();
  let finished = false;
  const end = async (): Promise<IteratorResult<ExecutionResult>> => {
    finished = true;
    await it.return?.();
    return { done: true, value: undefined };
  };
  return {
    async next() {
      if (finished) return { done: true, value: undefined };
      const step = await it.next();
      if (step.done === true) {
        finished = true;
        return step;
      }
      if (await valid().catch(() => false)) return step;
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
    },
    return: end,
    async throw(error?: unknown) {
      finished = true;
      if (it.throw !== undefined) return it.throw(error);
      await it.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
