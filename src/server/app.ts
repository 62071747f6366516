/**
 * The HTTP and WebSocket server: yoga on `/graphql` (POST/GET, SSE, offline GraphiQL), graphql-ws
 * on the same port and path through yoga's envelop (so WebSocket operations get the same
 * plugins as HTTP), `/healthz` and `/readyz`. `buildApp(deps)` wires; `start()` listens;
 * `stop()` closes sockets and connections gracefully.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import type { ExecutionArgs } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import type { Engine } from '../engine/index.js';
import { createReads, type Reads } from '../engine/reads.js';
import { createContext, type GraphQLContext } from '../graphql/context.js';
import { schema as defaultSchema } from '../graphql/schema.js';
import { type Authenticator, openAuthenticator, useAuth } from './auth/index.js';
import type { ServerConfig } from './config.js';
import { useBodyLimit, useHealth, useNoIntrospection } from './plugins.js';

export const GRAPHQL_PATH = '/graphql';

export interface AppDeps {
  config: ServerConfig;
  engine: Engine;
  /** Default: a read API on the engine and `config.databaseUrl`. */
  reads?: Reads;
  /** Who may call (API keys, tenants). Default: open — every caller is tenant `default` with every scope. */
  auth?: Authenticator;
  /** Extra yoga/envelop plugins (pub/sub, metrics …), after the built-in ones. */
  plugins?: Plugin[];
  /** Extra context fields for every operation (HTTP and WebSocket). */
  extendContext?: () => Record<string, unknown>;
  /** Default: the schema of src/graphql. */
  schema?: typeof defaultSchema;
  log?: (line: string) => void;
}

export interface App {
  yoga: YogaServerInstance<Record<string, unknown>, GraphQLContext>;
  reads: Reads;
  /** Listens on config.host:config.port (0: any free port); resolves with the GraphQL URL. */
  start(): Promise<string>;
  /** Stops accepting, closes WebSockets (1001) and idle connections, waits for the rest (≤ graceMs). */
  stop(graceMs?: number): Promise<void>;
  /** The GraphQL URL once started. */
  readonly url: string | undefined;
  readonly server: Server;
}

export function buildApp(deps: AppDeps): App {
  const { config, engine } = deps;
  const reads = deps.reads ?? createReads(engine, { databaseUrl: config.databaseUrl });
  const ownsReads = deps.reads === undefined;
  const yoga = createYoga<Record<string, unknown>, GraphQLContext>({
    schema: deps.schema ?? defaultSchema,
    graphqlEndpoint: GRAPHQL_PATH,
    graphiql: config.graphiql ? { title: 'Weft', defaultQuery: EXAMPLE_QUERY } : false,
    renderGraphiQL,
    landingPage: false,
    maskedErrors: { isDev: false },
    logging: false,
    context: () => ({ ...createContext({ engine, reads }), ...deps.extendContext?.() }),
    plugins: [
      useBodyLimit(config.maxBodyBytes),
      useHealth(async () => {
        await engine.store.getLogLength('\u0000readiness-probe');
      }),
      ...(config.introspection ? [] : [useNoIntrospection()]),
      useAuth(deps.auth ?? openAuthenticator()),
      ...(deps.plugins ?? []),
    ],
  });

  const server = createServer(yoga);
  const wss = new WebSocketServer({ server, path: GRAPHQL_PATH });
  type Run = (
    a: ExecutionArgs,
  ) => ReturnType<NonNullable<Parameters<typeof useServer>[0]['execute']>>;
  type RootOps = { execute: Run; subscribe: Run };
  const ws = useServer(
    {
      execute: (args) => (args.rootValue as RootOps).execute(args),
      subscribe: (args) => (args.rootValue as RootOps).subscribe(args),
      onSubscribe: async (ctx, _id, params) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
        });
        const args = {
          schema,
          operationName: params.operationName,
          document: parse(params.query),
          variableValues: params.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const errors = validate(args.schema, args.document);
        if (errors.length > 0) return errors;
        return args;
      },
    },
    wss,
  );

  let url: string | undefined;
  let stopping: Promise<void> | undefined;

  return {
    yoga,
    reads,
    server,
    get url() {
      return url;
    },
    start() {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          server.off('error', reject);
          const { port } = server.address() as AddressInfo;
          const host = config.host.includes(':') ? `[${config.host}]` : config.host;
          url = `http://${host}:${port}${GRAPHQL_PATH}`;
          deps.log?.(`weft: serving ${url}`);
          resolve(url);
        });
      });
    },
    stop(graceMs = 5000) {
      stopping ??= (async () => {
        await ws.dispose();
        for (const client of wss.clients) client.close(1001, 'server shutting down');
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        if (server.listening) {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeIdleConnections();
          const timer = setTimeout(() => server.closeAllConnections(), graceMs);
          await closed;
          clearTimeout(timer);
        }
        await yoga.dispose();
        if (ownsReads) await reads.close();
      })();
      return stopping;
    },
  };
}

const EXAMPLE_QUERY = `# Weft: durable state for AI agents. Try:
query Threads {
  threads(first: 10) {
    edges { node { id createdAt logLength nodeCount } }
  }
}
`;
