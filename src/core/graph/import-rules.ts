import type { ImportRuleCode } from '../errors.js';
import { isNodeKind, type NodeKind, nodeId } from '../identity.js';
import { estimateJsonSize, findJsonProblem } from './json-value.js';
import { type NodeProblem, resourceKeyProblem, semanticProblem } from './node-rules.js';
import { vocabularyProblem } from './semantic.js';
import { isTombstone } from './tombstone.js';
import { DEFAULT_IMPORT_LIMITS, type GraphConfig, type ImportLimits } from './types.js';

/*
 * The AgentState import rules, checked rule by rule over all nodes; the first failing rule wins,
 * and within a rule the first node in sequence order. The rules on resource keys, semantic
 * payloads and the vocabulary are the node rules every path into a graph shares
 * (node-rules.ts); the parent and frontier rules hold what the live append guarantees by
 * construction (a new version descends from the one it supersedes; semantic nodes never enter
 * the frontier).
 */

export interface ImportFailure {
  code: ImportRuleCode;
  message: string;
  nodeId?: string;
}

export type RawNode = Record<string, unknown>;
export type CheckedState =
  | { ok: true; nodes: RawNode[]; frontier: string[]; seqById: Map<string, number> }
  | { ok: false; error: ImportFailure };
/**
 * What the node rules share: the graph's vocabulary, nodes, frontier and, from the duplicate rule
 * on, id → sequence.
 */
interface RuleContext {
  config: Readonly<GraphConfig>;
  nodes: RawNode[];
  frontier: unknown[];
  seqById: Map<string, number>;
}
/** A rule as steps: it yields between chunks of nodes and returns its first failure, if any. */
type Rule = (context: RuleContext) => Steps<ImportFailure | undefined>;

import { CHUNK, runSteps, type Steps } from '../steps.js';

export { CHUNK, runSteps, type Steps } from '../steps.js';

const pauseAt = (i: number) => i > 0 && i % CHUNK === 0;

const NODE_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'kind',
  'parents',
  'payload',
  'createdAt',
  'sequence',
  'resourceKey',
]);
const STATE_FIELDS: ReadonlySet<string> = new Set(['version', 'nodes', 'frontier']);
/** Rough size of a node's keys and punctuation, for the byte estimate. */
const NODE_OVERHEAD = 96;

/**
 * Runs every import rule against the vocabulary of `config` (a resolved graph config); on
 * success also returns the id → sequence index it built. Pure.
 */
export function checkAgentState(
  raw: unknown,
  limits: ImportLimits,
  config: Readonly<GraphConfig>,
): CheckedState {
  return runSteps(checkAgentStateSteps(raw, limits, config));
}

/** `checkAgentState` in steps of CHUNK nodes (see `Steps`); the same result. Pure. */
export function* checkAgentStateSteps(
  raw: unknown,
  limits: ImportLimits,
  config: Readonly<GraphConfig>,
): Steps<CheckedState> {
  const tooLarge = yield* checkSize(raw, { ...DEFAULT_IMPORT_LIMITS, ...limits });
  if (tooLarge) return { ok: false, error: tooLarge };
  if (!isRecord(raw)) {
    return fail('STATE_SHAPE_INVALID', 'AgentState must be an object {version, nodes, frontier}');
  }
  if (raw.version !== 1) {
    return fail(
      'STATE_VERSION_UNSUPPORTED',
      `AgentState version ${JSON.stringify(raw.version) ?? 'undefined'} is not supported; only version 1 can be imported`,
    );
  }
  const { nodes, frontier } = raw;
  if (!Array.isArray(nodes) || !Array.isArray(frontier)) {
    return fail('STATE_SHAPE_INVALID', 'AgentState needs `nodes` and `frontier` arrays');
  }
  const extra = Object.keys(raw).find((key) => !STATE_FIELDS.has(key));
  if (extra !== undefined) {
    return fail('STATE_SHAPE_INVALID', `AgentState has an unexpected field "${extra}"; remove it`);
  }
  const shape = yield* nodeShapeRule(nodes);
  if (shape) return { ok: false, error: shape };
  const context: RuleContext = {
    config,
    nodes: nodes as RawNode[],
    frontier,
    seqById: new Map(),
  };
  for (const rule of NODE_RULES) {
    yield;
    const failure = yield* rule(context);
    if (failure) return { ok: false, error: failure };
  }
  return {
    ok: true,
    nodes: context.nodes,
    frontier: frontier as string[],
    seqById: context.seqById,
  };
}

function* checkSize(
  raw: unknown,
  limits: Required<ImportLimits>,
): Steps<ImportFailure | undefined> {
  if (!isRecord(raw) || !Array.isArray(raw.nodes)) return undefined;
  const nodes: unknown[] = raw.nodes;
  if (nodes.length > limits.maxNodes) {
    return tooLarge(`AgentState has ${nodes.length} nodes; the limit is ${limits.maxNodes}`);
  }
  let total = 0;
  for (let i = 0; i < nodes.length; i++) {
    if (pauseAt(i)) yield;
    const node = nodes[i];
    if (!isRecord(node)) continue;
    const payloadSize = estimateJsonSize(node.payload, limits.maxPayloadBytes);
    if (payloadSize > limits.maxPayloadBytes) {
      return tooLarge(
        `${label(node, i)}: payload is larger than ${limits.maxPayloadBytes} bytes; store large data elsewhere and reference it`,
        node.id,
      );
    }
    total += NODE_OVERHEAD + payloadSize;
    total += stringSize(node.id) + stringSize(node.kind) + stringSize(node.createdAt);
    total += stringSize(node.resourceKey);
    if (Array.isArray(node.parents)) {
      for (let p = 0; p < node.parents.length && total <= limits.maxBytes; p++) {
        total += 1 + stringSize(node.parents[p]);
      }
    }
    if (total > limits.maxBytes) {
      return tooLarge(`AgentState is larger than ${limits.maxBytes} bytes (at ${label(node, i)})`);
    }
  }
  if (Array.isArray(raw.frontier)) {
    for (let f = 0; f < raw.frontier.length && total <= limits.maxBytes; f++) {
      total += 1 + stringSize(raw.frontier[f]);
    }
  }
  if (total > limits.maxBytes) {
    return tooLarge(`AgentState is larger than ${limits.maxBytes} bytes`);
  }
  return undefined;
}

function* nodeShapeRule(nodes: unknown[]): Steps<ImportFailure | undefined> {
  for (let i = 0; i < nodes.length; i++) {
    if (pauseAt(i)) yield;
    const node = nodes[i];
    if (!isRecord(node)) return nodeFail('NODE_SHAPE_INVALID', node, i, 'is not an object');
    const problem = nodeShapeProblem(node);
    if (problem) return nodeFail('NODE_SHAPE_INVALID', node, i, problem);
  }
  return undefined;
}

function nodeShapeProblem(node: RawNode): string | undefined {
  if (typeof node.id !== 'string') return 'id must be a string';
  if (!Array.isArray(node.parents)) return 'parents must be an array';
  if (node.payload === undefined) return 'payload is missing (use null for none)';
  const payloadProblem = findJsonProblem(node.payload);
  if (payloadProblem) return `payload${payloadProblem.path} ${payloadProblem.reason}`;
  if (typeof node.createdAt !== 'string') return 'createdAt must be a string';
  if (typeof node.sequence !== 'number') return 'sequence must be a number';
  const extra = Object.keys(node).find((key) => !NODE_FIELDS.has(key));
  if (extra !== undefined) return `has an unexpected field "${extra}"`;
  return undefined;
}

const eachNode = (
  code: ImportRuleCode,
  problem: (node: RawNode, index: number, context: RuleContext) => string | undefined,
): Rule =>
  function* (context) {
    const { nodes } = context;
    for (let i = 0; i < nodes.length; i++) {
      if (pauseAt(i)) yield;
      const node = nodes[i] as RawNode;
      const message = problem(node, i, context);
      if (message !== undefined) return nodeFail(code, node, i, message);
    }
    return undefined;
  };

const described = (found: NodeProblem | undefined): string | undefined =>
  found === undefined ? undefined : `${found.field} ${found.problem}`;

const kindRule = eachNode('NODE_KIND_INVALID', (node) =>
  isNodeKind(node.kind)
    ? undefined
    : `kind ${JSON.stringify(node.kind) ?? 'undefined'} is not one of the ten node kinds`,
);

const createdAtRule = eachNode('NODE_CREATED_AT_INVALID', (node) =>
  Number.isNaN(Date.parse(node.createdAt as string))
    ? `createdAt ${JSON.stringify(node.createdAt)} is not a date; use an ISO 8601 timestamp`
    : undefined,
);

const sequenceRule = eachNode('NODE_SEQUENCE_INVALID', (node, i) =>
  node.sequence === i + 1
    ? undefined
    : `sequence is ${node.sequence}, expected ${i + 1}: sequences are 1..n in array order`,
);

const resourceKeyRule = eachNode('NODE_RESOURCE_KEY_INVALID', (node) =>
  described(
    resourceKeyProblem(node.kind as NodeKind, node.resourceKey, Object.hasOwn(node, 'resourceKey')),
  ),
);

// A redacted node's payload is withheld (tombstone.ts): the rules that read it do not apply, and
// its id, computed from the content it had, is taken as recorded.
const semanticRule = eachNode('NODE_SEMANTIC_INVALID', (node) =>
  node.kind === 'semantic' && !isTombstone(node.payload)
    ? described(semanticProblem(node.payload, node.resourceKey))
    : undefined,
);

const vocabularyRule = eachNode('NODE_SEMANTIC_TYPE_NOT_ALLOWED', (node, _i, { config }) =>
  node.kind === 'semantic' && !isTombstone(node.payload)
    ? described(vocabularyProblem(config, (node.payload as { type: string }).type))
    : undefined,
);

const parentsRule = eachNode('NODE_PARENTS_INVALID', (node) => {
  const parents = node.parents as unknown[];
  for (let p = 0; p < parents.length; p++) {
    if (typeof parents[p] !== 'string') return `parents[${p}] is not a string`;
  }
  for (let p = 1; p < parents.length; p++) {
    const before = parents[p - 1] as string;
    const current = parents[p] as string;
    if (before === current) return `parent ${current} is listed twice`;
    if (before > current) return 'parents are not sorted (default Array.prototype.sort order)';
  }
  return undefined;
});

const duplicateRule: Rule = function* ({ nodes, seqById }) {
  for (let i = 0; i < nodes.length; i++) {
    if (pauseAt(i)) yield;
    const node = nodes[i] as RawNode;
    const id = node.id as string;
    if (seqById.has(id))
      return nodeFail('NODE_ID_DUPLICATE', node, i, 'repeats an earlier node id');
    seqById.set(id, i + 1);
  }
  return undefined;
};

const parentOrderRule: Rule = function* ({ nodes, seqById }) {
  for (let i = 0; i < nodes.length; i++) {
    if (pauseAt(i)) yield;
    const node = nodes[i] as RawNode;
    for (const parent of node.parents as string[]) {
      const parentSeq = seqById.get(parent);
      if (parentSeq === undefined || parentSeq > i) {
        return nodeFail(
          'NODE_PARENT_NOT_EARLIER',
          node,
          i,
          `parent ${parent} is not a node that appears earlier`,
        );
      }
    }
  }
  return undefined;
};

/** A new version of a resource key descends from the one it supersedes, as appends make it. */
const versionParentRule: Rule = function* ({ nodes }) {
  const heads = new Map<string, string>();
  for (let i = 0; i < nodes.length; i++) {
    if (pauseAt(i)) yield;
    const node = nodes[i] as RawNode;
    const key = node.resourceKey;
    if (typeof key !== 'string') continue;
    const previous = heads.get(key);
    if (previous !== undefined && !(node.parents as string[]).includes(previous)) {
      return nodeFail(
        'NODE_VERSION_PARENT_MISSING',
        node,
        i,
        `parents do not include ${previous}, the previous version of its resourceKey ${JSON.stringify(key)}: a new version descends from the one it supersedes`,
      );
    }
    heads.set(key, node.id as string);
  }
  return undefined;
};

const identityRule = eachNode('NODE_ID_MISMATCH', (node) => {
  if (isTombstone(node.payload)) return undefined;
  const expected = nodeId({
    kind: node.kind as string,
    parents: node.parents as string[],
    payload: node.payload,
    resourceKey: node.resourceKey as string | undefined,
  });
  return expected === node.id
    ? undefined
    : `content hashes to ${expected}: the node was altered or its id is wrong`;
});

const frontierRule: Rule = function* ({ frontier, seqById, nodes }) {
  const seen = new Set<string>();
  for (let f = 0; f < frontier.length; f++) {
    if (pauseAt(f)) yield;
    const id = frontier[f];
    if (typeof id !== 'string') {
      return { code: 'FRONTIER_INVALID', message: `frontier[${f}] is not a node id string` };
    }
    const seq = seqById.get(id);
    const problem = seen.has(id)
      ? 'is listed twice'
      : seq === undefined
        ? 'is not a node'
        : nodes[seq - 1]?.kind === 'semantic'
          ? 'is a semantic node: semantic nodes never enter the frontier'
          : undefined;
    if (problem) {
      return { code: 'FRONTIER_INVALID', message: `frontier[${f}] ${id} ${problem}`, nodeId: id };
    }
    seen.add(id);
  }
  return undefined;
};

const NODE_RULES: readonly Rule[] = [
  kindRule,
  createdAtRule,
  sequenceRule,
  resourceKeyRule,
  semanticRule,
  vocabularyRule,
  parentsRule,
  duplicateRule,
  parentOrderRule,
  versionParentRule,
  identityRule,
  frontierRule,
];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const stringSize = (value: unknown): number => (typeof value === 'string' ? value.length + 2 : 0);

const label = (node: unknown, index: number): string => {
  const id = isRecord(node) ? node.id : undefined;
  return typeof id === 'string' ? `nodes[${index}] (${id})` : `nodes[${index}]`;
};

function nodeFail(
  code: ImportRuleCode,
  node: unknown,
  index: number,
  problem: string,
): ImportFailure {
  const id = isRecord(node) ? node.id : undefined;
  const message = `${label(node, index)} ${problem}`;
  return typeof id === 'string' ? { code, message, nodeId: id } : { code, message };
}

const tooLarge = (message: string, id?: unknown): ImportFailure =>
  typeof id === 'string'
    ? { code: 'STATE_TOO_LARGE', message, nodeId: id }
    : { code: 'STATE_TOO_LARGE', message };

const fail = (code: ImportRuleCode, message: string): CheckedState => ({
  ok: false,
  error: { code, message },
});
