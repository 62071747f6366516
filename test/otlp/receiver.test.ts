/**
 * The OTLP/HTTP receiver with the OTel JS SDK's own exporters (JSON and protobuf, gzip) on both
 * backends: GenAI spans become a thread, a run with its status and spend by model, and inference,
 * tool call and tool result nodes parented as the spans were; a re-sent batch writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../api/support.js';
import { describeWithPostgres } from '../support/services.js';
import { baseOf, emitAgentTurn, otlpClient } from './support.js';

const THREAD = `{ thread(id: $id) { logLength
  nodes(first: 50) { edges { node { id kind payload parents { id kind } run { id } } } } } }`;

function receiverSuite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({ backend });
    base = baseOf(await t.app.start());
  });
  afterAll(() => t?.close());

  const read = async (id: string) => {
    const answer = await t.gql(`query ($id: ID!) ${THREAD}`, { id });
    expect(answer.errors).toBeUndefined();
    return answer.data.thread;
  };

  for (const [encoding, gzip] of [
    ['json', false],
    ['protobuf', false],
    ['protobuf', true],
    ['json', true],
  ] as const) {
    it(`maps an agent turn sent as ${encoding}${gzip ? ' (gzip)' : ''}`, async () => {
      const id = `conv-${encoding}-${gzip}`;
      const client = otlpClient(base, { encoding, gzip });
      emitAgentTurn(client.tracer, { conversationId: id });
      await client.flush();
      await client.close();
      const thread = await read(id);
      // biome-ignore lint/suspicious/noExplicitAny: the test reads the answer loosely
      const nodes = thread.nodes.edges.map((e: { node: any }) => e.node);
      expect(nodes.map((n: { kind: string }) => n.kind)).toEqual([
        'GOAL',
        'INFERENCE',
        'TOOL_CALL',
        'TOOL_RESULT',
        'INFERENCE',
      ]);
      const [goal, chat1, call, result, chat2] = nodes;
      expect(goal.payload).toMatchObject({ goal: 'weather' });
      expect(chat1.payload).toMatchObject({
        operation: 'chat',
        model: 'gpt-4o-mini',
        provider: 'openai',
        input: [{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }],
        span: { name: 'chat gpt-4o-mini', startTimeUnixNano: '1772323200010000000' },
      });
      expect(chat2.payload.output).toEqual([
        { role: 'assistant', parts: [{ type: 'text', content: 'It is 21°C in Paris.' }] },
      ]);
      expect(call.payload).toMatchObject({
        name: 'get_weather',
        callId: 'call-1',
        arguments: { city: 'Paris' },
      });
      expect(result.payload).toMatchObject({ callId: 'call-1', result: { temperature: 21 } });
      // Parent spans are causal parents: the agent's run (its goal) for its children.
      for (const n of [chat1, call, chat2])
        expect(n.parents).toEqual([{ id: goal.id, kind: 'GOAL' }]);
      expect(result.parents).toEqual([{ id: call.id, kind: 'TOOL_CALL' }]);
      const runId = goal.run.id;
      for (const n of nodes) expect(n.run).toEqual({ id: runId });
      const run = await t.gql(
        `query ($id: ID!) { run(id: $id) { status goal spend { inputTokens outputTokens calls }
          modelBreakdown { key spend { inputTokens outputTokens } } } }`,
        { id: runId },
      );
      expect(run.data.run).toMatchObject({
        status: 'COMPLETED',
        spend: { inputTokens: 320, outputTokens: 42 },
        modelBreakdown: [{ key: 'gpt-4o-mini', spend: { inputTokens: 320, outputTokens: 42 } }],
      });
    });
  }

  it('takes a failed agent span as a failed run', async () => {
    const client = otlpClient(base);
    emitAgentTurn(client.tracer, { conversationId: 'conv-failed', fail: true });
    await client.close();
    const thread = await read('conv-failed');
    const runId = thread.nodes.edges[0].node.run.id;
    const run = await t.gql('query ($id: ID!) { run(id: $id) { status lastError } }', {
      id: runId,
    });
    expect(run.data.run).toEqual({ status: 'FAILED', lastError: 'tool quota exceeded' });
  });

  it('writes nothing for a batch sent again, and counts the spans it ignores', async () => {
    const bodies: unknown[] = [];
    // The same spans, exported twice: a retried export.
    const spans: unknown[] = [];
    const processor = {
      onStart() {},
      onEnd(span: unknown) {
        spans.push(span);
      },
      forceFlush: async () => undefined,
      shutdown: async () => undefined,
    };
    const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
    const { JsonTraceSerializer } = await import('@opentelemetry/otlp-transformer');
    const provider = new BasicTracerProvider({ spanProcessors: [processor as never] });
    emitAgentTurn(provider.getTracer('t'), { conversationId: 'conv-again' });
    const body = JsonTraceSerializer.serializeRequest(spans as never)!;
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${base}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(body),
      });
      expect(response.status).toBe(200);
      bodies.push(await response.json());
    }
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[0]).toMatchObject({ partialSuccess: { rejectedSpans: 1 } });
    // Two copies racing (an exporter's retry overtaking its first try): written once.
    spans.length = 0;
    emitAgentTurn(provider.getTracer('t'), { conversationId: 'conv-raced' });
    const twin = Buffer.from(JsonTraceSerializer.serializeRequest(spans as never)!);
    const both = await Promise.all(
      [twin, twin].map((text) =>
        fetch(`${base}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: text,
        }),
      ),
    );
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    const racedThread = await read('conv-raced');
    expect(racedThread.logLength).toBe(4);
    expect(racedThread.nodes.edges).toHaveLength(5);
    const thread = await read('conv-again');
    // thread created, run started, nodes appended, run finished: and nothing more the 2nd time.
    expect(thread.logLength).toBe(4);
    expect(thread.nodes.edges).toHaveLength(5);
  });
}

describe('OTLP receiver on SQLite', () => receiverSuite('sqlite'));
describeWithPostgres('OTLP receiver on Postgres', () => receiverSuite('postgres'));
