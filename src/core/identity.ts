import { canonicalJson, quoteJson } from './canonical.js';
import { sha256Hex } from './hash.js';

/** The ten structural kinds of a causal node. */
export const NODE_KINDS = [
  'system',
  'goal',
  'inference',
  'semantic',
  'tool_call',
  'tool_result',
  'resource',
  'verification',
  'answer',
  'protocol_error',
] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

const NODE_KIND_SET: ReadonlySet<string> = new Set(NODE_KINDS);
export const isNodeKind = (value: unknown): value is NodeKind =>
  typeof value === 'string' && NODE_KIND_SET.has(value);

export interface NodeIdentityInput {
  kind: string;
  parents: readonly string[];
  payload: unknown;
  resourceKey?: string | undefined;
}

/**
 * The content id of a node: `"cw_" + sha256hex(canonical({kind, parents, payload, resourceKey}))`
 * truncated to 24 hex characters. `parents` are sorted with the default `Array.prototype.sort()`
 * (a copy; the input is not touched); an absent `resourceKey` is left out; `createdAt` and
 * `sequence` are not part of the identity. Pure; byte-compatible with the StateWeave SDK.
 */
export function nodeId(input: NodeIdentityInput): string {
  return 'cw_' + sha256Hex(nodeIdentityText(input)).slice(0, 24);
}

/** The canonical text that `nodeId` hashes. Exposed for benchmarks and diagnostics. */
export function nodeIdentityText(input: NodeIdentityInput): string {
  // The four identity keys in localeCompare order — kind < parents < payload < resourceKey —
  // written directly: this is the hot path of every append and import.
  const parents = input.parents.length < 2 ? input.parents : [...input.parents].sort();
  let text = '{"kind":' + canonicalJson(input.kind) + ',"parents":' + parentsText(parents);
  if (input.payload !== undefined) text += ',"payload":' + canonicalJson(input.payload);
  if (input.resourceKey !== undefined) text += ',"resourceKey":' + canonicalJson(input.resourceKey);
  return text + '}';
}

/** `canonicalJson(parents)`, written directly for the usual list of id strings. */
function parentsText(parents: readonly string[]): string {
  let text = '[';
  for (let i = 0; i < parents.length; i++) {
    const parent: unknown = parents[i];
    if (typeof parent !== 'string') return canonicalJson(parents);
    text += (i === 0 ? '' : ',') + quoteJson(parent);
  }
  return text + ']';
}
