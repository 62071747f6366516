import { canonicalJson } from '../canonical.js';
import {
  type CausalNode,
  type GraphState,
  getNode,
  isSemanticResourceKey,
  parseSemanticResourceKey,
} from '../graph/index.js';
import type { NodeKind } from '../identity.js';
import type { JsonObject, JsonValue } from '../json.js';
import { addTerms, addValueTerms, type TermSink } from './text.js';

/**
 * What the projection needs to know about one node, derived from its content alone (a
 * tool_result's also from its parent call's content, which its id pins down). Computed once per
 * node of an index store (graph-index.ts).
 */
export interface NodeFacts {
  /**
   * Equivalence key: nodes sharing one collapse to the newest. `resource\0<resourceKey>`, or a
   * call / read / result key; null when the node has no equivalent.
   */
  readonly key: string | null;
  /** The topic its cluster is named after. */
  readonly topic: string;
  /** The tool a call or result names ('' when none). */
  readonly tool: string;
}

/** The facts of an earlier node, by sequence (a tool_result reads its call's). */
export type FactsOf = (sequence: number) => NodeFacts;

/**
 * The facts of `node`, a node of `graph`; its lexical terms (text.ts) go to `terms`, possibly
 * more than once each. Pure.
 */
export function computeNodeFacts(
  graph: GraphState,
  node: CausalNode,
  factsOf: FactsOf,
  terms: TermSink,
): NodeFacts {
  const { key, tool } = equivalence(graph, node, factsOf);
  addValueTerms(node.payload, terms);
  if (node.resourceKey !== undefined) addTerms(node.resourceKey, terms);
  return { key, topic: topicOf(node, tool), tool };
}

/**
 * Evidence authority by kind, a part of every node's relevance score (select.ts): roots and
 * checked results outrank intermediate reasoning. The index keeps it per node (graph-index.ts).
 */
export const AUTHORITY: Readonly<Record<NodeKind, number>> = Object.freeze({
  system: 1,
  goal: 0.9,
  verification: 0.8,
  answer: 0.7,
  resource: 0.7,
  semantic: 0.6,
  tool_result: 0.6,
  inference: 0.4,
  tool_call: 0.3,
  protocol_error: 0.2,
});

export const RESOURCE_KEY_PREFIX = 'resource\u0000';

function equivalence(
  graph: GraphState,
  node: CausalNode,
  factsOf: FactsOf,
): { key: string | null; tool: string } {
  const payload = asObject(node.payload);
  const ownTool = payload === undefined ? '' : toolName(payload);
  if (node.resourceKey !== undefined) {
    return { key: RESOURCE_KEY_PREFIX + node.resourceKey, tool: ownTool };
  }
  if (node.kind === 'tool_call') return { key: callKey(node.payload), tool: ownTool };
  if (node.kind !== 'tool_result') return { key: null, tool: ownTool };
  for (const parentId of node.parents) {
    const parent = getNode(graph, parentId);
    if (parent?.kind === 'tool_call' && parent.resourceKey === undefined) {
      const call = factsOf(parent.sequence);
      return { key: 'result\u0000' + call.key, tool: ownTool || call.tool };
    }
  }
  const read = payload === undefined ? undefined : readKey(ownTool, toolArgs(payload) ?? payload);
  return { key: read === undefined ? null : 'result\u0000' + read, tool: ownTool };
}

/**
 * Equivalent calls: the same read (a tool whose name contains "read", of the same path at the
 * same offset) or the same tool name with the same arguments (canonical JSON; call ids ignored).
 */
export function callKey(payload: JsonValue): string {
  const object = asObject(payload);
  if (object === undefined) return 'call\u0000\u0000' + canonicalJson(payload);
  const name = toolName(object);
  const args = toolArgs(object) ?? withoutCallFields(object);
  return readKey(name, args) ?? 'call\u0000' + name + '\u0000' + canonicalJson(args);
}

const NAME_FIELDS = ['name', 'tool', 'toolName', 'tool_name'] as const;
const ARGS_FIELDS = ['args', 'arguments', 'input', 'parameters', 'params'] as const;
const CALL_ID_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'callId',
  'call_id',
  'toolCallId',
  'tool_call_id',
]);
const PATH_FIELDS = ['path', 'file', 'filePath', 'file_path', 'filename'] as const;
const OFFSET_FIELDS = ['offset', 'start', 'startLine', 'start_line', 'line'] as const;

export function toolName(payload: JsonObject): string {
  for (const field of NAME_FIELDS) {
    const value = payload[field];
    if (typeof value === 'string') return value;
  }
  return '';
}

function toolArgs(payload: JsonObject): JsonValue | undefined {
  for (const field of ARGS_FIELDS) if (payload[field] !== undefined) return payload[field];
  return undefined;
}

function withoutCallFields(payload: JsonObject): JsonObject {
  const rest: JsonObject = {};
  for (const key of Object.keys(payload)) {
    if (!CALL_ID_FIELDS.has(key) && !(NAME_FIELDS as readonly string[]).includes(key)) {
      rest[key] = payload[key] as JsonValue;
    }
  }
  return rest;
}

function readKey(name: string, args: JsonValue): string | undefined {
  if (!/read/i.test(name)) return undefined;
  const object = asObject(args);
  if (object === undefined) return undefined;
  const path = PATH_FIELDS.map((field) => object[field]).find((v) => typeof v === 'string');
  if (path === undefined) return undefined;
  const offset = OFFSET_FIELDS.map((field) => object[field]).find((v) => v !== undefined) ?? 0;
  return 'read\u0000' + path + '\u0000' + canonicalJson(offset);
}

function asObject(value: JsonValue): JsonObject | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
}

/**
 * Topics: `system`, `goal`, `memory:<type>` for semantic heads, `resource:<scope>` (the key
 * without its last `/` or `:` segment) for other resource keys, `tool:<name>` for calls and
 * results, otherwise the kind.
 */
function topicOf(node: CausalNode, tool: string): string {
  const key = node.resourceKey;
  if (key !== undefined) {
    if (isSemanticResourceKey(key)) {
      return 'memory:' + (parseSemanticResourceKey(key)?.type ?? 'unknown');
    }
    const scope = resourceScope(key);
    return scope.startsWith('resource:') ? scope : 'resource:' + scope;
  }
  if (node.kind === 'tool_call' || node.kind === 'tool_result') {
    return 'tool:' + (tool === '' ? 'unnamed' : tool);
  }
  return node.kind;
}

function resourceScope(key: string): string {
  const slash = key.lastIndexOf('/');
  if (slash > 0) return key.slice(0, slash);
  const colon = key.lastIndexOf(':');
  return colon > 0 ? key.slice(0, colon) : key;
}
