/**
 * GenAI spans to Weft data: which thread, run and causal nodes each span becomes. Pure: the plan
 * names what to write; ingest.ts writes it through the engine. Follows the OpenTelemetry GenAI
 * semantic conventions as of semconv 1.37 (pinned; the conventions are marked Development), plus
 * the Vercel AI SDK's own `ai.*` spans (docs/opentelemetry.md has the table).
 */
import { canonicalJson } from '../core/canonical.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import type { NodeUsage } from '../core/thread/index.js';
import { checkNewThreadId } from '../engine/checks.js';
import { type AttributeValue, OtlpInputError, type OtlpSpan } from './spans.js';

/** The semantic-conventions version the mapping implements. */
export const GENAI_SEMCONV_VERSION = '1.37.0';

export type Operation = 'invoke_agent' | 'chat' | 'execute_tool';

/** What a node or run keeps of its span, enough to emit it again. */
export interface SpanRecord extends JsonObject {
  traceId: string;
  spanId: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

export interface PlannedRun {
  runId: string;
  traceId: string;
  spanId: string;
  goal: string;
  status: 'completed' | 'failed';
  error?: string;
  memory: JsonObject;
}

export interface PlannedNode {
  traceId: string;
  spanId: string;
  /** `otel:<traceId>:<spanId>`: how a later batch finds the node of a span. */
  resourceKey: string;
  kind: 'inference' | 'tool_call';
  payload: JsonObject;
  usage?: NodeUsage;
  /** The nearest mapped ancestor in this request, or the first ancestor outside it. */
  parent?: { spanId: string; inBatch: boolean; isRun: boolean };
  /** The run span above it in this request, or its parent span outside it (maybe a run). */
  runSpan?: { spanId: string; inBatch: boolean };
  /** An `execute_tool` span's result node, parented on its call. */
  result?: { resourceKey: string; payload: JsonObject };
}

export interface ThreadPlan {
  threadId: string;
  runs: PlannedRun[];
  /** Parents before children, then by start time. */
  nodes: PlannedNode[];
}

export interface IngestPlan {
  threads: ThreadPlan[];
  /** Spans that became Weft data. */
  accepted: number;
  /** Spans without GenAI attributes (or of an operation Weft does not map): not written. */
  ignored: number;
}

export const runIdOf = (traceId: string, spanId: string): string => `otel-${traceId}-${spanId}`;
export const spanKeyOf = (traceId: string, spanId: string): string => `otel:${traceId}:${spanId}`;

const CHAT_OPERATIONS: ReadonlySet<string> = new Set([
  'chat',
  'generate_content',
  'text_completion',
]);
const AI_SDK_CALLS: ReadonlySet<string> = new Set([
  'ai.generateText',
  'ai.streamText',
  'ai.generateObject',
  'ai.streamObject',
]);

/** The operation a span stands for, by `gen_ai.operation.name` or the AI SDK's `ai.operationId`. */
export function operationOf(span: OtlpSpan): Operation | undefined {
  const op = span.attributes['gen_ai.operation.name'];
  if (op === 'invoke_agent' || op === 'execute_tool') return op;
  if (typeof op === 'string' && CHAT_OPERATIONS.has(op)) return 'chat';
  const aiOp = span.attributes['ai.operationId'];
  if (typeof aiOp !== 'string') return undefined;
  if (AI_SDK_CALLS.has(aiOp)) return 'invoke_agent';
  if (aiOp.endsWith('.doGenerate') || aiOp.endsWith('.doStream')) return 'chat';
  if (aiOp === 'ai.toolCall') return 'execute_tool';
  return undefined;
}

const text = (v: AttributeValue | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;
const count = (v: AttributeValue | undefined): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;

/** A JSON-encoded attribute (messages, arguments) parsed; left as text when it is not JSON. */
function parsed(v: AttributeValue | undefined): JsonValue | undefined {
  if (typeof v !== 'string') return v ?? undefined;
  try {
    return JSON.parse(v) as JsonValue;
  } catch {
    return v;
  }
}

function conversationOf(span: OtlpSpan): string | undefined {
  return (
    text(span.attributes['gen_ai.conversation.id']) ??
    text(span.attributes['ai.telemetry.metadata.conversationId'])
  );
}

export function spanRecordOf(span: OtlpSpan): SpanRecord {
  const record: SpanRecord = {
    traceId: span.traceId,
    spanId: span.spanId,
    name: span.name,
    startTimeUnixNano: span.startTimeUnixNano,
    endTimeUnixNano: span.endTimeUnixNano,
  };
  if (span.parentSpanId !== undefined) record.parentSpanId = span.parentSpanId;
  if (span.status.code !== 0) record.status = { ...span.status };
  const service = text(span.resource['service.name']);
  if (service !== undefined) record.service = service;
  return record;
}

/** Messages in the conventions' shape: `{role, parts: [{type, content | …}]}`. */
function messagesOf(value: JsonValue | undefined): JsonValue | undefined {
  if (!Array.isArray(value)) return value;
  return value.map((m) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m) || 'parts' in m) return m;
    const { role, content } = m as { role?: JsonValue; content?: JsonValue };
    const parts = typeof content === 'string' ? [{ type: 'text', content }] : aiSdkParts(content);
    return { role: role ?? null, parts };
  });
}

/** The AI SDK's content parts as the conventions' parts. */
function aiSdkParts(content: JsonValue | undefined): JsonValue {
  if (!Array.isArray(content)) return content ?? [];
  return content.map((p) => {
    if (typeof p !== 'object' || p === null || Array.isArray(p)) return p;
    if (p.type === 'text') return { type: 'text', content: p.text ?? null };
    // `ai.response.toolCalls` lists calls without a `type`.
    if (p.type === 'tool-call' || (p.type === undefined && p.toolName !== undefined)) {
      return {
        type: 'tool_call',
        id: p.toolCallId ?? null,
        name: p.toolName ?? null,
        arguments: parsed(p.input ?? p.args) ?? null,
      };
    }
    if (p.type === 'tool-result') {
      return { type: 'tool_call_response', id: p.toolCallId ?? null, response: p.output ?? null };
    }
    return p;
  });
}

/** The AI SDK's response (text and tool calls) as one output message. */
function aiSdkOutput(span: OtlpSpan): JsonValue | undefined {
  const reply = text(span.attributes['ai.response.text']);
  const calls = parsed(span.attributes['ai.response.toolCalls']);
  if (reply === undefined && calls === undefined) return undefined;
  const parts: JsonValue[] = [];
  if (reply !== undefined) parts.push({ type: 'text', content: reply });
  if (Array.isArray(calls)) parts.push(...(aiSdkParts(calls) as JsonValue[]));
  return [{ role: 'assistant', parts }];
}

function defined(entries: Record<string, JsonValue | undefined>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(entries)) if (v !== undefined) out[k] = v;
  return out;
}

function chatNode(span: OtlpSpan): Omit<PlannedNode, 'parent' | 'runSpan'> {
  const a = span.attributes;
  const model = text(a['gen_ai.response.model']) ?? text(a['gen_ai.request.model']) ?? 'unknown';
  const payload = defined({
    operation: text(a['gen_ai.operation.name']) ?? 'chat',
    model,
    provider: text(a['gen_ai.provider.name']) ?? text(a['gen_ai.system']),
    systemInstructions: parsed(a['gen_ai.system_instructions']),
    input: messagesOf(parsed(a['gen_ai.input.messages'] ?? a['ai.prompt.messages'])),
    output: messagesOf(parsed(a['gen_ai.output.messages'])) ?? aiSdkOutput(span),
    finishReasons: a['gen_ai.response.finish_reasons'] ?? undefined,
    responseId: text(a['gen_ai.response.id']),
    span: spanRecordOf(span),
  });
  const input = count(a['gen_ai.usage.input_tokens']);
  const output = count(a['gen_ai.usage.output_tokens']);
  const node: Omit<PlannedNode, 'parent' | 'runSpan'> = {
    traceId: span.traceId,
    spanId: span.spanId,
    resourceKey: spanKeyOf(span.traceId, span.spanId),
    kind: 'inference',
    payload,
  };
  if (input !== undefined || output !== undefined) {
    node.usage = { model, inputTokens: input ?? 0, outputTokens: output ?? 0 };
  }
  return node;
}

function toolNodes(span: OtlpSpan): Omit<PlannedNode, 'parent' | 'runSpan'> {
  const a = span.attributes;
  const name = text(a['gen_ai.tool.name']) ?? text(a['ai.toolCall.name']) ?? span.name;
  const callId = text(a['gen_ai.tool.call.id']) ?? text(a['ai.toolCall.id']);
  const key = spanKeyOf(span.traceId, span.spanId);
  const failed = span.status.code === 2;
  return {
    traceId: span.traceId,
    spanId: span.spanId,
    resourceKey: key,
    kind: 'tool_call',
    payload: defined({
      operation: 'execute_tool',
      name,
      callId,
      type: text(a['gen_ai.tool.type']),
      arguments: parsed(a['gen_ai.tool.call.arguments'] ?? a['ai.toolCall.args']),
      span: spanRecordOf(span),
    }),
    result: {
      resourceKey: `${key}:result`,
      payload: defined({
        name,
        callId,
        result: parsed(a['gen_ai.tool.call.result'] ?? a['ai.toolCall.result']),
        error: failed ? (span.status.message ?? 'the tool failed') : undefined,
        span: { traceId: span.traceId, spanId: span.spanId },
      }),
    },
  };
}

function runOf(span: OtlpSpan): PlannedRun {
  const a = span.attributes;
  const failed = span.status.code === 2;
  const run: PlannedRun = {
    runId: runIdOf(span.traceId, span.spanId),
    traceId: span.traceId,
    spanId: span.spanId,
    goal:
      text(a['gen_ai.agent.name'])?.trim() ||
      text(a['ai.telemetry.functionId'])?.trim() ||
      span.name.trim() ||
      'invoke_agent',
    status: failed ? 'failed' : 'completed',
    memory: { otel_span: spanRecordOf(span) },
  };
  if (failed) run.error = span.status.message ?? 'the agent span ended with status ERROR';
  return run;
}

/** The thread of each mapped span: its conversation id, else its trace's, else one per trace. */
function threadsOf(mapped: readonly OtlpSpan[]): Map<OtlpSpan, string> {
  const byTrace = new Map<string, string>();
  for (const span of mapped) {
    const id = conversationOf(span);
    if (id !== undefined && !byTrace.has(span.traceId)) byTrace.set(span.traceId, id);
  }
  const out = new Map<OtlpSpan, string>();
  for (const span of mapped) {
    const id = conversationOf(span) ?? byTrace.get(span.traceId) ?? `otel-trace-${span.traceId}`;
    const checked = checkNewThreadId(id, 'gen_ai.conversation.id');
    if (!checked.ok) {
      throw new OtlpInputError(
        `span ${span.spanId}: ${checked.error.message} (the conversation id names a Weft thread)`,
      );
    }
    out.set(span, id);
  }
  return out;
}

const byStart = (a: OtlpSpan, b: OtlpSpan): number => {
  const d = BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
};

/**
 * The plan for one export request's spans. Pure. Spans without a mapped operation are counted
 * as ignored. Within a thread, a span's node comes after its parent span's, else by start time.
 */
export function planIngest(spans: readonly OtlpSpan[]): IngestPlan {
  const ops = new Map<OtlpSpan, Operation>();
  for (const span of spans) {
    const op = operationOf(span);
    if (op !== undefined) ops.set(span, op);
  }
  const mapped = [...ops.keys()].sort(byStart);
  const threadOf = threadsOf(mapped);
  const all = new Map(spans.map((s) => [`${s.traceId}:${s.spanId}`, s]));
  const threads = new Map<string, ThreadPlan>();
  const placed = new Set<OtlpSpan>();
  const place = (span: OtlpSpan, visiting: Set<OtlpSpan>) => {
    if (placed.has(span) || visiting.has(span)) return;
    visiting.add(span);
    const up = ancestorsOf(span, all, ops);
    if (up.parent?.inBatch) place(all.get(`${span.traceId}:${up.parent.spanId}`)!, visiting);
    placed.add(span);
    const threadId = threadOf.get(span)!;
    let plan = threads.get(threadId);
    if (plan === undefined) {
      plan = { threadId, runs: [], nodes: [] };
      threads.set(threadId, plan);
    }
    const op = ops.get(span)!;
    if (op === 'invoke_agent') {
      plan.runs.push(runOf(span));
      return;
    }
    const node: PlannedNode = op === 'chat' ? chatNode(span) : toolNodes(span);
    if (up.parent !== undefined) node.parent = up.parent;
    if (up.runSpan !== undefined) node.runSpan = up.runSpan;
    plan.nodes.push(node);
  };
  for (const span of mapped) place(span, new Set());
  return {
    threads: [...threads.values()],
    accepted: mapped.length,
    ignored: spans.length - mapped.length,
  };
}

/** The nearest mapped ancestor and run ancestor of `span` in the request (or where it leaves it). */
function ancestorsOf(
  span: OtlpSpan,
  all: ReadonlyMap<string, OtlpSpan>,
  ops: ReadonlyMap<OtlpSpan, Operation>,
): Pick<PlannedNode, 'parent' | 'runSpan'> {
  const out: Pick<PlannedNode, 'parent' | 'runSpan'> = {};
  const seen = new Set<string>();
  let id = span.parentSpanId;
  while (id !== undefined && !seen.has(id)) {
    seen.add(id);
    const up = all.get(`${span.traceId}:${id}`);
    if (up === undefined) {
      out.parent ??= { spanId: id, inBatch: false, isRun: false };
      out.runSpan ??= { spanId: id, inBatch: false };
      return out;
    }
    const op = ops.get(up);
    if (op !== undefined)
      out.parent ??= { spanId: id, inBatch: true, isRun: op === 'invoke_agent' };
    if (op === 'invoke_agent') {
      out.runSpan = { spanId: id, inBatch: true };
      return out;
    }
    id = up.parentSpanId;
  }
  return out;
}

/** The canonical size of a planned payload, for the per-payload bound. */
export const payloadSize = (payload: JsonValue): number =>
  Buffer.byteLength(canonicalJson(payload), 'utf8');
