/**
 * Server configuration from the environment, parsed once with zod. Every problem is reported at
 * once, each line naming the variable, what it must be and what it was.
 */
import { z } from 'zod';
import { DEFAULT_IMPORT_LIMITS } from '../core/graph/index.js';
import { DEFAULT_CACHE_BYTES, DEFAULT_MAX_PAYLOAD_BYTES } from '../engine/index.js';
import { DEFAULT_GROUP_CAPS, type GroupCaps } from '../events/index.js';
import { EncryptionError, parseEncryptionKey } from '../store/crypto/index.js';
import { parseDatabaseUrl } from '../store/migrate/index.js';
import { DEFAULT_MAX_SEND_BUFFER_BYTES } from './send-buffer.js';

export const DEFAULT_DATABASE_URL = 'file:./data/weft.db';
/** Largest request body accepted (an AgentState import is the largest legitimate one). */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Heap growth between full collections `weft serve` asks V8 for (WEFT_HEAP_GROWTH_PERCENT). */
export const DEFAULT_HEAP_GROWTH_PERCENT = 20;
/** How long one read may run before it is stopped with QUERY_TIMEOUT (WEFT_QUERY_TIMEOUT_MS). */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;

/** Defaults of the hostile-input limits (each has a WEFT_MAX_* variable). */
export const LIMIT_DEFAULTS = {
  /** Selection depth of one operation (graphql-armor max-depth; introspection excluded). */
  maxDepth: 15,
  /**
   * Static cost of one operation (graphql-armor cost-limit: objects 2, scalars 1, ×1.5 per level,
   * × a literal `first`), checked before execution. A backstop for documents built to be
   * expensive; the schema's own complexity limit (50,000, page sizes clamped) is the finer one.
   */
  maxCost: 1_000_000,
  /** Aliases in one operation. */
  maxAliases: 30,
  /** Lexical tokens in one document. */
  maxTokens: 5_000,
  /** Directives in one operation. */
  maxDirectives: 50,
  /** Operations in one batched HTTP request (a JSON array); 0 turns batching off. */
  maxBatch: 10,
  /** Canonical JSON size of one node payload, memory value, action or response. */
  maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES,
  /** Estimated size of one imported AgentState. */
  maxImportBytes: DEFAULT_IMPORT_LIMITS.maxBytes,
  /** Nodes in one imported AgentState. */
  maxImportNodes: DEFAULT_IMPORT_LIMITS.maxNodes,
} as const;

/** Defaults of the graphql-ws connection limits (each has a WEFT_WS_* variable). */
export const WEBSOCKET_DEFAULTS = {
  /** How long a socket may stay open without sending connection_init (closed with 4408). */
  initTimeoutMs: 3_000,
  /** Open WebSockets in this process; one more is refused at the upgrade (503). */
  maxConnections: 10_000,
  /** Open WebSockets of one API key (open mode: of all callers together); closed with 4429. */
  maxConnectionsPerKey: 100,
  /** Operations (subscriptions mostly) running at once on one WebSocket. */
  maxSubscriptions: 100,
} as const;

/** Defaults of the refusal throttle (see refusal-throttle.ts; each has a WEFT_REFUSAL_* variable). */
export const REFUSAL_DEFAULTS = {
  /** Refusals one address gets answered at once before they are delayed. */
  burst: 30,
  /** Refusals per second that burst refills by. */
  perSecond: 10,
  /** How long each refusal beyond that is held before it is answered; 0 turns this off. */
  delayMs: 250,
} as const;

/** Defaults of the retention sweeper (each has a WEFT_RETENTION_* variable). */
export const RETENTION_DEFAULTS = {
  /** Time between sweeps (a full batch is followed by the next at once). */
  sweepMs: 60_000,
  /** Threads one sweep deletes at most. */
  batch: 100,
} as const;

/** An integer variable from `min` to `max`, `fallback` when unset. */
const int = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = Number(v);
      if (!/^\d+$/.test(v) || n < min || n > max) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be an integer from ${min} to ${max} (got "${v}")`,
        });
        return z.NEVER;
      }
      return n;
    });

const flag = (name: string, fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      if (/^(1|true|yes|on)$/i.test(v)) return true;
      if (/^(0|false|no|off)$/i.test(v)) return false;
      ctx.addIssue({ code: 'custom', message: `${name} must be true or false (got "${v}")` });
      return z.NEVER;
    });

/** A comma-separated list of origins (`https://app.example.com`, or `*` for any). */
const origins = (name: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const list = (v ?? '')
        .split(',')
        .map((o) => o.trim().replace(/\/+$/, ''))
        .filter((o) => o !== '');
      for (const origin of list) {
        if (origin === '*') continue;
        let ok = false;
        try {
          const url = new URL(origin);
          ok = (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === origin;
        } catch {
          ok = false;
        }
        if (!ok) {
          ctx.addIssue({
            code: 'custom',
            message: `${name} must list origins like https://app.example.com or * (got "${origin}")`,
          });
          return z.NEVER;
        }
      }
      return list;
    });

const EnvSchema = z.object({
  /** Encryption at rest (optional): 32 bytes as 64 hex digits or base64. */
  WEFT_ENCRYPTION_KEY: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      try {
        return parseEncryptionKey(v);
      } catch (error) {
        const why = error instanceof EncryptionError ? error.message : String(error);
        ctx.addIssue({ code: 'custom', message: `WEFT_ENCRYPTION_KEY: ${why}` });
        return z.NEVER;
      }
    }),
  // With a key, node text is indexed for searchNodes (in plain text) only when this is set.
  WEFT_SEARCH_PLAINTEXT_INDEX: flag('WEFT_SEARCH_PLAINTEXT_INDEX', false),
  PORT: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return 4000;
      const n = Number(v);
      if (!/^\d+$/.test(v) || n > 65_535) {
        ctx.addIssue({
          code: 'custom',
          message: `PORT must be an integer from 0 to 65535 (got "${v}")`,
        });
        return z.NEVER;
      }
      return n;
    }),
  HOST: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? '127.0.0.1' : v)),
  DATABASE_URL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const url = v === undefined || v === '' ? DEFAULT_DATABASE_URL : v;
      try {
        parseDatabaseUrl(url);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
      return url;
    }),
  REDIS_URL: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      if (!/^rediss?:\/\/.+/.test(v)) {
        ctx.addIssue({
          code: 'custom',
          message: `REDIS_URL must look like redis://host:6379 (got "${v}")`,
        });
        return z.NEVER;
      }
      return v;
    }),
  WEFT_GRAPHIQL: flag('WEFT_GRAPHIQL', true),
  WEFT_INTROSPECTION: flag('WEFT_INTROSPECTION', true),
  WEFT_ALLOW_OPEN: flag('WEFT_ALLOW_OPEN', false),
  WEFT_MAX_BODY_BYTES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return DEFAULT_MAX_BODY_BYTES;
      if (!/^\d+$/.test(v) || Number(v) < 1024) {
        ctx.addIssue({
          code: 'custom',
          message: `WEFT_MAX_BODY_BYTES must be an integer of at least 1024 (got "${v}")`,
        });
        return z.NEVER;
      }
      return Number(v);
    }),
  // Hostile-input limits (see LIMIT_DEFAULTS and docs/deployment.md).
  WEFT_MAX_DEPTH: int('WEFT_MAX_DEPTH', LIMIT_DEFAULTS.maxDepth, 1, 1000),
  WEFT_MAX_COST: int('WEFT_MAX_COST', LIMIT_DEFAULTS.maxCost, 1),
  WEFT_MAX_ALIASES: int('WEFT_MAX_ALIASES', LIMIT_DEFAULTS.maxAliases, 0),
  WEFT_MAX_TOKENS: int('WEFT_MAX_TOKENS', LIMIT_DEFAULTS.maxTokens, 10),
  WEFT_MAX_DIRECTIVES: int('WEFT_MAX_DIRECTIVES', LIMIT_DEFAULTS.maxDirectives, 0),
  WEFT_MAX_BATCH: int('WEFT_MAX_BATCH', LIMIT_DEFAULTS.maxBatch, 0, 1000),
  WEFT_MAX_PAYLOAD_BYTES: int('WEFT_MAX_PAYLOAD_BYTES', LIMIT_DEFAULTS.maxPayloadBytes, 1),
  WEFT_MAX_IMPORT_BYTES: int('WEFT_MAX_IMPORT_BYTES', LIMIT_DEFAULTS.maxImportBytes, 1),
  WEFT_MAX_IMPORT_NODES: int('WEFT_MAX_IMPORT_NODES', LIMIT_DEFAULTS.maxImportNodes, 1),
  // Browser origins allowed besides the server's own (HTTP with CORS, and WebSocket upgrades).
  WEFT_CORS_ORIGINS: origins('WEFT_CORS_ORIGINS'),
  // The earlier name (it covered WebSocket upgrades only); still read, merged with the above.
  WEFT_ALLOWED_ORIGINS: origins('WEFT_ALLOWED_ORIGINS'),
  // graphql-ws connection limits (see WEBSOCKET_DEFAULTS).
  WEFT_WS_INIT_TIMEOUT_MS: int(
    'WEFT_WS_INIT_TIMEOUT_MS',
    WEBSOCKET_DEFAULTS.initTimeoutMs,
    100,
    600_000,
  ),
  WEFT_WS_MAX_CONNECTIONS: int('WEFT_WS_MAX_CONNECTIONS', WEBSOCKET_DEFAULTS.maxConnections, 1),
  WEFT_WS_MAX_CONNECTIONS_PER_KEY: int(
    'WEFT_WS_MAX_CONNECTIONS_PER_KEY',
    WEBSOCKET_DEFAULTS.maxConnectionsPerKey,
    1,
  ),
  WEFT_WS_MAX_SUBSCRIPTIONS: int(
    'WEFT_WS_MAX_SUBSCRIPTIONS',
    WEBSOCKET_DEFAULTS.maxSubscriptions,
    1,
  ),
  WEFT_SUBSCRIPTION_COST_PER_KEY: int(
    'WEFT_SUBSCRIPTION_COST_PER_KEY',
    DEFAULT_GROUP_CAPS.perHolder,
    1,
    1_000_000_000,
  ),
  WEFT_SUBSCRIPTION_COST_TOTAL: int(
    'WEFT_SUBSCRIPTION_COST_TOTAL',
    DEFAULT_GROUP_CAPS.total,
    1,
    1_000_000_000,
  ),
  WEFT_REFUSAL_BURST: int('WEFT_REFUSAL_BURST', REFUSAL_DEFAULTS.burst, 1, 1_000_000),
  WEFT_REFUSAL_RATE: int('WEFT_REFUSAL_RATE', REFUSAL_DEFAULTS.perSecond, 1, 1_000_000),
  WEFT_REFUSAL_DELAY_MS: int('WEFT_REFUSAL_DELAY_MS', REFUSAL_DEFAULTS.delayMs, 0, 60_000),
  // Estimated heap bytes of the thread states the engine keeps in memory (see thread-cache.ts).
  WEFT_CACHE_BYTES: int('WEFT_CACHE_BYTES', DEFAULT_CACHE_BYTES, 1),
  WEFT_MAX_SEND_BUFFER_BYTES: int('WEFT_MAX_SEND_BUFFER_BYTES', DEFAULT_MAX_SEND_BUFFER_BYTES, 1),
  // How far V8's heap may grow past what the last full collection kept (0: V8's own choice).
  WEFT_HEAP_GROWTH_PERCENT: int('WEFT_HEAP_GROWTH_PERCENT', DEFAULT_HEAP_GROWTH_PERCENT, 0, 300),
  // Operations.
  WEFT_METRICS: flag('WEFT_METRICS', true),
  // With keys, /metrics answers this bearer token or an admin key.
  WEFT_METRICS_TOKEN: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      if (v.length < 16 || /\s/.test(v)) {
        ctx.addIssue({
          code: 'custom',
          message: 'WEFT_METRICS_TOKEN must be at least 16 characters, without spaces',
        });
        return z.NEVER;
      }
      return v;
    }),
  WEFT_REQUEST_LOG: flag('WEFT_REQUEST_LOG', true),
  // Retention (src/engine/retention.ts): the default expiry of new threads, in days (unset: none).
  WEFT_RETENTION_DAYS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return undefined;
      const n = Number(v);
      if (!/^\d+(\.\d+)?$/.test(v) || !(n > 0) || n > 1_000_000) {
        ctx.addIssue({
          code: 'custom',
          message: `WEFT_RETENTION_DAYS must be a number of days above 0 (got "${v}")`,
        });
        return z.NEVER;
      }
      return n;
    }),
  // Time between retention sweeps; 0 turns the sweeper off (e.g. for `weft retention --apply`).
  WEFT_RETENTION_SWEEP_MS: int(
    'WEFT_RETENTION_SWEEP_MS',
    RETENTION_DEFAULTS.sweepMs,
    0,
    86_400_000,
  ),
  WEFT_RETENTION_BATCH: int('WEFT_RETENTION_BATCH', RETENTION_DEFAULTS.batch, 1, 10_000),
  WEFT_SHUTDOWN_GRACE_MS: int('WEFT_SHUTDOWN_GRACE_MS', 8_000, 0, 600_000),
  // How long one read may run (0: no limit); see ServerConfig.queryTimeoutMs.
  WEFT_QUERY_TIMEOUT_MS: int('WEFT_QUERY_TIMEOUT_MS', DEFAULT_QUERY_TIMEOUT_MS, 0, 3_600_000),
});

/** Every environment variable the server reads (`weft --help` lists each). */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

export interface Limits {
  maxBodyBytes: number;
  maxDepth: number;
  maxCost: number;
  maxAliases: number;
  maxTokens: number;
  maxDirectives: number;
  maxBatch: number;
  maxPayloadBytes: number;
  maxImportBytes: number;
  maxImportNodes: number;
}

export interface WebSocketLimits {
  initTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerKey: number;
  maxSubscriptions: number;
}

export interface ServerConfig {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  graphiql: boolean;
  introspection: boolean;
  /** Serve without API keys on a non-loopback host (refused by default: anyone who can reach the port could read and write every thread). */
  allowOpen: boolean;
  maxBodyBytes: number;
  /** Query, batch and payload limits (maxBodyBytes is the field above). */
  limits: Omit<Limits, 'maxBodyBytes'>;
  /** graphql-ws connection limits. */
  websocket: WebSocketLimits;
  /**
   * What live subscriptions may cost (src/events/groups.ts subscriptionCost): per API key
   * (WEFT_SUBSCRIPTION_COST_PER_KEY) and in all (WEFT_SUBSCRIPTION_COST_TOTAL).
   */
  subscriptionCaps: GroupCaps;
  /** The refusal throttle (REFUSAL_DEFAULTS). */
  refusals: { burst: number; perSecond: number; delayMs: number };
  /**
   * Browser origins (besides the server's own) allowed to call over HTTP (CORS, with credentials)
   * and to open WebSockets; `*` allows any. WEFT_CORS_ORIGINS and WEFT_ALLOWED_ORIGINS together.
   */
  allowedOrigins: string[];
  /** Serve Prometheus metrics on /metrics. */
  metrics: boolean;
  /**
   * A bearer token for /metrics (a scraper needs no API key). With keys, /metrics needs it or an
   * admin key; in open mode /metrics is as open as everything else.
   */
  metricsToken?: string | undefined;
  /** One JSON line per request on stdout. */
  requestLog: boolean;
  /**
   * Retention: WEFT_RETENTION_DAYS, the expiry of new threads created without one (createdAt +
   * days; threads that exist already keep theirs); undefined: none. The sweeper runs every
   * `sweepMs` (WEFT_RETENTION_SWEEP_MS; 0: off) and deletes at most `batch` threads per sweep
   * (WEFT_RETENTION_BATCH).
   */
  retention: { days: number | undefined; sweepMs: number; batch: number };
  /**
   * How long a SIGTERM waits for in-flight queries and mutations before closing connections
   * (default 8 s: inside Docker's 10 s between SIGTERM and SIGKILL).
   */
  shutdownGraceMs: number;
  /** WEFT_ENCRYPTION_KEY: payloads and memory content encrypted at rest with it (AES-256-GCM). */
  encryptionKey: Uint8Array | undefined;
  /**
   * WEFT_SEARCH_PLAINTEXT_INDEX: with an encryption key, keep the search index of node text
   * anyway (in plain text); without it searchNodes is off. Without a key it is always kept.
   */
  searchPlaintextIndex: boolean;
  /**
   * WEFT_CACHE_BYTES: bound on the estimated heap bytes of the thread states the engine keeps
   * (least recently used evicted first); a thread not kept is replayed from the database.
   */
  cacheBytes: number;
  /**
   * WEFT_HEAP_GROWTH_PERCENT: the heap may grow this far past what the last full garbage
   * collection kept before the next one (V8's `--heap-growing-percent`); 0 leaves it to V8, which
   * on a machine with memory to spare lets a server that reads large states hold several times
   * its live heap in garbage.
   */
  heapGrowthPercent: number;
  /**
   * WEFT_MAX_SEND_BUFFER_BYTES: unsent bytes a subscriber's connection may hold before it is
   * closed as a slow consumer (WebSocket 4413, SSE a final SLOW_CONSUMER event).
   */
  maxSendBufferBytes: number;
  /**
   * WEFT_QUERY_TIMEOUT_MS: how long one read may run before it is stopped and answered
   * QUERY_TIMEOUT: Postgres's statement_timeout on every connection of the read pool; on SQLite
   * the deadline of a search, whose thread is terminated past it. Undefined (the variable at 0):
   * none.
   */
  queryTimeoutMs: number | undefined;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The configuration in `env` (default: process.env); throws ConfigError listing every problem. */
export function loadConfig(env: Record<string, string | undefined> = process.env): ServerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message));
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    graphiql: e.WEFT_GRAPHIQL,
    introspection: e.WEFT_INTROSPECTION,
    allowOpen: e.WEFT_ALLOW_OPEN,
    maxBodyBytes: e.WEFT_MAX_BODY_BYTES,
    limits: {
      maxDepth: e.WEFT_MAX_DEPTH,
      maxCost: e.WEFT_MAX_COST,
      maxAliases: e.WEFT_MAX_ALIASES,
      maxTokens: e.WEFT_MAX_TOKENS,
      maxDirectives: e.WEFT_MAX_DIRECTIVES,
      maxBatch: e.WEFT_MAX_BATCH,
      maxPayloadBytes: e.WEFT_MAX_PAYLOAD_BYTES,
      maxImportBytes: e.WEFT_MAX_IMPORT_BYTES,
      maxImportNodes: e.WEFT_MAX_IMPORT_NODES,
    },
    websocket: {
      initTimeoutMs: e.WEFT_WS_INIT_TIMEOUT_MS,
      maxConnections: e.WEFT_WS_MAX_CONNECTIONS,
      maxConnectionsPerKey: e.WEFT_WS_MAX_CONNECTIONS_PER_KEY,
      maxSubscriptions: e.WEFT_WS_MAX_SUBSCRIPTIONS,
    },
    subscriptionCaps: {
      perHolder: e.WEFT_SUBSCRIPTION_COST_PER_KEY,
      total: e.WEFT_SUBSCRIPTION_COST_TOTAL,
    },
    refusals: {
      burst: e.WEFT_REFUSAL_BURST,
      perSecond: e.WEFT_REFUSAL_RATE,
      delayMs: e.WEFT_REFUSAL_DELAY_MS,
    },
    allowedOrigins: [...new Set([...e.WEFT_CORS_ORIGINS, ...e.WEFT_ALLOWED_ORIGINS])],
    metrics: e.WEFT_METRICS,
    metricsToken: e.WEFT_METRICS_TOKEN,
    requestLog: e.WEFT_REQUEST_LOG,
    retention: {
      days: e.WEFT_RETENTION_DAYS,
      sweepMs: e.WEFT_RETENTION_SWEEP_MS,
      batch: e.WEFT_RETENTION_BATCH,
    },
    shutdownGraceMs: e.WEFT_SHUTDOWN_GRACE_MS,
    encryptionKey: e.WEFT_ENCRYPTION_KEY,
    searchPlaintextIndex: e.WEFT_SEARCH_PLAINTEXT_INDEX,
    cacheBytes: e.WEFT_CACHE_BYTES,
    heapGrowthPercent: e.WEFT_HEAP_GROWTH_PERCENT,
    maxSendBufferBytes: e.WEFT_MAX_SEND_BUFFER_BYTES,
    queryTimeoutMs: e.WEFT_QUERY_TIMEOUT_MS === 0 ? undefined : e.WEFT_QUERY_TIMEOUT_MS,
  };
}

export { isLoopbackHost } from './auth/loopback.js';
