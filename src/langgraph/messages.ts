/**
 * The causal nodes a channel's new LangGraph messages become: human → goal, AI → inference (when
 * it calls tools; one tool_call node per call, parented on it) or answer, tool message →
 * tool_result parented on the call it answers, system → system. A message is parented on what
 * it answers: the messages since the previous AI message (or that AI message itself), so a
 * thread's nodes follow the conversation, branches of time travel included.
 */
import { type BaseMessage, isBaseMessage } from '@langchain/core/messages';
import type { NodeKind } from '../core/graph/index.js';
import { nodeId } from '../core/identity.js';
import type { JsonValue } from '../core/json.js';
import type { NodeInput } from '../core/thread/index.js';

/** Where the ids of earlier messages' nodes are found (and new ones recorded). */
export interface MessageNodeMaps {
  messageNodes: IdMap;
  toolCallNodes: IdMap;
}

export interface IdMap {
  get(key: string): string | undefined;
  has(key: string): boolean;
  set(key: string, value: string): unknown;
}

/** `base` read through, writes kept aside (`added`): a plan that fails leaves the fold untouched. */
export function overlay(base: ReadonlyMap<string, string>): IdMap & { added: Map<string, string> } {
  const added = new Map<string, string>();
  return {
    added,
    get: (key) => added.get(key) ?? base.get(key),
    has: (key) => added.has(key) || base.has(key),
    set: (key, value) => added.set(key, value),
  };
}

/** JSON as the causal graph stores it: undefined members dropped, non-finite numbers as text. */
export function plainJson(value: unknown): JsonValue {
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    if (typeof v === 'bigint') return v.toString();
    if (Object.is(v, -0)) return 0;
    return v;
  });
  return text === undefined ? null : (JSON.parse(text) as JsonValue);
}

const roleOf = (message: BaseMessage): string => message.getType();

interface ToolCallLike {
  id?: string;
  name: string;
  args: unknown;
}

/**
 * Node inputs for `items[from..]` (the new values of a messages-like channel); values that are
 * not messages, and messages that already have a node, are skipped. `maps` gains the new ids.
 */
export function messageNodes(
  items: readonly unknown[],
  from: number,
  channel: string,
  maps: MessageNodeMaps,
): NodeInput[] {
  const out: NodeInput[] = [];
  const push = (kind: NodeKind, parents: string[], payload: JsonValue): string => {
    const sorted = [...new Set(parents)].sort();
    out.push({ kind, parents: sorted, payload });
    return nodeId({ kind, parents: sorted, payload });
  };
  for (let i = from; i < items.length; i++) {
    const message = items[i];
    if (!isBaseMessage(message)) continue;
    const messageId = message.id;
    if (messageId !== undefined && maps.messageNodes.has(messageId)) continue;
    const role = roleOf(message);
    const base: Record<string, JsonValue> = {
      channel,
      role,
      content: plainJson(message.content),
    };
    if (messageId !== undefined) base.messageId = messageId;
    if (message.name !== undefined) base.name = message.name;
    let id: string | undefined;
    if (role === 'human') {
      id = push('goal', answeredBy(items, i, maps), base);
    } else if (role === 'system') {
      id = push('system', answeredBy(items, i, maps), base);
    } else if (role === 'ai') {
      const calls = ((message as { tool_calls?: ToolCallLike[] }).tool_calls ?? []).filter(
        (call) => call !== null && typeof call === 'object',
      );
      const payload: Record<string, JsonValue> = { ...base };
      if (calls.length > 0) payload.toolCalls = plainJson(calls);
      const usage = (message as { usage_metadata?: unknown }).usage_metadata;
      if (usage !== undefined) payload.usage = plainJson(usage);
      id = push(calls.length > 0 ? 'inference' : 'answer', answeredBy(items, i, maps), payload);
      for (const call of calls) {
        const callPayload: Record<string, JsonValue> = {
          channel,
          name: call.name,
          args: plainJson(call.args),
        };
        if (call.id !== undefined) callPayload.toolCallId = call.id;
        if (messageId !== undefined) callPayload.messageId = messageId;
        const callNode = push('tool_call', [id], callPayload);
        if (call.id !== undefined) maps.toolCallNodes.set(call.id, callNode);
      }
    } else if (role === 'tool') {
      const callId = (message as { tool_call_id?: string }).tool_call_id;
      const payload: Record<string, JsonValue> = { ...base };
      if (callId !== undefined) payload.toolCallId = callId;
      const status = (message as { status?: unknown }).status;
      if (typeof status === 'string') payload.status = status;
      const call = callId === undefined ? undefined : maps.toolCallNodes.get(callId);
      id = push('tool_result', call === undefined ? answeredBy(items, i, maps) : [call], payload);
    } else {
      id = push('inference', answeredBy(items, i, maps), base);
    }
    if (messageId !== undefined) maps.messageNodes.set(messageId, id);
  }
  return out;
}

/**
 * The nodes of what message `i` answers: every message after the previous AI message (the
 * human turn, the tool results), or that AI message itself when it immediately precedes.
 */
function answeredBy(items: readonly unknown[], i: number, maps: MessageNodeMaps): string[] {
  const parents: string[] = [];
  for (let j = i - 1; j >= 0; j--) {
    const earlier = items[j];
    if (!isBaseMessage(earlier)) continue;
    const node = earlier.id === undefined ? undefined : maps.messageNodes.get(earlier.id);
    if (roleOf(earlier) === 'ai') {
      if (parents.length === 0 && node !== undefined) parents.push(node);
      break;
    }
    if (node !== undefined) parents.push(node);
  }
  return parents;
}
