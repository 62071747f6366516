/**
 * A Weft server on a real port for subscription tests: an engine publishing to an event hub, the
 * app serving it (hub in the context), a graphql-ws client and an SSE client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, createClient } from 'graphql-ws';
import { WebSocket } from 'ws';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createEventHub, type EventHub, type RedisFanoutOptions } from '../../src/events/index.js';
import { type App, type AppDeps, buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { migrate } from '../../src/store/migrate/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';

export interface LiveServer {
  app: App;
  engine: Engine;
  hub: EventHub;
  /** http://127.0.0.1:<port>/graphql */
  url: string;
  close(): Promise<void>;
}

let root: string | undefined;
let n = 0;

export async function freshSqliteUrl(): Promise<string> {
  root ??= mkdtempSync(join(tmpdir(), 'weft-subs-'));
  const url = `file:${join(root, `db-${++n}.db`)}`;
  await migrate(url);
  return url;
}

export function removeSqliteFiles(): void {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
  root = undefined;
}

export async function startServer(
  databaseUrl: string,
  options: {
    redis?: RedisFanoutOptions;
    /** Further buildApp options (e.g. maxSendBufferBytes). */
    app?: Pick<AppDeps, 'maxSendBufferBytes' | 'onSlowConsumer'>;
  } = {},
): Promise<LiveServer> {
  const store = openThreadStore(databaseUrl);
  const hub = createEventHub({
    store,
    ...(options.redis === undefined ? {} : { redis: options.redis }),
  });
  await hub.ready;
  const engine = createEngine({ store, publisher: hub });
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_REQUEST_LOG: 'off',
  });
  const app = buildApp({ config, engine, extendContext: () => ({ events: hub }), ...options.app });
  const url = await app.start();
  return {
    app,
    engine,
    hub,
    url,
    async close() {
      await app.stop();
      await hub.close();
      await engine.close();
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: tests read subscription data loosely
export type Payload = { data?: any; errors?: Array<{ message: string; extensions?: any }> };

export function wsClient(url: string): Client {
  return createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
  });
}

/**
 * A subscription over graphql-ws, as a pull-based iterator of results. `return()` completes it
 * (the server ends the operation); the client is not closed.
 */
export function wsSubscribe(
  client: Client,
  query: string,
  variables: Record<string, unknown> = {},
): AsyncIterableIterator<Payload> {
  return client.iterate({ query, variables }) as AsyncIterableIterator<Payload>;
}

/**
 * A subscription over SSE (graphql-yoga's "distinct connections" mode): POST with
 * `accept: text/event-stream`, parsed into `next` payloads. `return()` aborts the request.
 * `fetchImpl`: e.g. the app's `yoga.fetch`, to run in process without a socket.
 */
export function sseSubscribe(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  fetchImpl: (url: string, init: RequestInit) => Promise<Response> = fetch,
): AsyncIterableIterator<Payload> {
  const controller = new AbortController();
  async function* run(): AsyncGenerator<Payload> {
    const response = await fetchImpl(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query, variables }),
      signal: controller.signal,
    });
    if (!response.ok || response.body === null) {
      throw new Error(`SSE request failed: ${response.status} ${await response.text()}`);
    }
    yield* sseData(response.body, controller.signal) as AsyncGenerator<Payload>;
  }
  return abortable(run(), controller);
}

/** The parsed `data` of each event of an SSE body, until `complete`; quiet once `signal` aborted. */
export async function* sseData(body: unknown, signal: AbortSignal): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const lines = block.split('\n');
        const event = lines
          .find((l) => l.startsWith('event:'))
          ?.slice(6)
          .trim();
        const data = lines
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        if (event === 'complete') return;
        if (data !== '') yield JSON.parse(data);
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

/** `generator` as an iterator whose `return()` also aborts `controller` (its request). */
export function abortable<T>(
  generator: AsyncGenerator<T>,
  controller: AbortController,
): AsyncIterableIterator<T> {
  return {
    next: () => generator.next(),
    async return() {
      controller.abort();
      return generator.return(undefined);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** The next `count` payloads (data only; an error payload fails). */
export async function takeData(
  stream: AsyncIterableIterator<Payload>,
  count: number,
): Promise<NonNullable<Payload['data']>[]> {
  const out: unknown[] = [];
  while (out.length < count) {
    const step = await stream.next();
    if (step.done === true) throw new Error(`the subscription ended after ${out.length} events`);
    if (step.value.errors !== undefined) {
      throw new Error(`subscription error: ${JSON.stringify(step.value.errors)}`);
    }
    out.push(step.value.data);
  }
  return out;
}
