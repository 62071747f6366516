/**
 * Weft's own traces, through the OpenTelemetry SDK and its OTLP/HTTP exporter, only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: one server
 * span per HTTP request, and each run that ends (completed, failed, cancelled, timed out) as a
 * span tree under the GenAI conventions (src/otlp/run-spans.ts). Without the variable nothing
 * of the SDK is loaded: `startTracing` answers undefined and every hook is skipped.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Tracer } from '@opentelemetry/api';
import type { Engine } from '../engine/index.js';
import { publicThreadId } from '../engine/tenancy.js';
import type { CommittedEvent } from '../engine/types.js';
import { type RunSpan, runSpanTree } from '../otlp/run-spans.js';

export interface Tracing {
  /** The traces URL spans are exported to. */
  readonly url: string;
  /** Starts the span of one HTTP request; it ends when the response closes. */
  request(req: IncomingMessage, res: ServerResponse, path: string): void;
  /** Hears every commit (the engine's publisher); a run that ended is emitted as a span tree. */
  committed(event: CommittedEvent): void;
  /** The engine whose thread states the run spans are read from. */
  attach(engine: Engine): void;
  /** Exports what is buffered. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

const TERMINAL: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'timeout']);

/** The traces URL the OTel environment variables name, or undefined: tracing is off. */
export function tracesUrlOf(env: Record<string, string | undefined>): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

const hrTime = (nanos: string): [number, number] => {
  const n = BigInt(nanos);
  return [Number(n / 1_000_000_000n), Number(n % 1_000_000_000n)];
};

/**
 * Loads the SDK and starts exporting when the environment names an endpoint; undefined (and
 * nothing loaded) otherwise.
 */
export async function startTracing(
  env: Record<string, string | undefined>,
  log: (line: string) => void = () => undefined,
): Promise<Tracing | undefined> {
  const url = tracesUrlOf(env);
  if (url === undefined) return undefined;
  const api = await import('@opentelemetry/api');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? 'weft' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url }))],
  });
  const tracer = provider.getTracer('weft');
  let engine: Engine | undefined;

  const emit = (spans: RunSpan[]) => {
    const contexts = new Map<string, Context>();
    for (const s of spans) {
      const parent =
        (s.parent === undefined ? undefined : contexts.get(s.parent)) ?? api.ROOT_CONTEXT;
      const span = tracer.startSpan(
        s.name,
        { startTime: hrTime(s.startTimeUnixNano), attributes: s.attributes },
        parent,
      );
      if (s.error !== undefined)
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: s.error });
      contexts.set(s.key, api.trace.setSpan(api.ROOT_CONTEXT, span));
      span.end(hrTime(s.endTimeUnixNano));
    }
  };

  const emitRuns = async (event: CommittedEvent, runIds: string[]) => {
    if (engine === undefined) return;
    const state = await engine.getState(event.threadId);
    if (!state.ok) return;
    for (const runId of runIds) {
      const spans = runSpanTree(state.value, publicThreadId(event.threadId), runId);
      if (spans !== undefined) emit(spans);
    }
  };

  return {
    url,
    request: (req, res, path) => requestSpan(tracer, api, req, res, path),
    committed(event) {
      const ended = event.effects.flatMap((e) =>
        e.type === 'run_status_changed' && TERMINAL.has(e.to) ? [e.runId] : [],
      );
      if (ended.length === 0) return;
      emitRuns(event, ended).catch((error: unknown) =>
        log(`weft: tracing a run failed: ${String(error)}`),
      );
    },
    attach(e) {
      engine = e;
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

function requestSpan(
  tracer: Tracer,
  api: typeof import('@opentelemetry/api'),
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): void {
  const method = req.method ?? 'GET';
  const span = tracer.startSpan(`${method} ${path}`, {
    kind: api.SpanKind.SERVER,
    attributes: { 'http.request.method': method, 'url.path': path },
  });
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
    span.end();
  });
}
