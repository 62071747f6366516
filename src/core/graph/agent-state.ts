import { err, ok, type Result } from '../errors.js';
import type { NodeKind } from '../identity.js';
import type { JsonValue } from '../json.js';
import { resolveGraphConfig } from './config.js';
import {
  CHUNK,
  checkAgentState,
  checkAgentStateSteps,
  type ImportFailure,
  type RawNode,
  runSteps,
  type Steps,
} from './import-rules.js';
import { frozenJsonCopy } from './json-value.js';
import { createStore, freezeNode, type GraphState, makeGraph, pushNode } from './store.js';
import type { AgentState, CausalNode, GraphConfig, ImportLimits } from './types.js';

export { CHUNK, type ImportFailure, runSteps, type Steps } from './import-rules.js';

export type AgentStateValidation = { ok: true } | { ok: false; error: ImportFailure };

/**
 * Checks an untrusted AgentState against the import rules (`IMPORT_RULE_CODES`, in order), rule
 * by rule over all nodes, in this order: size limits (STATE_TOO_LARGE, estimated cheaply and
 * bounded before any other work), version, top-level shape, node shape, kind, createdAt,
 * sequence, resourceKey (a non-empty string; `semantic:` keys only on kind semantic), semantic
 * payload (`{type, key, content}` in normal form, content within bounds, resourceKey
 * `semantic:<type>:<key>` of that payload), semantic type in the vocabulary of `config` (a
 * resolved graph config, default the built-in one), parents, duplicate ids, causal order of
 * parents, a new version of a resource key having the previous one as a parent, recomputed ids,
 * frontier (no semantic node in it). The first failing rule wins; within a rule, the first node
 * in sequence order. Never repairs. Pure.
 */
export function validateAgentState(
  raw: unknown,
  limits?: ImportLimits,
  config?: Readonly<GraphConfig>,
): AgentStateValidation {
  const checked = checkAgentState(raw, limits ?? {}, config ?? defaultConfig());
  return checked.ok ? { ok: true } : { ok: false, error: checked.error };
}

let builtIn: Readonly<GraphConfig> | undefined;
function defaultConfig(): Readonly<GraphConfig> {
  if (builtIn === undefined) {
    const resolved = resolveGraphConfig();
    if (!resolved.ok) throw new Error(resolved.error.message);
    builtIn = resolved.value;
  }
  return builtIn;
}

/**
 * Validates `raw` against the given vocabulary (see `validateAgentState`) and loads it into a new
 * graph with it. A config problem fails with VALIDATION_FAILED, a state problem with its import
 * rule code and node id. Payloads are copied, so later changes to `raw` do not leak in.
 * Cost O(total size).
 */
export function importAgentState(
  raw: unknown,
  config?: Partial<GraphConfig>,
  limits?: ImportLimits,
): Result<GraphState> {
  return runSteps(importAgentStateSteps(raw, config, limits));
}

/**
 * `importAgentState` in steps of a thousand-odd nodes (see `Steps`): a caller that must not hold
 * its thread for the whole import pauses at each `yield`. The same result. Pure.
 */
export function* importAgentStateSteps(
  raw: unknown,
  config?: Partial<GraphConfig>,
  limits?: ImportLimits,
): Steps<Result<GraphState>> {
  const resolved = resolveGraphConfig(config);
  if (!resolved.ok) return resolved;
  const checked = yield* checkAgentStateSteps(raw, limits ?? {}, resolved.value);
  if (!checked.ok) return err(checked.error);
  const store = createStore(checked.nodes.length);
  for (let i = 0; i < checked.nodes.length; i++) {
    if (i > 0 && i % CHUNK === 0) yield;
    pushNode(store, nodeFromRaw(checked.nodes[i]!));
  }
  return ok(makeGraph(resolved.value, store, checked.nodes.length, [...checked.frontier]));
}

/**
 * The AgentState v1 of a graph value. Nodes are the graph's frozen nodes (key order id, kind,
 * parents, payload, createdAt, sequence, resourceKey); the frontier keeps its order. For a state
 * written in that key order, `JSON.stringify(exportAgentState(import(s)))` equals
 * `JSON.stringify(s)`. O(n); the graph is not changed.
 */
export function exportAgentState(graph: GraphState): AgentState {
  return {
    version: 1,
    nodes: graph.store.nodes.slice(0, graph.count),
    frontier: [...graph.frontier],
  };
}

function nodeFromRaw(raw: RawNode): CausalNode {
  const resourceKey = raw.resourceKey as string | undefined;
  return freezeNode({
    id: raw.id as string,
    kind: raw.kind as NodeKind,
    parents: [...(raw.parents as string[])],
    payload: frozenJsonCopy(raw.payload as JsonValue),
    createdAt: raw.createdAt as string,
    sequence: raw.sequence as number,
    ...(resourceKey === undefined ? {} : { resourceKey }),
  });
}
