/**
 * The AgentState v1 causal graph as a persistent value: create, append, import/export and read.
 * See store.ts for how values share storage without copying.
 */

export { isNodeKind, NODE_KINDS, type NodeKind, nodeId } from '../identity.js';
export {
  type AgentStateValidation,
  CHUNK,
  exportAgentState,
  type ImportFailure,
  importAgentState,
  importAgentStateSteps,
  runSteps,
  type Steps,
  validateAgentState,
} from './agent-state.js';
export { type AppendOptions, type AppendResult, appendNodes, previewAppend } from './append.js';
export {
  createGraph,
  DEFAULT_NODE_TYPES,
  MAX_NODE_TYPE_DESCRIPTION,
  MAX_NODE_TYPES,
  resolveGraphConfig,
} from './config.js';
export { DEFAULT_PREVIEW_LENGTH, MAX_PREVIEW_LENGTH, payloadPreview } from './preview.js';
export {
  getChildren,
  getFrontier,
  getMemory,
  getNode,
  getNodeBySequence,
  getResourceHead,
  getResourceHeads,
  getResourceHistory,
  getSupersededBy,
  getSupersedes,
  isCurrent,
  isFrontier,
  nodeCount,
} from './readers.js';
export { type NodeSalt, SALT_FIELD, withSalt } from './salt.js';
export {
  createSemanticDraft,
  isSemanticResourceKey,
  MAX_SEMANTIC_CONTENT_CHARS,
  MAX_SEMANTIC_KEY_LENGTH,
  MAX_SEMANTIC_TYPE_LENGTH,
  normalizeSemanticKey,
  normalizeSemanticType,
  parseSemanticResourceKey,
  resolveSemantic,
  SEMANTIC_PREFIX,
  semanticResourceKey,
} from './semantic.js';
export type { GraphState } from './store.js';
export * from './types.js';
export {
  DEFAULT_WALK_DEPTH,
  DEFAULT_WALK_LIMIT,
  MAX_WALK_DEPTH,
  MAX_WALK_LIMIT,
  MAX_WALK_VISITS,
  walkAncestors,
  walkDescendants,
} from './walk.js';
