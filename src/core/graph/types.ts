import type { NodeKind } from '../identity.js';
import type { JsonValue } from '../json.js';

/**
 * One content-addressed node of the causal graph. Nodes handed out by the graph are
 * frozen at run time (parents and payload included) because they are shared between every graph
 * value that contains them: copy one (e.g. `structuredClone`) before changing it.
 */
export interface CausalNode {
  id: string;
  kind: NodeKind;
  /** Direct causal dependencies, unique and sorted with the default `Array.prototype.sort()`. */
  parents: string[];
  payload: JsonValue;
  createdAt: string;
  /** 1-based, contiguous insertion order. */
  sequence: number;
  resourceKey?: string;
}

/** The portable AgentState v1 snapshot, byte-compatible with the StateWeave SDK. */
export interface AgentState {
  version: 1;
  nodes: CausalNode[];
  frontier: string[];
}

export interface SemanticNodeType {
  name: string;
  description: string;
}

export interface GraphConfig {
  /** The semantic vocabulary: 1 to 32 types with normalised, unique names. */
  nodeTypes: SemanticNodeType[];
  /** When false, a semantic node whose type is not in `nodeTypes` is refused. */
  allowDynamicNodeTypes: boolean;
}

/** What a caller asks `appendNodes` to add; the graph derives id, sequence and final parents. */
export interface NodeDraft {
  kind: NodeKind;
  payload: JsonValue;
  /** Explicit parents; default: the whole frontier. */
  parents?: string[];
  resourceKey?: string;
  /** Move the frontier to the new node (default true). Ignored for semantic nodes. */
  advance?: boolean;
}

/** The content of a semantic node: `kind: 'semantic'` payloads have exactly these three fields. */
export interface SemanticInput {
  type: string;
  key: string;
  content: JsonValue;
}

/**
 * Bounds on an imported AgentState, enforced before any expensive work. Sizes are estimated in
 * characters of canonical JSON (a close, cheap proxy for UTF-8 bytes on mostly-ASCII data).
 */
export interface ImportLimits {
  /** Estimated size of the whole state. Default 64 MiB. */
  maxBytes?: number;
  /** Number of nodes. Default 1,000,000. */
  maxNodes?: number;
  /** Estimated size of one node's payload. Default 1 MiB. */
  maxPayloadBytes?: number;
}

export const DEFAULT_IMPORT_LIMITS: Readonly<Required<ImportLimits>> = Object.freeze({
  maxBytes: 64 * 1024 * 1024,
  maxNodes: 1_000_000,
  maxPayloadBytes: 1024 * 1024,
});

/** Options of `walkAncestors` / `walkDescendants`. */
export interface WalkOptions {
  /** Maximum distance from the start node (default 16, at most 256). */
  depth?: number;
  /** Only nodes of these kinds are returned; traversal still passes through the others. */
  kinds?: readonly NodeKind[];
  /** Maximum number of returned nodes (default 1,000, at most 10,000). */
  limit?: number;
}

export interface MemoryFilter {
  type?: string;
  key?: string;
}

/** Which rule a node breaks. */
export type NodeRule = 'resourceKey' | 'semantic' | 'vocabulary';

export interface NodeProblem {
  rule: NodeRule;
  /** The field at fault, from the node: `resourceKey`, `payload`, `payload.type`, … */
  field: string;
  /** What is wrong with that field, as words that follow its name. */
  problem: string;
}
