/**
 * A run as a span tree under the GenAI conventions mapping.ts reads, so that what came in as
 * spans goes out as the same spans (names, times, usage, parentage): the run is the
 * `invoke_agent` span, each inference node a `chat` span, each tool call (with its result) an
 * `execute_tool` span. A node's span hangs under the span of its first causal parent that has
 * one, else under the run. Times are the ingested span's when the data came from OTLP, else the
 * run's and nodes' own. Pure.
 */
import type { CausalNode } from '../core/graph/index.js';
import { getChildren, getNode, getNodeBySequence } from '../core/graph/index.js';
import type { JsonObject, JsonValue } from '../core/json.js';
import type { ThreadState } from '../core/thread/index.js';
import { vecGet } from '../core/thread/vec.js';

export type SpanAttributes = Record<string, string | number | boolean>;

export interface RunSpan {
  /** Unique within the tree; `parent` names another span's key. */
  key: string;
  parent?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: SpanAttributes;
  error?: string;
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const nanosOfIso = (iso: string): string => (BigInt(Date.parse(iso)) * 1_000_000n).toString();

/** The ingested span a payload or memory recorded, if any. */
function recorded(value: JsonValue | undefined): JsonObject | undefined {
  return isObject(value) && typeof value.startTimeUnixNano === 'string' ? value : undefined;
}

function timesOf(span: JsonObject | undefined, fallbackIso: string): [string, string] {
  if (span !== undefined && typeof span.endTimeUnixNano === 'string') {
    return [span.startTimeUnixNano as string, span.endTimeUnixNano];
  }
  const at = nanosOfIso(fallbackIso);
  return [at, at];
}

const json = (v: JsonValue | undefined): string | undefined =>
  v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v);

function put(attributes: SpanAttributes, key: string, value: string | number | undefined): void {
  if (value !== undefined) attributes[key] = value;
}

function chatSpan(node: CausalNode, state: ThreadState, parent: string): RunSpan {
  const payload = isObject(node.payload) ? node.payload : {};
  const span = recorded(payload.span);
  const [start, end] = timesOf(span, node.createdAt);
  const usage = vecGet(state.nodeMeta, node.sequence - 1)?.usage;
  const model = typeof payload.model === 'string' ? payload.model : usage?.model;
  const attributes: SpanAttributes = { 'gen_ai.operation.name': 'chat' };
  put(attributes, 'gen_ai.request.model', model);
  put(
    attributes,
    'gen_ai.provider.name',
    typeof payload.provider === 'string' ? payload.provider : undefined,
  );
  put(attributes, 'gen_ai.usage.input_tokens', usage?.inputTokens);
  put(attributes, 'gen_ai.usage.output_tokens', usage?.outputTokens);
  put(attributes, 'gen_ai.input.messages', json(payload.input));
  put(attributes, 'gen_ai.output.messages', json(payload.output));
  return {
    key: node.id,
    parent,
    name: typeof span?.name === 'string' ? span.name : `chat ${model ?? ''}`.trim(),
    startTimeUnixNano: start,
    endTimeUnixNano: end,
    attributes,
  };
}

function toolSpan(node: CausalNode, state: ThreadState, parent: string): RunSpan {
  const payload = isObject(node.payload) ? node.payload : {};
  const span = recorded(payload.span);
  const [start, end] = timesOf(span, node.createdAt);
  const result = getChildren(state.graph, node.id)
    .map((id) => getNode(state.graph, id))
    .find((child) => child?.kind === 'tool_result');
  const outcome = isObject(result?.payload) ? result.payload : {};
  const name = typeof payload.name === 'string' ? payload.name : 'tool';
  const attributes: SpanAttributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
  };
  put(
    attributes,
    'gen_ai.tool.call.id',
    typeof payload.callId === 'string' ? payload.callId : undefined,
  );
  put(attributes, 'gen_ai.tool.call.arguments', json(payload.arguments));
  put(attributes, 'gen_ai.tool.call.result', json(outcome.result));
  const out: RunSpan = {
    key: node.id,
    parent,
    name: typeof span?.name === 'string' ? span.name : `execute_tool ${name}`,
    startTimeUnixNano: start,
    endTimeUnixNano: end,
    attributes,
  };
  if (typeof outcome.error === 'string') out.error = outcome.error;
  return out;
}

/**
 * The spans of run `runId` of a thread (`threadId` as its tenant names it), the run's first.
 * Undefined for an unknown run.
 */
export function runSpanTree(
  state: ThreadState,
  threadId: string,
  runId: string,
): RunSpan[] | undefined {
  const run = state.runs.get(runId);
  if (run === undefined) return undefined;
  const ingested = recorded(run.memory.otel_span);
  const [start, end] = ingested
    ? timesOf(ingested, run.created_at)
    : [nanosOfIso(run.started_at ?? run.created_at), nanosOfIso(run.updated_at)];
  const root: RunSpan = {
    key: `run:${runId}`,
    name: typeof ingested?.name === 'string' ? ingested.name : `invoke_agent ${run.goal}`,
    startTimeUnixNano: start,
    endTimeUnixNano: end,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': run.goal,
      'gen_ai.conversation.id': threadId,
      'weft.run.id': runId,
      'weft.run.status': run.status,
    },
  };
  if (run.status === 'failed' || run.status === 'timeout') {
    root.error = run.last_error ?? run.status;
  }
  const spans: RunSpan[] = [root];
  const spanOfNode = new Map<string, string>();
  for (let seq = 1; seq <= state.graph.count; seq++) {
    if (vecGet(state.nodeMeta, seq - 1)?.runId !== runId) continue;
    const node = getNodeBySequence(state.graph, seq)!;
    if (node.kind === 'goal') spanOfNode.set(node.id, root.key);
    if (node.kind !== 'inference' && node.kind !== 'tool_call') continue;
    const parent = node.parents.map((p) => spanOfNode.get(p)).find((k) => k !== undefined);
    const span =
      node.kind === 'inference'
        ? chatSpan(node, state, parent ?? root.key)
        : toolSpan(node, state, parent ?? root.key);
    spanOfNode.set(node.id, span.key);
    spans.push(span);
  }
  return spans;
}
