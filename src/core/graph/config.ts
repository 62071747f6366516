import { err, ok, type Result, type ValidationIssue } from '../errors.js';
import { normalizeSemanticType } from './semantic.js';
import { createStore, type GraphState, makeGraph } from './store.js';
import type { GraphConfig, SemanticNodeType } from './types.js';

/** At most this many semantic node types per graph (StateWeave keeps 32). */
export const MAX_NODE_TYPES = 32;
/** Longest accepted node type description, after trimming. */
export const MAX_NODE_TYPE_DESCRIPTION = 240;

/** The built-in semantic vocabulary. */
export const DEFAULT_NODE_TYPES: readonly SemanticNodeType[] = Object.freeze([
  Object.freeze({ name: 'memory', description: 'Durable fact or context.' }),
  Object.freeze({ name: 'preference', description: 'Stable user choice or working style.' }),
  Object.freeze({ name: 'wisdom', description: 'Reusable evidence-supported lesson.' }),
  Object.freeze({ name: 'artifact', description: 'Durable output or artifact reference.' }),
]);

/**
 * An empty graph with a validated vocabulary (see `resolveGraphConfig`). Defaults: the four
 * built-in node types and `allowDynamicNodeTypes: false`. Pure.
 */
export function createGraph(config?: Partial<GraphConfig>): Result<GraphState> {
  const resolved = resolveGraphConfig(config);
  if (!resolved.ok) return resolved;
  return ok(makeGraph(resolved.value, createStore(), 0, []));
}

/**
 * Validates and normalises a graph configuration. Type names are normalised like StateWeave does
 * (trimmed, lowercased, runs of other characters turned into `-`) and must then be a valid type
 * name; descriptions are trimmed and must be non-empty and at most 240 characters; names must be
 * unique after normalisation; 1 to 32 types. Nothing is dropped silently: every problem is
 * reported as a VALIDATION_FAILED issue with its path. Pure; the result is frozen.
 */
export function resolveGraphConfig(config: Partial<GraphConfig> = {}): Result<GraphConfig> {
  const issues: ValidationIssue[] = [];
  const raw: unknown = config;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return invalid([{ path: '$', message: 'the graph config must be an object' }]);
  }
  const allowDynamic = config.allowDynamicNodeTypes ?? false;
  if (typeof allowDynamic !== 'boolean') {
    issues.push({ path: '$.allowDynamicNodeTypes', message: 'must be a boolean' });
  }
  const rawTypes: unknown = config.nodeTypes ?? DEFAULT_NODE_TYPES;
  const nodeTypes: SemanticNodeType[] = [];
  if (!Array.isArray(rawTypes)) {
    issues.push({ path: '$.nodeTypes', message: 'must be an array of {name, description}' });
  } else {
    if (rawTypes.length === 0) {
      issues.push({ path: '$.nodeTypes', message: 'configure at least one semantic node type' });
    }
    if (rawTypes.length > MAX_NODE_TYPES) {
      issues.push({
        path: '$.nodeTypes',
        message: `at most ${MAX_NODE_TYPES} semantic node types are allowed, got ${rawTypes.length}`,
      });
    }
    const firstIndex = new Map<string, number>();
    rawTypes.forEach((entry: unknown, index) => {
      const type = checkNodeType(entry, `$.nodeTypes[${index}]`, issues);
      if (!type) return;
      const earlier = firstIndex.get(type.name);
      if (earlier !== undefined) {
        issues.push({
          path: `$.nodeTypes[${index}].name`,
          message: `"${type.name}" duplicates $.nodeTypes[${earlier}] after normalisation`,
        });
        return;
      }
      firstIndex.set(type.name, index);
      nodeTypes.push(Object.freeze(type));
    });
  }
  if (issues.length > 0) return invalid(issues);
  return ok(
    Object.freeze({
      nodeTypes: Object.freeze(nodeTypes) as SemanticNodeType[],
      allowDynamicNodeTypes: allowDynamic as boolean,
    }),
  );
}

function checkNodeType(
  entry: unknown,
  path: string,
  issues: ValidationIssue[],
): SemanticNodeType | undefined {
  if (typeof entry !== 'object' || entry === null) {
    issues.push({ path, message: 'must be an object {name, description}' });
    return undefined;
  }
  const { name, description } = entry as { name?: unknown; description?: unknown };
  const normalName = typeof name === 'string' ? normalizeSemanticType(name) : undefined;
  if (normalName === undefined) {
    issues.push({
      path: `${path}.name`,
      message: `${JSON.stringify(name) ?? 'undefined'} is not a valid type name: use a letter followed by up to 47 of a-z, 0-9, _ or -`,
    });
  }
  const text = typeof description === 'string' ? description.trim() : '';
  if (text.length === 0 || text.length > MAX_NODE_TYPE_DESCRIPTION) {
    issues.push({
      path: `${path}.description`,
      message: `describe the type in 1 to ${MAX_NODE_TYPE_DESCRIPTION} characters`,
    });
  }
  if (normalName === undefined || text.length === 0 || text.length > MAX_NODE_TYPE_DESCRIPTION) {
    return undefined;
  }
  return { name: normalName, description: text };
}

const invalid = (issues: ValidationIssue[]): Result<never> =>
  err({
    code: 'VALIDATION_FAILED',
    message: `Invalid graph config: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    issues,
  });
