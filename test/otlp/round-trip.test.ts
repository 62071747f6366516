/**
 * Spans in → Weft → spans out: an agent turn exported by the OTel SDK into Weft comes back out of
 * Weft's own tracing (OTel SDK, OTLP/HTTP JSON) to a local OTLP receiver started here, with the
 * same names, times, usage and parentage; Weft's requests are traced too. Both backends. Without
 * the OTel endpoint variables tracing is off.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTracing, type Tracing } from '../../src/server/tracing.js';
import { createTestApp, type TestApp } from '../api/support.js';
import { describeWithPostgres } from '../support/services.js';
import { baseOf, emitAgentTurn, otlpClient } from './support.js';

interface SeenSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  status?: { code?: number; message?: string };
}

/** A local OTLP/HTTP JSON receiver that keeps every span it is sent. */
async function localReceiver(): Promise<{ server: Server; base: string; spans: SeenSpan[] }> {
  const spans: SeenSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            const attributes: Record<string, unknown> = {};
            for (const kv of s.attributes ?? []) {
              const v = kv.value;
              attributes[kv.key] = v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue;
            }
            spans.push({
              ...s,
              startTimeUnixNano: String(s.startTimeUnixNano),
              endTimeUnixNano: String(s.endTimeUnixNano),
              attributes,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, base: `http://127.0.0.1:${port}`, spans };
}

const ms = (at: number) => (BigInt(at) * 1_000_000n).toString();

function roundTripSuite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  let tracing: Tracing;
  let receiver: Awaited<ReturnType<typeof localReceiver>>;
  beforeAll(async () => {
    receiver = await localReceiver();
    tracing = (await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.base }))!;
    t = await createTestApp({
      backend,
      tracing,
      engine: { publisher: { publish: (event) => tracing.committed(event) } },
    });
    tracing.attach(t.engine);
    await t.app.start();
  });
  afterAll(async () => {
    await t?.close();
    await tracing?.shutdown();
    receiver?.server.close();
  });

  it('sends an ingested agent turn back out with its names, times, usage and parentage', async () => {
    const at = Date.UTC(2026, 5, 1, 12);
    const client = otlpClient(baseOf(t.app.url!), { encoding: 'protobuf' });
    emitAgentTurn(client.tracer, { conversationId: `round-trip-${backend}`, at });
    await client.close();

    let spans: SeenSpan[] = [];
    await vi.waitFor(
      async () => {
        await tracing.flush();
        const run = receiver.spans.find(
          (s) => s.attributes['gen_ai.conversation.id'] === `round-trip-${backend}`,
        );
        spans = receiver.spans.filter((s) => s.traceId === run?.traceId);
        expect(spans).toHaveLength(4);
      },
      { timeout: 10_000, interval: 20 },
    );
    const root = spans.find((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent')!;
    expect(root).toMatchObject({
      name: 'invoke_agent weather',
      startTimeUnixNano: ms(at),
      endTimeUnixNano: ms(at + 400),
      attributes: { 'gen_ai.agent.name': 'weather' },
    });
    expect(root.parentSpanId ?? '').toBe('');
    const children = spans
      .filter((s) => s !== root)
      .sort((a, b) => (BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano) ? -1 : 1));
    expect(
      children.map((s) => [
        s.name,
        s.startTimeUnixNano,
        s.endTimeUnixNano,
        s.parentSpanId,
        s.traceId,
      ]),
    ).toEqual([
      ['chat gpt-4o-mini', ms(at + 10), ms(at + 100), root.spanId, root.traceId],
      ['execute_tool get_weather', ms(at + 110), ms(at + 150), root.spanId, root.traceId],
      ['chat gpt-4o-mini', ms(at + 160), ms(at + 300), root.spanId, root.traceId],
    ]);
    expect(
      children.map((s) => [
        s.attributes['gen_ai.usage.input_tokens'],
        s.attributes['gen_ai.usage.output_tokens'],
      ]),
    ).toEqual([
      [120, 30],
      [undefined, undefined],
      [200, 12],
    ]);
    expect(children[1]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'call-1',
      'gen_ai.tool.call.result': '{"temperature":21}',
    });
    // Weft's own request spans: the export it received.
    expect(
      receiver.spans.some(
        (s) => s.name === 'POST /v1/traces' && s.attributes['http.response.status_code'] === 200,
      ),
    ).toBe(true);
  });
}

describe('tracing off', () => {
  it('loads nothing without an OTLP endpoint', async () => {
    expect(await startTracing({})).toBeUndefined();
    expect(await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeUndefined();
  });
});
describe('OTLP round trip on SQLite', () => roundTripSuite('sqlite'));
describeWithPostgres('OTLP round trip on Postgres', () => roundTripSuite('postgres'));
