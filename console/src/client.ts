/**
 * The console's GraphQL client: urql with a normalised cache (graphcache, keyed from the schema's
 * introspection), HTTP for queries and mutations, graphql-ws for subscriptions. The API key (keyed
 * mode) lives in sessionStorage: entered once per tab, gone with it.
 */

import {
  Client,
  fetchExchange,
  stringifyDocument,
  subscriptionExchange,
  type TypedDocumentNode,
} from '@urql/core';
import type { KeyingConfig } from '@urql/exchange-graphcache';
import { cacheExchange } from '@urql/exchange-graphcache';
import { createClient as createWsClient } from 'graphql-ws';
import introspection from './generated/introspection.json';

const KEY_STORAGE = 'weft.console.apiKey';

export function storedKey(): string | undefined {
  return sessionStorage.getItem(KEY_STORAGE) ?? undefined;
}

export function storeKey(key: string | undefined): void {
  if (key === undefined) sessionStorage.removeItem(KEY_STORAGE);
  else sessionStorage.setItem(KEY_STORAGE, key);
}

export const GRAPHQL_PATH = '/graphql';

/** The state of the live connection (graphql-ws), for the header and for resuming feeds. */
export type LiveState = 'connecting' | 'connected' | 'reconnecting';

type Listener = () => void;

export interface Live {
  state(): LiveState;
  /** Bumped on every reconnection: feeds restart from their last cursor. */
  epoch(): number;
  listen(listener: Listener): () => void;
}

/** Keys of the entities: ids where they are unique, compound ones where a fork shares the id. */
function keying(): KeyingConfig {
  const keys: KeyingConfig = {};
  type IntrospectedType = { kind: string; name: string; fields?: Array<{ name: string }> };
  const types = (introspection as { __schema: { types: IntrospectedType[] } }).__schema.types;
  for (const type of types) {
    if (type.kind !== 'OBJECT' || type.name.startsWith('__')) continue;
    if (!type.fields?.some((f) => f.name === 'id')) keys[type.name] = () => null;
  }
  const scoped = (data: Record<string, unknown>) =>
    typeof data.threadId === 'string' && typeof data.id === 'string'
      ? `${data.threadId}/${data.id}`
      : null;
  keys.Run = scoped;
  keys.CausalNode = scoped;
  keys.ThreadEvent = () => null;
  keys.Approval = (data) =>
    typeof data.threadId === 'string' && typeof data.runId === 'string'
      ? `${data.threadId}/${data.runId}/${String(data.requestIndex)}`
      : null;
  return keys;
}

const bearer = (key: string | undefined) => (key === undefined ? undefined : `Bearer ${key}`);

/** A GraphQL request outside the urql client, with the same Authorization header as it. */
const post = (body: unknown, authorization: string | undefined, accept: string) =>
  fetch(GRAPHQL_PATH, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept,
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: JSON.stringify(body),
  });

/** The Authorization header of the console's client, for the queries that bypass its cache. */
let uncachedAuthorization: string | undefined;

/**
 * A query sent past the normalised cache, for answers that must not be written into it: an
 * error under `thread(id)` (a time-travel state too large to answer) would be cached as the
 * thread being null, and every view of that thread would then say it does not exist.
 */
export async function queryUncached<Data, Variables extends Record<string, unknown>>(
  document: TypedDocumentNode<Data, Variables>,
  variables: Variables,
): Promise<{ data?: Data; error?: string }> {
  const response = await post(
    { query: stringifyDocument(document), variables },
    uncachedAuthorization,
    'application/graphql-response+json, application/json',
  );
  const body = (await response.json()) as { data?: Data; errors?: Array<{ message: string }> };
  const error = body.errors?.map((e) => e.message).join('; ');
  return error === undefined ? { data: body.data as Data } : { error };
}

export function createConsoleClient(key: string | undefined): { client: Client; live: Live } {
  const authorization = bearer(key);
  uncachedAuthorization = authorization;
  let state: LiveState = 'connecting';
  let epoch = 0;
  let everConnected = false;
  const listeners = new Set<Listener>();
  const set = (next: LiveState) => {
    state = next;
    for (const l of listeners) l();
  };
  const wsUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${GRAPHQL_PATH}`;
  const ws = createWsClient({
    url: wsUrl,
    lazy: false,
    keepAlive: 10_000,
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
    retryWait: async (retries) => {
      await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** retries, 3000)));
    },
    connectionParams: authorization === undefined ? {} : { authorization },
    on: {
      connecting: () => set(everConnected ? 'reconnecting' : 'connecting'),
      connected: () => {
        if (everConnected) epoch++;
        everConnected = true;
        set('connected');
      },
      closed: () => {
        if (everConnected) set('reconnecting');
      },
    },
  });
  const client = new Client({
    url: GRAPHQL_PATH,
    requestPolicy: 'cache-and-network',
    preferGetMethod: false,
    fetchOptions: (): RequestInit =>
      authorization === undefined ? {} : { headers: { authorization } },
    exchanges: [
      cacheExchange({ schema: introspection as never, keys: keying() }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query ?? '' };
          return {
            subscribe(sink) {
              const unsubscribe = ws.subscribe(input, sink as never);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  const live: Live = {
    state: () => state,
    epoch: () => epoch,
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return { client, live };
}

/** Whether the server wants a key: `{ __typename }` with the key (if any) answers 401 without one. */
export async function checkAccess(key: string | undefined): Promise<'ok' | 'key-needed'> {
  const response = await post({ query: '{ __typename }' }, bearer(key), 'application/json');
  return response.status === 401 ? 'key-needed' : 'ok';
}
