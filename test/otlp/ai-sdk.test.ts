/**
 * The Vercel AI SDK's telemetry (`ai` with its test model, experimental_telemetry on an OTel SDK
 * tracer exporting OTLP/HTTP) pointed at a real Weft server: the conversation reads back through
 * GraphQL as message nodes, with the call's usage as the run's spend, on both backends.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTestApp, type TestApp } from '../api/support.js';
import { describeWithPostgres } from '../support/services.js';
import { baseOf, otlpClient } from './support.js';

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** A model that first calls the weather tool, then answers. */
function weatherModel() {
  let step = 0;
  return new MockLanguageModelV3({
    modelId: 'mock-weather',
    doGenerate: async () => {
      step++;
      if (step === 1) {
        return {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'call-1',
              toolName: 'weather',
              input: '{"city":"Paris"}',
            },
          ],
          finishReason: { unified: 'tool-calls', raw: undefined },
          usage: usage(50, 10),
          warnings: [],
        };
      }
      return {
        content: [{ type: 'text', text: 'It is 21°C in Paris.' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: usage(80, 8),
        warnings: [],
      };
    },
  });
}

function aiSdkSuite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    // The AI SDK parents its spans through the active context, as an instrumented app would.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    t = await createTestApp({ backend });
    base = baseOf(await t.app.start());
  });
  afterAll(async () => {
    context.disable();
    await t?.close();
  });

  it('stores a generateText conversation with a tool call as message nodes', async () => {
    const client = otlpClient(base, { encoding: 'protobuf' });
    const result = await generateText({
      model: weatherModel(),
      prompt: 'Weather in Paris?',
      tools: {
        weather: tool({
          description: 'The weather in a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => ({ city, temperature: 21 }),
        }),
      },
      stopWhen: stepCountIs(2),
      experimental_telemetry: {
        isEnabled: true,
        tracer: client.tracer,
        functionId: 'weather-agent',
        metadata: { conversationId: `ai-sdk-${backend}` },
      },
    });
    expect(result.text).toBe('It is 21°C in Paris.');
    await client.flush();
    await client.close();

    const answer = await t.gql(
      `query ($id: ID!) { thread(id: $id) { nodes(first: 20) { edges { node { kind payload
        parents { kind } run { id status spend { inputTokens outputTokens } } } } } } }`,
      { id: `ai-sdk-${backend}` },
    );
    expect(answer.errors).toBeUndefined();
    // biome-ignore lint/suspicious/noExplicitAny: the test reads the answer loosely
    const nodes = answer.data.thread.nodes.edges.map((e: { node: any }) => e.node);
    expect(nodes.map((n: { kind: string }) => n.kind)).toEqual([
      'GOAL',
      'INFERENCE',
      'TOOL_CALL',
      'TOOL_RESULT',
      'INFERENCE',
    ]);
    const [goal, ask, call, result2, reply] = nodes;
    expect(goal.payload).toMatchObject({ goal: 'weather-agent' });
    expect(ask.payload.input).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
    ]);
    expect(ask.payload.output).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call-1', name: 'weather', arguments: { city: 'Paris' } }],
      },
    ]);
    expect(call.payload).toMatchObject({
      name: 'weather',
      callId: 'call-1',
      arguments: { city: 'Paris' },
    });
    expect(result2.payload).toMatchObject({ result: { city: 'Paris', temperature: 21 } });
    expect(reply.payload.output).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'It is 21°C in Paris.' }] },
    ]);
    expect(reply.run).toMatchObject({
      status: 'COMPLETED',
      spend: { inputTokens: 130, outputTokens: 18 },
    });
  });
}

describe('AI SDK telemetry into Weft on SQLite', () => aiSdkSuite('sqlite'));
describeWithPostgres('AI SDK telemetry into Weft on Postgres', () => aiSdkSuite('postgres'));
