import type { NodeKind } from '../identity.js';
import { SALT_FIELD } from './salt.js';
import {
  isSemanticResourceKey,
  normalizeSemanticKey,
  normalizeSemanticType,
  semanticContentProblem,
  semanticResourceKey,
  vocabularyProblem,
} from './semantic.js';
import type { GraphConfig, NodeProblem } from './types.js';

/*
 * The rules a node obeys to be part of a graph, whichever way it enters: an AgentState import,
 * the replay of a log (an imported log, the prefix a fork copies, a load) or a live write
 * (appendNodes, remember, the memory a run action mirrors). A live write may normalise its
 * input first (semantic type and key, the derived resource key) and then obeys these same
 * rules; an imported or recorded node is checked exactly as given and never repaired, because
 * its id commits to its content. Pure.
 */

export type { NodeProblem, NodeRule } from './types.js';

// The salt field of a salted thread (salt.ts) may come with them.
const SEMANTIC_FIELDS: ReadonlySet<string> = new Set(['type', 'key', 'content', SALT_FIELD]);

/**
 * A resource key, when present, is a non-empty string; keys starting with `semantic:` belong to
 * kind `semantic` only (memory reads every such key as a memory entry).
 */
export function resourceKeyProblem(
  kind: NodeKind,
  resourceKey: unknown,
  present: boolean,
): NodeProblem | undefined {
  if (!present) return undefined;
  if (typeof resourceKey !== 'string' || resourceKey === '') {
    return keyProblem('must be a non-empty string when present');
  }
  if (kind !== 'semantic' && isSemanticResourceKey(resourceKey)) {
    return keyProblem(
      `${JSON.stringify(resourceKey)} starts with "semantic:", which is reserved for kind semantic`,
    );
  }
  return undefined;
}

/**
 * A `semantic` node's payload is exactly `{type, key, content}` with type and key in normal form
 * (what `normalizeSemanticType` / `normalizeSemanticKey` return for them), content at most
 * MAX_SEMANTIC_CONTENT_CHARS characters of JSON, and its resource key is
 * `semantic:<type>:<key>` of that payload — the key memory shows it under.
 */
export function semanticProblem(payload: unknown, resourceKey: unknown): NodeProblem | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return semantic('payload', 'must be an object {type, key, content}');
  }
  const record = payload as Record<string, unknown>;
  for (const field of Object.keys(record)) {
    if (!SEMANTIC_FIELDS.has(field)) {
      return semantic(
        `payload.${field}`,
        'is not a field of a semantic payload (only type, key and content)',
      );
    }
  }
  const { type, key, content } = record;
  const normalType = typeof type === 'string' ? normalizeSemanticType(type) : undefined;
  if (normalType === undefined || normalType !== type) {
    return semantic(
      'payload.type',
      `${JSON.stringify(type) ?? 'undefined'} is not a semantic type in normal form (a letter, then up to 47 of a-z, 0-9, _ or -)${normalType === undefined ? '' : `; write "${normalType}"`}`,
    );
  }
  const normalKey = typeof key === 'string' ? normalizeSemanticKey(key) : undefined;
  if (normalKey === undefined || normalKey !== key) {
    return semantic(
      'payload.key',
      `${JSON.stringify(key) ?? 'undefined'} is not a semantic key in normal form (1 to 120 of a-z, 0-9, _ . / : -, not starting or ending with -)${normalKey === undefined ? '' : `; write "${normalKey}"`}`,
    );
  }
  if (content === undefined) return semantic('payload.content', 'is required (null for none)');
  const tooLong = semanticContentProblem(content);
  if (tooLong !== undefined) return semantic('payload.content', tooLong);
  const expected = semanticResourceKey(type, key);
  if (resourceKey !== expected) {
    const found = resourceKey === undefined ? 'is missing' : `is ${JSON.stringify(resourceKey)}`;
    return semantic(
      'resourceKey',
      `${found}, not "${expected}": a semantic node's resourceKey is semantic:<type>:<key> of its payload, the key memory shows it under`,
    );
  }
  return undefined;
}

/**
 * Every rule above for one node, in order (resource key, semantic payload, vocabulary): the
 * first problem, or undefined. `present`: whether the node has a `resourceKey` field at all.
 */
export function nodeProblem(
  config: Readonly<GraphConfig>,
  kind: NodeKind,
  payload: unknown,
  resourceKey: unknown,
  present: boolean,
): NodeProblem | undefined {
  const key = resourceKeyProblem(kind, resourceKey, present);
  if (key !== undefined || kind !== 'semantic') return key;
  return (
    semanticProblem(payload, resourceKey) ??
    vocabularyProblem(config, (payload as { type: string }).type)
  );
}

const keyProblem = (problem: string): NodeProblem => ({
  rule: 'resourceKey',
  field: 'resourceKey',
  problem,
});

const semantic = (field: string, problem: string): NodeProblem => ({
  rule: 'semantic',
  field,
  problem,
});
