/**
 * Prometheus metrics (prom-client), one registry per app: HTTP requests by route and status,
 * GraphQL errors by code, append latency, log lengths, subscribers and open WebSockets, the
 * engine's thread cache, plus the process defaults. `instrumentEngine` times the engine's writes without changing them.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Engine, RetentionSweeperStats, ThreadCacheStats } from '../engine/index.js';
import type { GroupStats } from '../events/index.js';
import type { AuthInfo } from '../graphql/context.js';

/** The routes requests are counted under (anything else is `other`). */
export const routeOf = (path: string): string =>
  path === '/graphql' ||
  path === '/healthz' ||
  path === '/readyz' ||
  path === '/metrics' ||
  path === '/v1/traces'
    ? path
    : 'other';

export interface Metrics {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  requestDuration: Histogram<'route'>;
  inflight: Gauge;
  operations: Counter<'type'>;
  errors: Counter<'code'>;
  appendDuration: Histogram<'outcome'>;
  appendedNodes: Counter;
  logLength: Histogram;
  websocketRefusals: Counter<'reason'>;
  delayedRefusals: Counter;
}

export interface MetricsSources {
  /** Live subscription listeners and the threads they watch (the event hub's stats). */
  subscriptions?: () => { listeners: number; threads: number };
  /** The subscription groups (the event hub's `groups.stats`). */
  groups?: () => GroupStats;
  /** Open graphql-ws connections. */
  websockets?: () => number;
  /** The engine's thread-state cache (engine.cacheStats). */
  threadCache?: () => ThreadCacheStats;
  /** Subscriber connections closed as slow consumers so far, per transport. */
  slowConsumers?: () => Readonly<Record<'websocket' | 'sse', number>>;
  /** The retention sweeper's running totals (undefined while none runs). */
  retention?: () => RetentionSweeperStats | undefined;
}

export function createMetrics(sources: MetricsSources = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  new Gauge({
    name: 'weft_subscribers',
    help: 'Open subscription listeners (SSE and WebSocket) on this instance',
    registers,
    collect() {
      this.set(sources.subscriptions?.().listeners ?? 0);
    },
  });
  new Gauge({
    name: 'weft_subscribed_threads',
    help: 'Threads with at least one subscription listener on this instance',
    registers,
    collect() {
      this.set(sources.subscriptions?.().threads ?? 0);
    },
  });
  new Gauge({
    name: 'weft_websocket_connections',
    help: 'Open graphql-ws connections',
    registers,
    collect() {
      this.set(sources.websockets?.() ?? 0);
    },
  });
  groupMetrics(registers, sources.groups);
  threadCacheMetrics(registers, sources.threadCache);
  retentionMetrics(registers, sources.retention);
  new Counter({
    name: 'weft_slow_consumers_closed_total',
    help: 'Subscriber connections closed for holding more unsent bytes than WEFT_MAX_SEND_BUFFER_BYTES',
    labelNames: ['transport'] as const,
    registers,
    collect() {
      this.reset();
      const closed = sources.slowConsumers?.();
      for (const transport of ['websocket', 'sse'] as const) {
        this.inc({ transport }, closed?.[transport] ?? 0);
      }
    },
  });
  return {
    registry,
    requests: new Counter({
      name: 'weft_http_requests_total',
      help: 'HTTP requests answered, by route, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers,
    }),
    requestDuration: new Histogram({
      name: 'weft_http_request_duration_seconds',
      help: 'HTTP request duration (streams: until they end)',
      labelNames: ['route'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    inflight: new Gauge({
      name: 'weft_http_requests_in_flight',
      help: 'HTTP requests being answered',
      registers,
    }),
    operations: new Counter({
      name: 'weft_graphql_operations_total',
      help: 'GraphQL operations executed, by type',
      labelNames: ['type'] as const,
      registers,
    }),
    errors: new Counter({
      name: 'weft_graphql_errors_total',
      help: 'GraphQL errors returned, by extensions.code (refused requests included)',
      labelNames: ['code'] as const,
      registers,
    }),
    appendDuration: new Histogram({
      name: 'weft_append_duration_seconds',
      help: 'Engine appendNodes latency, by outcome (ok or the error code)',
      labelNames: ['outcome'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    appendedNodes: new Counter({
      name: 'weft_appended_nodes_total',
      help: 'Nodes appended through appendNodes',
      registers,
    }),
    websocketRefusals: new Counter({
      name: 'weft_websocket_refusals_total',
      help: 'graphql-ws connections or operations refused, by reason: unauthenticated (4403), init_timeout (4408), connections (503 at the upgrade), connections_per_key (4429), subscriptions (TOO_MANY_SUBSCRIPTIONS)',
      labelNames: ['reason'] as const,
      registers,
    }),
    delayedRefusals: new Counter({
      name: 'weft_delayed_refusals_total',
      help: 'Refused HTTP requests answered late because their address had used up its burst of refusals (WEFT_REFUSAL_DELAY_MS)',
      registers,
    }),
    logLength: new Histogram({
      name: 'weft_log_length',
      help: 'Log length of a thread after each write through this instance',
      buckets: [10, 100, 1_000, 10_000, 100_000, 1_000_000],
      registers,
    }),
  };
}

/** A counter set at each scrape to a running total kept elsewhere (0 while there is none). */
function totalCounter<S>(
  registers: Registry[],
  stats: (() => S | undefined) | undefined,
  name: string,
  help: string,
  read: (s: S) => number,
): Counter {
  return new Counter({
    name,
    help,
    registers,
    collect() {
      this.reset();
      const now = stats?.();
      this.inc(now === undefined ? 0 : read(now));
    },
  });
}

/**
 * The thread cache's series, read from the engine at each scrape: the engine counts, these only
 * report (a counter is set to the engine's running total, so they restart with the process).
 */
function threadCacheMetrics(
  registers: Registry[],
  stats: (() => ThreadCacheStats) | undefined,
): void {
  const gauge = (name: string, help: string, read: (s: ThreadCacheStats) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(stats === undefined ? 0 : read(stats()));
      },
    });
  const counter = (name: string, help: string, read: (s: ThreadCacheStats) => number) =>
    totalCounter(registers, stats, name, help, read);
  gauge(
    'weft_thread_cache_bytes',
    'Estimated heap bytes of the thread states the engine keeps in memory',
    (s) => s.bytes,
  );
  gauge(
    'weft_thread_cache_max_bytes',
    'Bound on weft_thread_cache_bytes (WEFT_CACHE_BYTES)',
    (s) => s.maxBytes,
  );
  gauge('weft_thread_cache_threads', 'Threads whose state the engine keeps', (s) => s.threads);
  counter(
    'weft_thread_cache_hits_total',
    'Thread state lookups answered from the cache',
    (s) => s.hits,
  );
  counter(
    'weft_thread_cache_misses_total',
    'Thread state lookups not cached (the thread is replayed from the database)',
    (s) => s.misses,
  );
  counter(
    'weft_thread_cache_evictions_total',
    'Thread states evicted, least recently used first, to stay under WEFT_CACHE_BYTES',
    (s) => s.evictions,
  );
  counter(
    'weft_thread_cache_oversized_total',
    'Thread states not kept because each alone was estimated above WEFT_CACHE_BYTES',
    (s) => s.oversized,
  );
}

/** The retention sweeper's series, read from its running totals at each scrape. */
function retentionMetrics(
  registers: Registry[],
  stats: (() => RetentionSweeperStats | undefined) | undefined,
): void {
  const counter = (name: string, help: string, read: (s: RetentionSweeperStats) => number) =>
    totalCounter(registers, stats, name, help, read);
  counter(
    'weft_retention_threads_deleted_total',
    'Expired threads the retention sweeper of this instance deleted (each with an audit entry)',
    (s) => s.deleted,
  );
  counter(
    'weft_retention_threads_skipped_total',
    'Expired threads another instance, a deleteThread or a new expiry took first',
    (s) => s.skipped,
  );
  counter('weft_retention_sweeps_total', 'Retention sweeps run by this instance', (s) => s.sweeps);
  counter(
    'weft_retention_sweep_errors_total',
    'Retention sweeps that failed, and expired threads that could not be deleted',
    (s) => s.errors,
  );
}

const WRITES = [
  'createThread',
  'importState',
  'appendNodes',
  'remember',
  'forkThread',
  'deleteThread',
  'setThreadExpiry',
  'startRun',
  'dispatch',
  'resolveApproval',
  'cancelRun',
  'recordUsage',
  'importWorkflowState',
] as const;

/** The engine with its writes measured: append latency, appended nodes, log lengths. */
export function instrumentEngine(engine: Engine, metrics: Metrics): Engine {
  const wrapped = new Map<PropertyKey, unknown>();
  for (const name of WRITES) {
    const write = engine[name] as (input: unknown) => Promise<unknown>;
    wrapped.set(name, async (input: unknown) => {
      const end = name === 'appendNodes' ? metrics.appendDuration.startTimer() : undefined;
      let outcome = 'EXCEPTION';
      try {
        const result = (await write.call(engine, input)) as
          | { ok: true; value: { logLength?: unknown } }
          | { ok: false; error: { code: string } };
        outcome = result.ok ? 'ok' : result.error.code;
        if (result.ok && typeof result.value.logLength === 'number') {
          metrics.logLength.observe(result.value.logLength);
        }
        if (result.ok && name === 'appendNodes') {
          const nodes = (result.value as { nodes?: unknown[] }).nodes;
          metrics.appendedNodes.inc(Array.isArray(nodes) ? nodes.length : 0);
        }
        return result;
      } finally {
        end?.({ outcome });
      }
    });
  }
  // Operations act through a tenant's engine (engine.forTenant): time those writes too.
  const tenants = new WeakMap<Engine, Engine>();
  wrapped.set('forTenant', (tenant: string) => {
    const scoped = engine.forTenant(tenant);
    let instrumented = tenants.get(scoped);
    if (instrumented === undefined) {
      instrumented = instrumentEngine(scoped, metrics);
      tenants.set(scoped, instrumented);
    }
    return instrumented;
  });
  return new Proxy(engine, {
    get(target, prop, receiver) {
      return wrapped.get(prop) ?? Reflect.get(target, prop, receiver);
    },
  });
}

/** Counts executed operations by type and returned errors by code. */
export function useOperationMetrics(metrics: Metrics): Plugin {
  return {
    onExecute({ args }) {
      const type = getOperationAST(args.document, args.operationName)?.operation ?? 'unknown';
      metrics.operations.inc({ type });
    },
    onResultProcess({ result }) {
      for (const code of errorCodesOf(result)) metrics.errors.inc({ code });
    },
  };
}

/** The error codes of a yoga result (one result or a batch; streams report none here). */
export function errorCodesOf(result: unknown): string[] {
  const results = Array.isArray(result) ? result : [result];
  const codes: string[] = [];
  for (const r of results) {
    if (typeof r !== 'object' || r === null || Symbol.asyncIterator in r) continue;
    for (const error of (r as { errors?: Array<{ extensions?: { code?: unknown } }> }).errors ??
      []) {
      const code = error.extensions?.code;
      codes.push(typeof code === 'string' ? code : 'UNCODED');
    }
  }
  return codes;
}

export interface MetricsAccess {
  /** WEFT_METRICS_TOKEN: `Authorization: Bearer <token>` may read /metrics. */
  token?: string | undefined;
  /** The caller of an Authorization header (open mode: everyone). */
  authenticate(authorization: string | undefined): Promise<AuthInfo>;
}

const sameSecret = (a: string, b: string): boolean => {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
};

/** Whether this Authorization may read /metrics: the metrics token, an admin key, or open mode. */
async function mayReadMetrics(
  authorization: string | undefined,
  access: MetricsAccess,
): Promise<boolean> {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (access.token !== undefined && bearer !== undefined && sameSecret(bearer, access.token))
    return true;
  const auth = await access.authenticate(authorization);
  // Open mode's caller has no key (keyId null) and every scope: as open as /graphql.
  return auth.authenticated && (auth.keyId === null || auth.scopes.has('admin'));
}

/**
 * `GET /metrics` in the Prometheus text format. With API keys it needs WEFT_METRICS_TOKEN or an
 * admin key (401 UNAUTHENTICATED otherwise): the series name operations, error codes and load.
 */
export function useMetricsEndpoint(metrics: Metrics, access: MetricsAccess): Plugin {
  return {
    async onRequest({ request, url, endResponse }) {
      if (request.method !== 'GET' || url.pathname !== '/metrics') return;
      const authorization = request.headers.get('authorization') ?? undefined;
      if (!(await mayReadMetrics(authorization, access))) {
        endResponse(
          Response.json(
            {
              errors: [
                {
                  message:
                    '/metrics needs Authorization: Bearer <WEFT_METRICS_TOKEN> or an API key with the admin scope',
                  extensions: { code: 'UNAUTHENTICATED' },
                },
              ],
            },
            { status: 401, headers: { 'www-authenticate': 'Bearer realm="weft-metrics"' } },
          ),
        );
        return;
      }
      endResponse(
        new Response(await metrics.registry.metrics(), {
          status: 200,
          headers: { 'content-type': metrics.registry.contentType },
        }),
      );
    },
  };
}

/** The subscription groups: groups, members, cost held, members dropped or fallen behind. */
function groupMetrics(registers: Registry[], stats: (() => GroupStats) | undefined): void {
  const gauge = (name: string, help: string, read: (s: GroupStats) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const now = stats?.();
        this.set(now === undefined ? 0 : read(now));
      },
    });
  gauge(
    'weft_subscription_groups',
    'Subscription groups (same tenant, field and arguments) with members on this instance',
    (s) => s.groups,
  );
  gauge(
    'weft_subscription_group_members',
    'Subscriptions that are members of a group on this instance',
    (s) => s.subscribers,
  );
  gauge(
    'weft_subscription_cost',
    'Cost units held by live subscriptions on this instance (WEFT_SUBSCRIPTION_COST_TOTAL caps it)',
    (s) => s.cost,
  );
  const counter = (name: string, help: string, read: (s: GroupStats) => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        const now = stats?.();
        this.inc(now === undefined ? 0 : read(now));
      },
    });
  counter(
    'weft_subscription_slow_members_dropped_total',
    'Group members ended (SLOW_CONSUMER) for falling a whole buffer behind with no store to catch up from',
    (s) => s.droppedSlow,
  );
  counter(
    'weft_subscription_members_fell_behind_total',
    'Times a group member fell a whole buffer behind and caught up from the store',
    (s) => s.fellBehind,
  );
}
