/**
 * The HTTP and WebSocket server: yoga on `/graphql` (POST/GET, SSE, offline GraphiQL), graphql-ws
 * on the same port and path through yoga's envelop (so WebSocket operations get the same
 * plugins as HTTP), `/healthz`, `/readyz` and `/metrics`. `buildApp(deps)` wires; `start()`
 * listens; `drain()` stops accepting and waits for in-flight operations; `stop()` closes sockets
 * and connections gracefully.
 *
 * Every HTTP request passes the body-size guard (limits.ts) before yoga, gets a request id
 * (echoed as `x-request-id`), is counted in the metrics and logged as one JSON line.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createYoga, maskError, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { WebSocketServer } from 'ws';
import type { Engine, RetentionSweeperStats } from '../engine/index.js';
import type { GroupStats } from '../events/index.js';
import { createContext, type GraphQLContext, tenantReads } from '../graphql/context.js';
import { typedErrorOfThrown } from '../graphql/error-classes.js';
import { schema as defaultSchema } from '../graphql/schema.js';
import { createReads, type Reads } from '../reads/index.js';
import type { ReadQueries } from '../store/read-model/queries.js';
import { type Authenticator, openAuthenticator, useAuth } from './auth/index.js';
import { isLoopbackHost as loopbackAddress, type ServerConfig } from './config.js';
import { consoleRoutes } from './console.js';
import { createDrainTracking } from './drain-tracking.js';
import { createFairExecution } from './fair-execution.js';
import {
  armorPlugins,
  type ForeignCheck,
  foreignRequest,
  refusalBody,
  refuseOversizedBody,
  useBatchLimit,
  useCsrfPrevention,
  useFragmentCycleCode,
  YOGA_BATCH_CEILING,
} from './limits.js';
import {
  beginRequest,
  REQUEST_ID_HEADER,
  type RequestLogLine,
  requestLogLine,
  useErrorLog,
  useRequestInfo,
} from './logging.js';
import {
  createMetrics,
  instrumentEngine,
  type Metrics,
  routeOf,
  useMetricsEndpoint,
  useOperationMetrics,
} from './metrics.js';
import { type OtlpRouteDeps, otlpRoute, otlpRouteDeps } from './otlp.js';
import {
  graphiqlPage,
  useBodyLimit,
  useHealth,
  useNoIntrospection,
  useNoSuggestions,
} from './plugins.js';
import { createRefusalThrottle, isRefusal } from './refusal-throttle.js';
import { createSendBuffers, type SlowTransport } from './send-buffer.js';
import { useSharedSubscriptions } from './shared-execution.js';
import type { Tracing } from './tracing.js';
import { useBodyNestingLimit, useDocumentNestingLimit } from './value-depth.js';
import { attachWebSockets } from './websocket.js';

export const GRAPHQL_PATH = '/graphql';

export interface AppDeps {
  config: ServerConfig;
  engine: Engine;
  /** Default: a read API on the engine and `queries`. */
  reads?: Reads;
  /**
   * The read queries of the default read API, on the database client of whoever opened it (the
   * composition root, root.ts). Default: a client of its own on `config.databaseUrl`.
   */
  queries?: ReadQueries;
  /** Who may call (API keys, tenants). Default: open — every caller is tenant `default` with every scope. */
  auth?: Authenticator;
  /** Extra yoga/envelop plugins (pub/sub, metrics …), after the built-in ones. */
  plugins?: Plugin[];
  /** Extra context fields for every operation (HTTP and WebSocket). */
  extendContext?: () => Record<string, unknown>;
  /** Default: the schema of src/graphql. */
  schema?: typeof defaultSchema;
  log?: (line: string) => void;
  /** Live subscription counts for /metrics (the event hub's `stats`). */
  subscriptionStats?: () => { listeners: number; threads: number };
  /** Subscription group counts for /metrics (the event hub's `groups.stats`). */
  groupStats?: () => GroupStats;
  /** The retention sweeper's running totals for /metrics (RetentionSweeper.stats). */
  retentionStats?: () => RetentionSweeperStats | undefined;
  /** Where request log lines go (when config.requestLog). Default: one JSON line on stdout. */
  logRequest?: (line: RequestLogLine) => void;
  /** Unsent bytes a WebSocket or SSE response may hold before closed as slow (8 MiB). */
  maxSendBufferBytes?: number;
  /** Told of each connection closed as a slow consumer (e.g. to count it in /metrics). */
  onSlowConsumer?: (transport: SlowTransport) => void;
  /** Weft's own traces (tracing.ts): a span per request. Default: none. */
  tracing?: Tracing | undefined;
}

export interface App {
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  reads: Reads;
  /** Listens on config.host:config.port (0: any free port); resolves with the GraphQL URL. */
  start(): Promise<string>;
  /**
   * Stops accepting connections (and /readyz answers 503), then waits up to `graceMs` until no
   * query or mutation is executing and every HTTP request but streams (SSE) is answered.
   * Resolves with whether everything drained in time.
   */
  drain(graceMs?: number): Promise<boolean>;
  /** Stops accepting, closes WebSockets (1001) and idle connections, waits for the rest (≤ graceMs). */
  stop(graceMs?: number): Promise<void>;
  /** The Prometheus registry and series (undefined when config.metrics is off). */
  readonly metrics: Metrics | undefined;
  /** The GraphQL URL once started. */
  readonly url: string | undefined;
  /** Connections closed as slow consumers so far, per transport. */
  readonly slowConsumers: Readonly<Record<SlowTransport, number>>;
  readonly server: Server;
}

/** The yoga server and its plugins, in the order they must run. */
function createWeftYoga(parts: {
  deps: AppDeps;
  engine: Engine;
  reads: Reads;
  auth: Authenticator;
  metrics: Metrics | undefined;
  stopping: () => boolean;
  drainTracking: Plugin;
  fair: Plugin;
  sendBuffers: Plugin;
}): YogaServerInstance<Record<string, unknown>, GraphQLContext> {
  const { deps, engine, reads, auth, metrics, stopping, drainTracking } = parts;
  const { config } = deps;
  const readsFor = tenantReads(engine, reads);
  return createYoga<Record<string, unknown>, GraphQLContext>({
    schema: deps.schema ?? defaultSchema,
    graphqlEndpoint: GRAPHQL_PATH,
    // Over the port, GraphiQL is answered ahead of yoga, compressed and cached (graphiqlPage);
    // yoga's own rendering remains for in-process requests (yoga.fetch).
    graphiql: config.graphiql ? GRAPHIQL_OPTIONS : false,
    renderGraphiQL: renderGraphiQLLazily,
    landingPage: false,
    // Requests from a foreign origin are refused before yoga (see `handle`); the configured ones
    // get CORS headers with credentials, same-origin ones need none.
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (origin === null || !allowedCrossOrigin(origin, config.allowedOrigins)) return false;
      return { origin: [origin], credentials: true };
    },
    maskedErrors: {
      isDev: false,
      // A store failure thrown where no union carries it (QUERY_TIMEOUT) keeps its code.
      maskError: (error, message, isDev) =>
        typedErrorOfThrown(error) ?? maskError(error, message, isDev),
    },
    logging: false,
    // useBatchLimit applies WEFT_MAX_BATCH (and refuses arrays when it is 0) with its own codes.
    batching: { limit: YOGA_BATCH_CEILING },
    context: () => ({ ...createContext({ engine, reads, readsFor }), ...deps.extendContext?.() }),
    // Order: refusals that need no parsing first, then observation, then query limits; extra
    // plugins (auth, pub/sub …) last.
    plugins: [
      useBodyLimit(config.maxBodyBytes),
      // Before parsing: graphql-js parses values recursively, so a deep enough literal would
      // overflow its stack and come back as a 500.
      useDocumentNestingLimit(),
      useBodyNestingLimit(),
      useCsrfPrevention(),
      useHealth(async () => {
        if (stopping()) throw new Error('shutting down');
        // Any id will do (an unknown thread has length 0); no NUL: Postgres text refuses it.
        await engine.store.getLogLength('weft-readiness-probe');
      }),
      ...(metrics === undefined
        ? []
        : [
            useMetricsEndpoint(metrics, {
              token: config.metricsToken,
              authenticate: (authorization) => auth.authenticate(authorization),
            }),
            useOperationMetrics(metrics),
          ]),
      useRequestInfo(),
      // After the request id is known and before yoga masks errors: one log line per unexpected
      // error, with its cause, while the client sees only INTERNAL_SERVER_ERROR.
      useErrorLog(),
      drainTracking,
      useBatchLimit(config.limits.maxBatch),
      useFragmentCycleCode(),
      ...armorPlugins(config.limits, { blockFieldSuggestions: !config.introspection }),
      ...(config.introspection ? [] : [useNoIntrospection(), useNoSuggestions()]),
      useAuth(auth),
      // Large pages take turns per caller, so one caller's pile of them cannot hold up others.
      parts.fair,
      useSharedSubscriptions(),
      // After auth: it holds the results the response has not taken, as they will be written.
      parts.sendBuffers,
      ...(deps.plugins ?? []),
    ],
  });
}

/**
 * The HTTP handler: refusals of foreign and oversized requests, GraphiQL and the console, then
 * yoga; every request is tracked in `answering`, counted and logged once it closes.
 */
function createRequestHandler(parts: {
  deps: AppDeps;
  metrics: Metrics | undefined;
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  throttle: ReturnType<typeof createRefusalThrottle>;
  answering: Set<ServerResponse>;
  foreign: () => ForeignCheck;
  stopping: () => boolean;
  settle: () => void;
  server: () => Server;
  otlp: OtlpRouteDeps;
}): (req: IncomingMessage, res: ServerResponse) => void {
  const { deps, metrics, yoga, throttle, answering, foreign, stopping, settle, server } = parts;
  const { config } = deps;
  const serveConsole = consoleRoutes();
  const serveOtlp = otlpRoute(parts.otlp, deps.log);
  const serveGraphiQL = config.graphiql
    ? graphiqlPage(() => renderGraphiQLLazily(GRAPHIQL_OPTIONS))
    : undefined;

  const logRequest =
    deps.logRequest ??
    ((line: RequestLogLine) => process.stdout.write(`${JSON.stringify(line)}\n`));
  /** Holds `res`'s answer when it is a refusal and its address has used up its burst. */
  const throttleRefusals = (req: IncomingMessage, res: ServerResponse) => {
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    const address = req.socket.remoteAddress ?? '';
    res.end = ((...args: unknown[]) => {
      if (!isRefusal(res.statusCode)) return end(...args);
      const before = throttle.delayed;
      throttle.answer(address, () => end(...args));
      if (throttle.delayed !== before) metrics?.delayedRefusals.inc();
      return res;
    }) as typeof res.end;
  };
  return (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    if (throttle.enabled) throttleRefusals(req, res);
    const info = beginRequest(req);
    res.setHeader(REQUEST_ID_HEADER, info.id);
    if (stopping()) res.setHeader('connection', 'close');
    const path = (req.url ?? '/').split('?')[0]!;
    deps.tracing?.request(req, res, path);
    answering.add(res);
    metrics?.inflight.inc();
    res.once('close', () => {
      answering.delete(res);
      metrics?.inflight.dec();
      const durationMs = performance.now() - started;
      const route = routeOf(path);
      metrics?.requests.inc({ route, method: req.method ?? '', status: String(res.statusCode) });
      metrics?.requestDuration.observe({ route }, durationMs / 1000);
      if (config.requestLog) {
        logRequest(
          requestLogLine(info, {
            method: req.method ?? '',
            path,
            status: res.statusCode,
            durationMs,
            aborted: !res.writableFinished,
          }),
        );
      }
      if (stopping()) server().closeIdleConnections();
      settle();
    });
    const refused = foreignRequest(req.headers, foreign());
    if (refused !== undefined) {
      info.errorCodes.push(refused.code);
      metrics?.errors.inc({ code: refused.code });
      res.writeHead(403, { 'content-type': 'application/json; charset=utf-8' });
      res.end(refusalBody(refused.code, refused.message));
      return;
    }
    if (serveGraphiQL?.(req, res) || serveConsole(req, res)) return;
    // Before the Content-Length guard: OTLP exporters stream gzip bodies chunked.
    if (serveOtlp(req, res, path)) return;
    if (refuseOversizedBody(req, res, config.maxBodyBytes)) {
      info.errorCodes.push(res.statusCode === 413 ? 'PAYLOAD_TOO_LARGE' : 'LENGTH_REQUIRED');
      metrics?.errors.inc({ code: info.errorCodes[0]! });
      return;
    }
    void yoga(req, res);
  };
}

// getHeader sees the headers yoga passes to writeHead because `handle` called setHeader first
// (Node merges them then; without a prior setHeader they would bypass getHeader).
const isStream = (res: ServerResponse) =>
  String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');

/** What a request from elsewhere is checked against (the port is known once listening). */
function foreignCheck(config: ServerConfig, auth: Authenticator, server: Server): ForeignCheck {
  return {
    allowedOrigins: config.allowedOrigins,
    // Without keys, a loopback server answers only its loopback names: a DNS-rebinding page
    // would otherwise be same-origin with it. With keys (or when exposed on purpose with
    // WEFT_ALLOW_OPEN) any name may reach it, e.g. through a proxy.
    loopbackHost: auth.mode === 'open' && loopbackAddress(config.host),
    port: (server.address() as AddressInfo | null)?.port ?? config.port,
    boundHost: config.host,
  };
}

/** Listens on config.host:config.port; `serving` hears the GraphQL URL before it resolves. */
function listen(
  server: Server,
  config: ServerConfig,
  serving: (url: string) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      const host = config.host.includes(':') ? `[${config.host}]` : config.host;
      const url = `http://${host}:${port}${GRAPHQL_PATH}`;
      serving(url);
      resolve(url);
    });
  });
}

export function buildApp(deps: AppDeps): App {
  const { config } = deps;
  const auth = deps.auth ?? openAuthenticator();
  const foreign = () => foreignCheck(config, auth, server);
  let wss: WebSocketServer | undefined;
  const metrics = config.metrics
    ? createMetrics({
        ...(deps.subscriptionStats === undefined ? {} : { subscriptions: deps.subscriptionStats }),
        ...(deps.groupStats === undefined ? {} : { groups: deps.groupStats }),
        websockets: () => wss?.clients.size ?? 0,
        threadCache: () => deps.engine.cacheStats(),
        ...(deps.retentionStats === undefined ? {} : { retention: deps.retentionStats }),
        slowConsumers: () => sendBuffers.closed,
      })
    : undefined;
  const engine = metrics === undefined ? deps.engine : instrumentEngine(deps.engine, metrics);
  const reads =
    deps.reads ??
    createReads(
      engine,
      deps.queries ?? { databaseUrl: config.databaseUrl, queryTimeoutMs: config.queryTimeoutMs },
    );
  const ownsReads = deps.reads === undefined;
  let stopping = false;
  /** Queries and mutations executing now (HTTP and WebSocket); drain() waits for none. */
  const tracking = createDrainTracking();
  const fair = createFairExecution();
  const sendBuffers = createSendBuffers({
    maxBytes: deps.maxSendBufferBytes ?? config.maxSendBufferBytes,
    ...(deps.onSlowConsumer === undefined ? {} : { onSlowConsumer: deps.onSlowConsumer }),
  });
  const yoga = createWeftYoga({
    deps,
    engine,
    reads,
    auth,
    metrics,
    stopping: () => stopping,
    drainTracking: tracking.plugin,
    fair: fair.plugin,
    sendBuffers: sendBuffers.plugin,
  });
  /** HTTP requests being answered, but for streams (SSE): drain() waits for none. */
  const answering = new Set<ServerResponse>();
  const throttle = createRefusalThrottle(config.refusals);
  const handle = createRequestHandler({
    deps,
    metrics,
    yoga,
    throttle,
    answering,
    foreign,
    stopping: () => stopping,
    settle: tracking.settle,
    server: () => server,
    otlp: otlpRouteDeps(config, engine, auth),
  });

  const server = createServer(handle);
  const websockets = attachWebSockets({
    server,
    path: GRAPHQL_PATH,
    yoga,
    auth,
    limits: config.websocket,
    maxBodyBytes: config.maxBodyBytes,
    metrics,
    foreign,
    stopping: () => stopping,
    sendBuffers,
  });
  wss = websockets.wss;

  let url: string | undefined;
  let stopped: Promise<void> | undefined;

  /** Stops accepting; resolves once every connection has ended (memoised). */
  let serverClosed: Promise<void> | undefined;
  const closeServer = () => {
    serverClosed ??= new Promise<void>((resolve) => {
      if (server.listening) server.close(() => resolve());
      else resolve();
    });
    return serverClosed;
  };

  const drain = async (graceMs: number): Promise<boolean> => {
    stopping = true;
    void closeServer();
    server.closeIdleConnections();
    return tracking.until(
      () => tracking.executing() === 0 && [...answering].every(isStream),
      graceMs,
    );
  };

  return {
    yoga,
    reads,
    server,
    metrics,
    get url() {
      return url;
    },
    slowConsumers: sendBuffers.closed,
    drain(graceMs = config.shutdownGraceMs) {
      return drain(graceMs);
    },
    start() {
      return listen(server, config, (at) => {
        url = at;
        deps.log?.(`weft: serving ${url}`);
      });
    },
    stop(graceMs = 5000) {
      stopped ??= (async () => {
        stopping = true;
        throttle.close();
        // graphql-ws closes every socket with 1001 (going away); its clients reconnect elsewhere.
        await websockets.dispose();
        const sockets = wss;
        if (sockets !== undefined) {
          for (const client of sockets.clients) client.close(1001, 'server shutting down');
          await new Promise<void>((resolve) => sockets.close(() => resolve()));
        }
        const closed = closeServer();
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        await closed;
        clearTimeout(timer);
        await yoga.dispose();
        if (ownsReads) await reads.close();
      })();
      return stopped;
    },
  };
}

const allowedCrossOrigin = (origin: string, allowed: readonly string[]): boolean =>
  allowed.includes('*') || allowed.includes(origin);

const EXAMPLE_QUERY = `# Weft: durable state for AI agents. Try:
query Threads {
  threads(first: 10) {
    edges { node { id createdAt logLength nodeCount } }
  }
}
`;

const GRAPHIQL_OPTIONS = { title: 'Weft', defaultQuery: EXAMPLE_QUERY };

/**
 * GraphiQL's page, its renderer loaded on the first request for it: the renderer module holds
 * the whole GraphiQL bundle as strings (27 MiB of heap), which a server nobody opens GraphiQL
 * on (or one with WEFT_GRAPHIQL=false) never needs.
 */
async function renderGraphiQLLazily(options?: Parameters<RenderGraphiQL>[0]): Promise<string> {
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  return renderGraphiQL(options);
}
type RenderGraphiQL = typeof import('@graphql-yoga/render-graphiql').renderGraphiQL;
