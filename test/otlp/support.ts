/**
 * Real OpenTelemetry clients pointed at a real Weft server: a tracer provider of the OTel JS SDK
 * exporting with its OTLP/HTTP exporter (JSON or protobuf), and the GenAI spans an instrumented
 * agent emits (semantic conventions: invoke_agent → chat → execute_tool).
 */
import { context, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

export interface Client {
  tracer: Tracer;
  provider: BasicTracerProvider;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function otlpClient(
  baseUrl: string,
  options: {
    encoding?: 'json' | 'protobuf';
    gzip?: boolean;
    headers?: Record<string, string>;
  } = {},
): Client {
  const config = {
    url: `${baseUrl}/v1/traces`,
    ...(options.gzip ? { compression: 'gzip' as never } : {}),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  };
  const exporter: SpanExporter =
    options.encoding === 'protobuf' ? new ProtoExporter(config) : new JsonExporter(config);
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 512 })],
  });
  return {
    provider,
    tracer: provider.getTracer('weft-test-agent', '1.0.0'),
    flush: () => provider.forceFlush(),
    close: () => provider.shutdown(),
  };
}

/** The base URL of a server whose GraphQL URL is `graphqlUrl`. */
export const baseOf = (graphqlUrl: string): string => graphqlUrl.replace(/\/graphql$/, '');

const child = (
  tracer: Tracer,
  parent: Span,
  name: string,
  startTime: number,
  attributes: Record<string, string | number>,
) => tracer.startSpan(name, { startTime, attributes }, trace.setSpan(context.active(), parent));

/**
 * One agent turn as GenAI spans: the agent, a chat asking for a tool, the tool, a chat answering.
 * Times are fixed (ms since the epoch) so that they can be compared after a round trip.
 */
export function emitAgentTurn(
  tracer: Tracer,
  options: { conversationId: string; fail?: boolean; at?: number; extra?: Record<string, string> },
): void {
  const at = options.at ?? Date.UTC(2026, 2, 1);
  const agent = tracer.startSpan('invoke_agent weather', {
    startTime: at,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'weather',
      'gen_ai.conversation.id': options.conversationId,
    },
  });
  agent.setAttributes(options.extra ?? {});
  const chat1 = child(tracer, agent, 'chat gpt-4o-mini', at + 10, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.provider.name': 'openai',
    'gen_ai.conversation.id': options.conversationId,
    'gen_ai.input.messages': JSON.stringify([
      { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
    ]),
    'gen_ai.output.messages': JSON.stringify([
      {
        role: 'assistant',
        parts: [
          { type: 'tool_call', id: 'call-1', name: 'get_weather', arguments: { city: 'Paris' } },
        ],
      },
    ]),
    'gen_ai.usage.input_tokens': 120,
    'gen_ai.usage.output_tokens': 30,
    ...options.extra,
  });
  chat1.end(at + 100);
  const tool = child(tracer, agent, 'execute_tool get_weather', at + 110, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'get_weather',
    'gen_ai.tool.call.id': 'call-1',
    'gen_ai.tool.call.arguments': '{"city":"Paris"}',
    'gen_ai.tool.call.result': '{"temperature":21}',
  });
  tool.end(at + 150);
  const chat2 = child(tracer, agent, 'chat gpt-4o-mini', at + 160, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'gpt-4o-mini',
    'gen_ai.input.messages': JSON.stringify([
      {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: 'call-1', response: { temperature: 21 } }],
      },
    ]),
    'gen_ai.output.messages': JSON.stringify([
      { role: 'assistant', parts: [{ type: 'text', content: 'It is 21°C in Paris.' }] },
    ]),
    'gen_ai.usage.input_tokens': 200,
    'gen_ai.usage.output_tokens': 12,
  });
  chat2.end(at + 300);
  // A span of no GenAI operation (an HTTP client call): ignored, and counted as such.
  child(tracer, agent, 'GET /forecast', at + 301, { 'http.request.method': 'GET' }).end(at + 310);
  if (options.fail) agent.setStatus({ code: SpanStatusCode.ERROR, message: 'tool quota exceeded' });
  agent.end(at + 400);
}
