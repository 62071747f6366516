/**
 * GraphQL over WebSocket (graphql-ws) on the HTTP server: the upgrade checks (origin, host, the
 * process's socket cap), and per connection the key at `connection_init`, the per-key socket cap,
 * the per-socket operation cap and the bounds of each message. Operations run through the same
 * yoga instance (plugins, auth, limits) as HTTP. Each socket's unsent bytes are bounded and pace
 * its replays (send-buffer.ts): one that does not read is closed with SLOW_CONSUMER_CLOSE.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ExecutionArgs, GraphQLError } from 'graphql';
import type { ConnectionInitMessage, ServerOptions } from 'graphql-ws';
import { type Extra, useServer } from 'graphql-ws/use/ws';
import type { YogaServerInstance } from 'graphql-yoga';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Authenticator } from '../auth/index.js';
import type { Delivery, Transport } from '../events/types.js';
import type { GraphQLContext } from '../graphql/context.js';
import { authorizationOf } from './auth/plugin.js';
import type { WebSocketLimits } from './config.js';
import { type ForeignCheck, foreignRequest, refusalBody } from './limits.js';
import type { Metrics } from './metrics.js';
import { createSendBuffers, type SendBuffers } from './send-buffer.js';
import { type DirectDelivery, sharedText } from './shared-execution.js';
import { MAX_BODY_NESTING, nestsDeeperThan } from './value-depth.js';

export interface WebSocketDeps {
  server: Server;
  /** The GraphQL endpoint's path, where sockets upgrade. */
  path: string;
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  auth: Authenticator;
  limits: WebSocketLimits;
  /** The most one message may hold (as one HTTP body). */
  maxBodyBytes: number;
  metrics: Metrics | undefined;
  /** The origin and host rules of the moment (open mode may end while serving). */
  foreign: () => ForeignCheck;
  /** True once the server drains or stops: new sockets get 503. */
  stopping: () => boolean;
  /** The bound of each socket's unsent bytes. Default: createSendBuffers() (8 MiB). */
  sendBuffers?: SendBuffers;
}

export interface WebSockets {
  wss: WebSocketServer;
  /** Closes every graphql-ws connection with 1001 (going away). */
  dispose(): Promise<void>;
}

export function attachWebSockets(deps: WebSocketDeps): WebSockets {
  const { server, path, limits, metrics } = deps;
  const wss: WebSocketServer = new WebSocketServer({
    server,
    path,
    // One message may be no larger than one HTTP body (ws would take 100 MiB by default): a
    // larger one closes the socket with 1009 before it is buffered whole.
    maxPayload: deps.maxBodyBytes,
    // One message of a socket per turn of the event loop: a client that sends thousands of
    // subscribe messages in one write has them handled between other clients' requests, not
    // all before them.
    allowSynchronousEvents: false,
    verifyClient: verifyUpgrade(deps, () => wss.clients.size),
  });
  type Run = (
    a: ExecutionArgs,
  ) => ReturnType<NonNullable<Parameters<typeof useServer>[0]['execute']>>;
  type RootOps = { execute: Run; subscribe: Run };
  const sendBuffers = deps.sendBuffers ?? createSendBuffers();
  const sharedTexts = createSharedTexts();
  /** Each socket's transport (what its replays are paced by) and its graphql-ws operations. */
  const transports = new WeakMap<WebSocket, Transport>();
  const operationsOf = new WeakMap<WebSocket, Record<string, unknown>>();
  wss.on('connection', (socket) => {
    coalesceWrites(socket);
    sharedTexts.watch(socket);
    const endOperations = () => {
      // A slow consumer's operations end now, not when its close handshake does (up to 30 s).
      for (const operation of Object.values(operationsOf.get(socket) ?? {})) {
        void (operation as AsyncIterator<unknown> | null)?.return?.();
      }
    };
    transports.set(socket, sendBuffers.watchSocket(socket, endOperations));
    socket.once('close', (code) => {
      if (code === INIT_TIMEOUT_CLOSE) metrics?.websocketRefusals.inc({ reason: 'init_timeout' });
    });
  });
  const ws = useServer(
    {
      execute: (args) => (args.rootValue as RootOps).execute(args),
      subscribe: (args) => (args.rootValue as RootOps).subscribe(args),
      connectionInitWaitTimeout: limits.initTimeoutMs,
      jsonMessageReplacer: sharedTexts.replacer,
      ...createAdmission(deps, operationsOf),
      onSubscribe: subscribeThrough(deps, transports),
    },
    wss,
  );

  return { wss, dispose: () => Promise.resolve(ws.dispose()) };
}

/**
 * The upgrade check: 503 while stopping or at the process's socket cap (`clients()` open now),
 * 403 for a foreign origin or host.
 */
function verifyUpgrade(deps: WebSocketDeps, clients: () => number) {
  const { limits, metrics, foreign } = deps;
  return (
    { req }: { req: IncomingMessage },
    answer: (ok: boolean, status?: number, body?: string, headers?: Record<string, string>) => void,
  ) => {
    if (deps.stopping()) return answer(false, 503);
    const json = { 'Content-Type': 'application/json; charset=utf-8' };
    const refused = foreignRequest(req.headers, foreign());
    if (refused !== undefined) {
      metrics?.errors.inc({ code: refused.code });
      return answer(false, 403, refusalBody(refused.code, refused.message), json);
    }
    if (clients() >= limits.maxConnections) {
      metrics?.websocketRefusals.inc({ reason: 'connections' });
      return answer(
        false,
        503,
        refusalBody(
          'TOO_MANY_CONNECTIONS',
          `this server holds ${limits.maxConnections} WebSockets, its limit (WEFT_WS_MAX_CONNECTIONS); retry later`,
        ),
        { ...json, 'Retry-After': '5' },
      );
    }
    answer(true);
  };
}

/** The graphql-ws server options over `ws` sockets. */
type WsOptions = ServerOptions<ConnectionInitMessage['payload'], Extra>;

/**
 * Who may hold a graphql-ws connection: checked at connection_init (its size, the key, the
 * per-key cap), the per-key count given back when it closes. `operationsOf` learns each
 * socket's operations.
 */
function createAdmission(
  deps: WebSocketDeps,
  operationsOf: WeakMap<WebSocket, Record<string, unknown>>,
): Pick<WsOptions, 'onConnect' | 'onClose'> {
  const { auth, limits, metrics } = deps;
  /** Open graphql-ws connections per API key (keyed mode only). */
  const perKey = new Map<string, number>();
  const bucketOf = new WeakMap<object, string>();
  // A caller without a valid key is closed with 4403 at connection_init instead of being
  // acknowledged and held: every operation of it would be refused anyway.
  const onConnect: WsOptions['onConnect'] = async (ctx) => {
    operationsOf.set(ctx.extra.socket, ctx.subscriptions);
    // connection_init carries a key and a few settings; what a socket holds for its whole
    // life should not be a megabyte of parameters.
    const params = ctx.connectionParams;
    if (params !== undefined && JSON.stringify(params).length > MAX_CONNECTION_PARAMS_CHARS) {
      metrics?.websocketRefusals.inc({ reason: 'init_too_large' });
      ctx.extra.socket.close(
        BAD_INIT_CLOSE,
        `connection_init payload over ${MAX_CONNECTION_PARAMS_CHARS} characters`,
      );
      return false;
    }
    const caller = await auth.authenticate(
      authorizationOf({
        ...(ctx.connectionParams === undefined ? {} : { connectionParams: ctx.connectionParams }),
        req: ctx.extra.request,
      }),
    );
    if (!caller.authenticated) {
      metrics?.websocketRefusals.inc({ reason: 'unauthenticated' });
      // A close reason is at most 123 bytes: the code, and the start of why.
      const why = `UNAUTHENTICATED: ${caller.reason ?? 'no valid API key'}`;
      ctx.extra.socket.close(FORBIDDEN_CLOSE, Buffer.from(why).subarray(0, 120).toString());
      return false;
    }
    // Open mode has no keys to tell callers apart: every local client (dashboards, tabs,
    // agents) shares one identity, so only the per-process cap applies there.
    const bucket = caller.keyId;
    if (bucket === undefined || bucket === null) return true;
    const held = perKey.get(bucket) ?? 0;
    if (held >= limits.maxConnectionsPerKey) {
      metrics?.websocketRefusals.inc({ reason: 'connections_per_key' });
      ctx.extra.socket.close(
        PER_KEY_CLOSE,
        'Too many connections for this key (WEFT_WS_MAX_CONNECTIONS_PER_KEY)',
      );
      return false;
    }
    perKey.set(bucket, held + 1);
    bucketOf.set(ctx, bucket);
    return true;
  };
  const onClose: WsOptions['onClose'] = (ctx) => {
    const bucket = bucketOf.get(ctx);
    if (bucket === undefined) return;
    bucketOf.delete(ctx);
    const held = (perKey.get(bucket) ?? 1) - 1;
    if (held <= 0) perKey.delete(bucket);
    else perKey.set(bucket, held);
  };
  return { onConnect, onClose };
}

/**
 * An operation of a connection: refused over the per-socket cap or with variables nested too
 * deep, else parsed, validated and executed through yoga's envelop with the socket's transport.
 */
function subscribeThrough(
  deps: WebSocketDeps,
  transports: WeakMap<WebSocket, Transport>,
): WsOptions['onSubscribe'] {
  const { yoga, limits, metrics } = deps;
  return async (ctx, id, params) => {
    // This operation is already registered under its id; the others are running.
    const running = Object.keys(ctx.subscriptions).filter((other) => other !== id).length;
    if (running >= limits.maxSubscriptions) {
      metrics?.websocketRefusals.inc({ reason: 'subscriptions' });
      return [
        new GraphQLError(
          `this connection already runs ${running} operations, its limit (WEFT_WS_MAX_SUBSCRIPTIONS); complete one or open another connection`,
          { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } },
        ),
      ];
    }
    // The bound HTTP bodies get before parsing (useBodyNestingLimit); graphql-ws has parsed
    // the message already, but a value this deep goes no further.
    if (nestsDeeperThan(params.variables ?? null, MAX_BODY_NESTING)) {
      return [
        new GraphQLError(
          `the variables nest objects and arrays more than ${MAX_BODY_NESTING} levels deep`,
          { extensions: { code: 'BAD_USER_INPUT' } },
        ),
      ];
    }
    const transport = transports.get(ctx.extra.socket);
    const delivery: Delivery = { itemsAt: undefined, ...(transport ? { transport } : {}) };
    const socket = ctx.extra.socket;
    const directDelivery: DirectDelivery = {
      id,
      send: (text) => socket.send(text),
      open: () => socket.readyState === socket.OPEN,
    };
    const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
      ...ctx,
      req: ctx.extra.request,
      socket,
      params,
      delivery,
      directDelivery,
    });
    // A document refused while parsing (syntax, WEFT_MAX_TOKENS) is answered with an error
    // message, like a validation failure, instead of closing the socket.
    let document: ReturnType<typeof parse>;
    try {
      document = parse(params.query);
    } catch (error) {
      if (error instanceof GraphQLError) return [error];
      throw error;
    }
    const args = {
      schema,
      operationName: params.operationName,
      document,
      variableValues: params.variables,
      contextValue: await contextFactory(),
      rootValue: { execute, subscribe },
    };
    const errors = validate(args.schema, args.document);
    if (errors.length > 0) return errors;
    return args;
  };
}

/**
 * One serialisation per shared result (see sharedText in shared-execution.ts): graphql-ws
 * serialises each message itself, so the result's `data` is written as a marker, and the socket's
 * `send`, called right after in the same turn, puts the shared text in its place. The marker
 * holds a random token, so no client-chosen id can look like it, and it is looked for last in
 * the message, where `payload` is.
 */
const MARKER = `weft-shared-data-${randomUUID()}`;
const MARKED = `"data":"${MARKER}"`;
function createSharedTexts() {
  /** The text the message being serialised holds in place of its marker. */
  let pendingText: string | undefined;
  function replacer(this: unknown, key: string, value: unknown): unknown {
    if (key !== 'data') return value;
    const text = sharedText(value);
    if (text === undefined) return value;
    pendingText = text;
    return MARKER;
  }
  function watch(socket: WebSocket): void {
    const send = socket.send.bind(socket) as (data: unknown, ...rest: unknown[]) => void;
    socket.send = ((data: unknown, ...rest: unknown[]) => {
      const text = pendingText;
      pendingText = undefined;
      if (text !== undefined && typeof data === 'string') {
        const at = data.lastIndexOf(MARKED);
        if (at >= 0) {
          data = `${data.slice(0, at)}"data":${text}${data.slice(at + MARKED.length)}`;
        }
      }
      send(data, ...rest);
    }) as WebSocket['send'];
  }
  return { replacer, watch };
}

/** graphql-ws's close code for a socket that sent no connection_init in time. */
const INIT_TIMEOUT_CLOSE = 4408;
/** graphql-ws's close code for a connection_init it does not accept. */
const FORBIDDEN_CLOSE = 4403;
/** graphql-ws's close code for a malformed or unacceptable message. */
const BAD_INIT_CLOSE = 4400;
/** connection_init parameters (a key and a few settings) larger than this are refused. */
const MAX_CONNECTION_PARAMS_CHARS = 16_384;
/** A key holding WEFT_WS_MAX_CONNECTIONS_PER_KEY sockets opens no more (like HTTP 429). */
const PER_KEY_CLOSE = 4429;

/** An origin configured to call cross-origin (WEFT_CORS_ORIGINS; `*`: any). */

/**
 * Frames a socket sends within one turn of the event loop leave in one write of one buffer: the
 * events of a commit to a hundred subscriptions of one connection cost one system call, not a
 * hundred. One buffer, not a corked run of chunks: while a write is in flight (a client that does
 * not read fills the kernel's buffer) Node keeps every later chunk as its own request, and when
 * such a socket is destroyed it makes an Error for each of them, which for thousands of frames
 * held the event loop for over 100 ms. Frames of the turn are not yet in ws's `bufferedAmount`;
 * a turn's worth is far under the send-buffer bound.
 */
export function coalesceWrites(socket: WebSocket): void {
  const raw = (socket as unknown as { _socket?: Duplex })._socket;
  if (raw === undefined) return;
  type Callback = (error?: Error | null) => void;
  const write = raw.write as (chunk: unknown, encoding?: unknown, callback?: unknown) => boolean;
  const end = raw.end.bind(raw) as (...args: unknown[]) => Duplex;
  // The turn's frames; a flush is scheduled whenever there are any.
  let chunks: Buffer[] = [];
  let callbacks: Callback[] = [];
  const flush = () => {
    if (chunks.length === 0) return;
    const out = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const waiting = callbacks;
    chunks = [];
    callbacks = [];
    if (raw.destroyed) {
      const gone = new Error('the socket was closed before this frame was written');
      for (const callback of waiting) callback(gone);
      return;
    }
    write.call(
      raw,
      out,
      waiting.length === 0
        ? undefined
        : (error: Error | null | undefined) => {
            for (const callback of waiting) callback(error);
          },
    );
  };
  raw.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
    if (raw.destroyed || raw.writableEnded) return write.call(raw, chunk, encoding, callback);
    const done = (typeof encoding === 'function' ? encoding : callback) as Callback | undefined;
    if (chunks.length === 0) setImmediate(flush);
    chunks.push(
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : (chunk as Buffer),
    );
    if (done !== undefined) callbacks.push(done);
    return !raw.writableNeedDrain;
  }) as Duplex['write'];
  // What this turn holds goes out before the end of the stream (ws ends it after a close frame).
  raw.end = ((...args: unknown[]) => {
    flush();
    return end(...args);
  }) as Duplex['end'];
}
