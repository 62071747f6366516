import { err, ok, type Result, type ValidationIssue } from '../errors.js';
import type { JsonValue } from '../json.js';
import { findJsonProblem } from './json-value.js';
import type { GraphState } from './store.js';
import type { GraphConfig, NodeDraft, NodeProblem, SemanticInput } from './types.js';

/**
 * Semantic memory: a `semantic` node's payload is `{type, key, content}` and its
 * resource key is `semantic:<type>:<key>`, so writing the same type and key again creates an
 * immutable successor. Type and key are normalised exactly as the StateWeave SDK does, so both
 * produce the same resource keys (and therefore the same content ids).
 */
export const SEMANTIC_PREFIX = 'semantic:';
export const MAX_SEMANTIC_TYPE_LENGTH = 48;
export const MAX_SEMANTIC_KEY_LENGTH = 120;
/** Longest accepted `JSON.stringify(content)` of a semantic node. */
export const MAX_SEMANTIC_CONTENT_CHARS = 100_000;

const TYPE_PATTERN = /^[a-z][a-z0-9_-]{0,47}$/;

/**
 * Trim, lowercase, turn every run of characters outside `a-z 0-9 _ -` into `-`, strip leading and
 * trailing `-`; the result must start with a letter and be at most 48 characters. Returns
 * undefined when the name cannot be normalised into a valid type.
 */
export function normalizeSemanticType(value: string): string | undefined {
  const name = value
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return TYPE_PATTERN.test(name) ? name : undefined;
}

/**
 * Trim, lowercase, turn every run of characters outside `a-z 0-9 _ . / : -` into `-`, strip
 * leading and trailing `-`, keep the first 120 characters. Undefined when nothing is left.
 */
export function normalizeSemanticKey(value: string): string | undefined {
  const key = value
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_./:-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_SEMANTIC_KEY_LENGTH);
  return key.length > 0 ? key : undefined;
}

export const isSemanticResourceKey = (resourceKey: string | undefined): boolean =>
  resourceKey?.startsWith(SEMANTIC_PREFIX) === true;

/** `semantic:<type>:<key>` for an already normalised type and key. */
export const semanticResourceKey = (type: string, key: string): string =>
  `${SEMANTIC_PREFIX}${type}:${key}`;

/** Splits `semantic:<type>:<key>` (the type never contains `:`); undefined for other keys. */
export function parseSemanticResourceKey(
  resourceKey: string,
): { type: string; key: string } | undefined {
  if (!resourceKey.startsWith(SEMANTIC_PREFIX)) return undefined;
  const rest = resourceKey.slice(SEMANTIC_PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { type: rest.slice(0, colon), key: rest.slice(colon + 1) };
}

/** Why a semantic content (plain JSON) is too long to store, or undefined. */
export function semanticContentProblem(content: unknown): string | undefined {
  return JSON.stringify(content).length > MAX_SEMANTIC_CONTENT_CHARS
    ? `exceeds ${MAX_SEMANTIC_CONTENT_CHARS} characters of JSON; store a reference instead`
    : undefined;
}

/** A semantic type (in normal form) must be in the graph's vocabulary unless dynamic types are on. */
export function vocabularyProblem(
  config: Readonly<GraphConfig>,
  type: string,
): NodeProblem | undefined {
  if (config.allowDynamicNodeTypes || config.nodeTypes.some((t) => t.name === type)) {
    return undefined;
  }
  const allowed = config.nodeTypes.map((t) => t.name).join(', ');
  return {
    rule: 'vocabulary',
    field: 'payload.type',
    problem: `"${type}" is not in this graph's vocabulary (${allowed}); use one of them, or create or import the thread with it in nodeTypes or with allowDynamicNodeTypes`,
  };
}

export interface ResolvedSemantic {
  payload: { type: string; key: string; content: JsonValue };
  resourceKey: string;
}

/**
 * Checks a semantic payload and normalises it to `{type, key, content}` with its resource key.
 * Fails with VALIDATION_FAILED (issues under `path`) for a malformed payload and with
 * SEMANTIC_TYPE_NOT_ALLOWED when the type is outside the vocabulary and dynamic types are off.
 * Nothing is dropped silently. Pure.
 */
export function resolveSemantic(
  config: Readonly<GraphConfig>,
  payload: unknown,
  path: string,
): Result<ResolvedSemantic> {
  const issues: ValidationIssue[] = [];
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return invalid([
      { path, message: 'a semantic payload must be an object {type, key, content}' },
    ]);
  }
  const record = payload as Record<string, unknown>;
  for (const extra of Object.keys(record)) {
    if (extra !== 'type' && extra !== 'key' && extra !== 'content') {
      issues.push({
        path: `${path}.${extra}`,
        message: 'unexpected field: a semantic payload has only type, key and content',
      });
    }
  }
  const type = typeof record.type === 'string' ? normalizeSemanticType(record.type) : undefined;
  if (type === undefined) {
    issues.push({
      path: `${path}.type`,
      message: 'type must be a name starting with a letter, up to 48 of a-z, 0-9, _ or -',
    });
  }
  const key = typeof record.key === 'string' ? normalizeSemanticKey(record.key) : undefined;
  if (key === undefined) {
    issues.push({ path: `${path}.key`, message: 'key must be a non-empty string' });
  }
  const content = record.content;
  const problem = content === undefined ? undefined : findJsonProblem(content);
  if (content === undefined) {
    issues.push({ path: `${path}.content`, message: 'content is required (use null for none)' });
  } else if (problem) {
    issues.push({ path: `${path}.content${problem.path}`, message: problem.reason });
  } else {
    const tooLong = semanticContentProblem(content);
    if (tooLong !== undefined)
      issues.push({ path: `${path}.content`, message: `content ${tooLong}` });
  }
  if (issues.length > 0 || type === undefined || key === undefined) return invalid(issues);
  const outside = vocabularyProblem(config, type);
  if (outside !== undefined) {
    return err({
      code: 'SEMANTIC_TYPE_NOT_ALLOWED',
      message: `Semantic type ${outside.problem}`,
      type,
    });
  }
  return ok({
    payload: { type, key, content: content as JsonValue },
    resourceKey: semanticResourceKey(type, key),
  });
}

/**
 * A `semantic` node draft for `{type, key, content}` (the `remember` command): normalised, checked
 * against the graph's vocabulary, with resource key `semantic:<type>:<key>` and default parents
 * (the frontier). Pure.
 */
export function createSemanticDraft(graph: GraphState, input: SemanticInput): Result<NodeDraft> {
  const resolved = resolveSemantic(graph.config, input, '$');
  if (!resolved.ok) return resolved;
  return ok({
    kind: 'semantic',
    payload: resolved.value.payload,
    resourceKey: resolved.value.resourceKey,
  });
}

const invalid = (issues: ValidationIssue[]): Result<never> =>
  err({
    code: 'VALIDATION_FAILED',
    message: `Invalid semantic node: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    issues,
  });
