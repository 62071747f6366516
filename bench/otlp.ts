/**
 * `npm run bench -- otlp [--batches=200]`: GenAI spans ingested per second through the OTLP
 * receiver's path — protobuf decoding, mapping, the payload bound, the look-ups of spans already written and
 * the engine's commands (src/otlp, as POST /v1/traces runs it, without the HTTP hop) — against
 * the same content written straight through the engine's commands, on a fresh SQLite file each.
 * Target: at least 80% of the direct rate. Two workloads, each batch a new conversation:
 *
 * - conversation spans: 16 chat spans per batch (no agent span): one `appendNodes` per batch,
 *   the baseline that same `appendNodes`;
 * - agent turns: 4 agent turns of 1 `invoke_agent`, 6 `chat` and 5 `execute_tool` spans per
 *   batch (48 spans): the baseline is the same `createThread`, `startRun`, `appendNodes` and
 *   `dispatch` (`set_status`) commands.
 *
 * The spans are made by the OTel SDK and serialised by its protobuf serialiser before timing.
 * Each side runs three times, alternating, and its best round counts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { context, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Engine } from '../src/engine/index.js';
import { openEngine } from '../src/engine/index.js';
import { checkPlanBounds, ingestPlan, nodeInputsOf } from '../src/otlp/ingest.js';
import { type IngestPlan, planIngest } from '../src/otlp/mapping.js';
import { decodeTraceRequest } from '../src/otlp/proto.js';
import { spansOfRequest } from '../src/otlp/request.js';
import { DEFAULT_OTLP_LIMITS } from '../src/otlp/spans.js';

const TARGET = 0.8;
const ROUNDS = 3;
const MAX_PAYLOAD = 1_048_576;

const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.split('=')[1]);
};

const messages = (role: string, text: string) =>
  JSON.stringify([{ role, parts: [{ type: 'text', content: text }] }]);

/** One batch of spans, as an instrumented agent's exporter would send them. */
function batchSpans(batch: number, agents: boolean): ReadableSpan[] {
  const spans: ReadableSpan[] = [];
  const provider = new BasicTracerProvider({
    spanProcessors: [
      {
        onStart: () => undefined,
        onEnd: (s: ReadableSpan) => {
          spans.push(s);
        },
        forceFlush: async () => undefined,
        shutdown: async () => undefined,
      },
    ],
  });
  const tracer = provider.getTracer('bench');
  const conversation = `bench-${agents ? 'agent' : 'chat'}-${batch}`;
  const at = Date.UTC(2026, 0, 1) + batch * 10_000;
  const chat = (i: number, parent: ReturnType<typeof tracer.startSpan> | undefined) => {
    const ctx = parent === undefined ? context.active() : trace.setSpan(context.active(), parent);
    const span = tracer.startSpan(
      'chat gpt-4o-mini',
      {
        startTime: at + i * 10,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.conversation.id': conversation,
          'gen_ai.input.messages': messages('user', `question ${i} of batch ${batch}`),
          'gen_ai.output.messages': messages(
            'assistant',
            `answer ${i}: ${'lorem ipsum '.repeat(8)}`,
          ),
          'gen_ai.usage.input_tokens': 100 + i,
          'gen_ai.usage.output_tokens': 20 + i,
        },
      },
      ctx,
    );
    span.end(at + i * 10 + 5);
  };
  if (!agents) {
    for (let i = 0; i < 16; i++) chat(i, undefined);
    return spans;
  }
  for (let a = 0; a < 4; a++) {
    const agent = tracer.startSpan('invoke_agent bench', {
      startTime: at + a * 1000,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'bench',
        'gen_ai.conversation.id': conversation,
      },
    });
    for (let i = 0; i < 6; i++) {
      chat(a * 100 + i * 2, agent);
      if (i === 5) continue;
      const tool = tracer.startSpan(
        'execute_tool lookup',
        {
          startTime: at + a * 100 + i * 2 + 1,
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': 'lookup',
            'gen_ai.tool.call.id': `call-${a}-${i}`,
            'gen_ai.tool.call.arguments': JSON.stringify({ q: `query ${i}` }),
            'gen_ai.tool.call.result': JSON.stringify({ hits: [i, i + 1, i + 2] }),
          },
        },
        trace.setSpan(context.active(), agent),
      );
      tool.end(at + a * 100 + i * 2 + 2);
    }
    agent.end(at + a * 1000 + 900);
  }
  return spans;
}

async function withEngine<T>(run: (engine: Engine) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-otlp-bench-'));
  const engine = await openEngine(`file:${join(dir, 'bench.db')}`);
  try {
    return await run(engine);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The receiver's path, without HTTP: decode, map, bound, write. */
async function throughOtlp(engine: Engine, bodies: Uint8Array[]): Promise<number> {
  const started = performance.now();
  for (const body of bodies) {
    const spans = spansOfRequest(decodeTraceRequest(body), 'base64', DEFAULT_OTLP_LIMITS);
    const plan = planIngest(spans);
    checkPlanBounds(plan, MAX_PAYLOAD);
    await ingestPlan(engine, plan);
  }
  return performance.now() - started;
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/** The same content through the engine's commands, planned ahead as a client would. */
async function direct(engine: Engine, plans: IngestPlan[]): Promise<number> {
  const started = performance.now();
  for (const plan of plans) {
    for (const thread of plan.threads) {
      must(await engine.createThread({ threadId: thread.threadId }));
      for (const run of thread.runs) {
        must(
          await engine.startRun({
            threadId: thread.threadId,
            runId: run.runId,
            goal: run.goal,
            memory: run.memory,
          }),
        );
      }
      const state = must(await engine.getState(thread.threadId));
      must(
        await engine.appendNodes({ threadId: thread.threadId, nodes: nodeInputsOf(thread, state) }),
      );
      for (const run of thread.runs) {
        must(
          await engine.dispatch({
            threadId: thread.threadId,
            runId: run.runId,
            action: { type: 'set_status', payload: { status: run.status } },
          }),
        );
      }
    }
  }
  return performance.now() - started;
}

async function workload(name: string, agents: boolean, batches: number): Promise<number> {
  const spanLists = Array.from({ length: batches }, (_, b) => batchSpans(b, agents));
  const bodies = spanLists.map((spans) => ProtobufTraceSerializer.serializeRequest(spans)!);
  const plans = bodies.map((body) =>
    planIngest(spansOfRequest(decodeTraceRequest(body), 'base64', DEFAULT_OTLP_LIMITS)),
  );
  const spans = spanLists.reduce((n, list) => n + list.length, 0);
  let otlp = Number.POSITIVE_INFINITY;
  let baseline = Number.POSITIVE_INFINITY;
  for (let round = 0; round < ROUNDS; round++) {
    baseline = Math.min(baseline, await withEngine((engine) => direct(engine, plans)));
    otlp = Math.min(otlp, await withEngine((engine) => throughOtlp(engine, bodies)));
  }
  const perSecond = (ms: number) => Math.round((spans / ms) * 1000);
  const ratio = baseline / otlp;
  console.log(
    `  ${name.padEnd(20)} ${String(spans).padStart(6)} spans  OTLP ${String(perSecond(otlp)).padStart(6)} spans/s  ` +
      `direct ${String(perSecond(baseline)).padStart(6)} spans/s  ratio ${(ratio * 100).toFixed(0)}% ` +
      `(target ≥ ${TARGET * 100}%: ${ratio >= TARGET ? 'met' : 'NOT met'})`,
  );
  return ratio;
}

export async function runOtlpBench(): Promise<void> {
  const batches = arg('batches', 200);
  console.log(
    `\nOTLP ingest (SQLite, ${batches} batches per workload, spans/s of the best of ${ROUNDS} rounds)`,
  );
  await workload('conversation spans', false, batches);
  await workload('agent turns', true, batches);
}
