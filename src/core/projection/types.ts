import type { CausalNode, GraphState } from '../graph/index.js';
import type { NodeKind } from '../identity.js';

/** The spellings of the selectable token estimates (GraphQL: CHARS, O200K, CL100K). */
export const TOKENIZER_NAMES = ['chars', 'o200k', 'cl100k'] as const;
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

/** What a caller asks for (the GraphQL `ProjectionInput`); null and undefined mean the default. */
export interface ProjectionInput {
  /** Free text the view should be relevant to; nodes matching it are protected. */
  query?: string | null | undefined;
  /** The size the compiler aims for. Default 16,000, clamped to `maxPromptTokens`. */
  projectionTargetTokens?: number | null | undefined;
  /** The hard ceiling; the compiler fails with PROJECTION_OVERFLOW rather than exceed it. Default 64,000. */
  maxPromptTokens?: number | null | undefined;
  /** The most nodes shown in FOCUS (the mandatory set may exceed it). Default 48. */
  maxNodes?: number | null | undefined;
  /** How tokens are counted. Default `chars` (`ceil(chars / 4)`). */
  tokenizer?: TokenizerName | null | undefined;
}

export const DEFAULT_MAX_PROMPT_TOKENS = 64_000;
export const DEFAULT_TARGET_TOKENS = 16_000;
export const DEFAULT_MAX_NODES = 48;
/** Upper bounds of the input, so one request cannot ask for unbounded work. */
export const MAX_PROMPT_TOKENS_LIMIT = 2_000_000;
export const MAX_NODES_LIMIT = 1_000;
export const MAX_QUERY_CHARS = 10_000;

/**
 * A token counter. Token counts must be additive over the lines of a prompt (see tokens.ts):
 * `count(text)` is what `tokenEstimate` reports, `lineUnits`/`newlineUnits`/`toTokens` let the
 * compiler sum lines without rendering whole prompts.
 */
export interface TokenCounter {
  readonly name: TokenizerName;
  /** Tokens of a whole prompt. */
  count(text: string): number;
  /** The additive measure of one line (characters, or tokens). */
  lineUnits(line: string): number;
  /** The measure of one line break. */
  readonly newlineUnits: number;
  /** Tokens of a total measure. */
  toTokens(units: number): number;
}

export interface CompileOptions {
  /** Counters for `input.tokenizer` other than `chars` (see gpt-tokenizer.ts). */
  tokenCounters?: Partial<Record<TokenizerName, TokenCounter>>;
  /** How many omitted nodes to list with their scores (default 0; `Infinity` lists all). */
  omittedLimit?: number;
  /** The newest eligible nodes that are always kept (default 8). */
  recentNodes?: number;
}

/** Why a node is in the view, in the order they are reported. */
export const SELECTION_REASONS = [
  'latest_system',
  'latest_goal',
  'frontier',
  'current_resource',
  'recent',
  'query_match',
  'closure',
  'relevance',
] as const;
export type SelectionReason = (typeof SELECTION_REASONS)[number];

/** The reasons that make a node mandatory: it is never trimmed. */
export const MANDATORY_REASONS: ReadonlySet<SelectionReason> = new Set([
  'latest_system',
  'latest_goal',
  'frontier',
  'current_resource',
  'recent',
]);

export interface SelectedNode {
  id: string;
  sequence: number;
  kind: NodeKind;
  reasons: SelectionReason[];
  mandatory: boolean;
  /** Relevance score in [0, 1], rounded to 6 decimals. */
  score: number;
}

/**
 * Why a node is not in the view: `superseded` (a newer version of its resource key exists),
 * `duplicate` (a newer equivalent call, read or result exists), `trimmed` (selected, then removed
 * to fit the token target), `not_selected` (ranked below the `maxNodes` cut).
 */
export type OmissionReason = 'superseded' | 'duplicate' | 'trimmed' | 'not_selected';

export interface OmittedNode {
  id: string;
  sequence: number;
  kind: NodeKind;
  score: number;
  reason: OmissionReason;
  /** The node that replaces it in the view's eyes (superseded and duplicate only). */
  replacedBy?: string;
}

export interface ClusterPin {
  /** `cl_` + 16 hex of SHA-256 over the sorted member ids, one per line. */
  id: string;
  /** The topic the members share, e.g. `tool:read_file`, `memory:preference`, `inference`. */
  label: string;
  size: number;
  firstSequence: number;
  lastSequence: number;
}

export interface PeripheralCluster extends ClusterPin {
  /** How many neighbours of the active work (outside the mandatory set) the cluster holds. */
  near: number;
  /** The newest of those neighbours. */
  nearestId: string;
}

export interface ProjectionLayers {
  bigBrain: string;
  peripheral: string;
  focus: string;
  timeline: string;
}

export interface ProjectionBudget {
  projectionTargetTokens: number;
  maxPromptTokens: number;
  maxNodes: number;
  /** Tokens of the smallest view the compiler can make (the mandatory part, fully shrunk). */
  requiredTokens: number;
  /** 0 = payloads in full … 4 = most shrunk. */
  shrinkLevel: number;
  /** Selected nodes removed to reach the target, oldest first. */
  trimmed: number;
}

export interface Projection {
  prompt: string;
  tokenEstimate: number;
  tokenizer: TokenizerName;
  /** Ids of the FOCUS nodes, in sequence order. */
  nodeIds: string[];
  /** The FOCUS nodes themselves (frozen graph nodes), in sequence order. */
  nodes: CausalNode[];
  /** Why each FOCUS node is there, parallel to `nodes`. */
  selected: SelectedNode[];
  /** The text inside each layer's tags. */
  layers: ProjectionLayers;
  /** The text inside `<DIGEST>`: a deterministic summary and fingerprint of the whole graph. */
  digest: string;
  /** The graph fingerprint the digest names (SHA-256 over every cluster id, 16 hex). */
  fingerprint: string;
  clusters: { bigBrain: ClusterPin[]; peripheral: PeripheralCluster[] };
  /** Omitted nodes, best score first, up to `omittedLimit`. */
  omitted: OmittedNode[];
  /** Every node of the graph that is not in FOCUS. */
  omittedCount: number;
  budget: ProjectionBudget;
}

/** A graph value, or a thread state holding one. */
export type ProjectionSource = GraphState | { readonly graph: GraphState };
