/**
 * The checks an append makes on each draft before it is staged: its shape, its timestamp, and the
 * node rules (node-rules.ts), with a semantic draft normalised first. A recorded node (one being
 * replayed from a log) is checked as given instead, and fails with the import rule's own code.
 */
import { err, type ImportRuleCode, ok, type Result, type ValidationIssue } from '../errors.js';
import { isNodeKind, type NodeKind } from '../identity.js';
import type { JsonValue } from '../json.js';
import { findJsonProblem, NOT_JSON, tryFrozenJsonCopy } from './json-value.js';
import { type NodeProblem, type NodeRule, nodeProblem, resourceKeyProblem } from './node-rules.js';
import { resolveSemantic } from './semantic.js';
import type { GraphState } from './store.js';
import { isReservedPayload, isTombstone, TOMBSTONE_KEY } from './tombstone.js';
import type { NodeDraft } from './types.js';

/**
 * Longest resource key a new node may have, in UTF-8 bytes. Keys are indexed; Postgres refuses
 * an index entry over about 2.7 KB, and with encryption at rest a key is stored sealed (a third
 * longer). Checked on live writes only: a recorded node is replayed as it was written.
 */
export const MAX_RESOURCE_KEY_BYTES = 1024;

const utf8Length = (text: string): number => new TextEncoder().encode(text).length;

/** How an append treats recorded nodes: checked as given, failures named with `label`. */
export interface Recorded {
  label: (index: number) => string;
}

export type Failure = Result<never>;

/** True when `Date.parse(createdAt)` is a number; `Date.parse` is costly, so cheap cases first. */
export function isTimestamp(createdAt: unknown): createdAt is string {
  if (typeof createdAt !== 'string') return false;
  return isPlainIsoInstant(createdAt) || !Number.isNaN(Date.parse(createdAt));
}

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ` (what `toISOString` writes) with month 1–12, day 1–28, hour 0–23,
 * minute and second 0–59: a subset that `Date.parse` always accepts. Other valid forms (day 31,
 * offsets, other precisions) take the `Date.parse` path.
 */
function isPlainIsoInstant(text: string): boolean {
  if (text.length !== 24) return false;
  for (let i = 0; i < 24; i++) {
    const c = text.charCodeAt(i);
    const expected = ISO_SHAPE.charCodeAt(i);
    if (expected === DIGIT ? c < 48 || c > 57 : c !== expected) return false;
  }
  const two = (at: number) => (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;
  const month = two(5);
  const day = two(8);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= 28 &&
    two(11) <= 23 &&
    two(14) <= 59 &&
    two(17) <= 59
  );
}

/** The shape of a plain ISO instant, `d` standing for any digit. */
const ISO_SHAPE = 'dddd-dd-ddTdd:dd:dd.dddZ';
const DIGIT = 100; // 'd'

export interface PreparedDraft {
  kind: NodeKind;
  payload: JsonValue;
  parents: string[] | undefined;
  resourceKey: string | undefined;
  advance: boolean;
  /** A recorded node's own id, for naming it in errors. */
  recordedId?: string;
}

export function prepareDraft(
  graph: GraphState,
  draft: unknown,
  index: number,
  recorded?: Recorded,
): Result<PreparedDraft> {
  if (typeof draft !== 'object' || draft === null) {
    return invalid([
      { path: `$[${index}]`, message: 'a draft must be an object {kind, payload, ...}' },
    ]);
  }
  const d = draft as Partial<Record<keyof NodeDraft, unknown>>;
  // Checked and copied in one pass; the problem is looked for only when the copy is refused.
  const copy = d.payload === undefined ? NOT_JSON : tryFrozenJsonCopy(d.payload);
  const problem =
    d.payload === undefined || copy !== NOT_JSON ? undefined : findJsonProblem(d.payload);
  const recordedId = (draft as { id?: unknown }).id;
  if (recorded !== undefined && isNodeKind(d.kind) && copy !== NOT_JSON) {
    // Checked as recorded, before the draft checks, so a recorded node gets the rule's own code.
    // A redacted node's payload is withheld: only the rules that do not read it still apply.
    const present = d.resourceKey !== undefined;
    const broken = isTombstone(copy)
      ? resourceKeyProblem(d.kind, d.resourceKey, present)
      : nodeProblem(graph.config, d.kind, copy, d.resourceKey, present);
    if (broken !== undefined) {
      return recordedFailure(recorded, index, recordedId, RECORDED_CODES[broken.rule], broken);
    }
  }
  if (
    !isNodeKind(d.kind) ||
    d.payload === undefined ||
    problem !== undefined ||
    (d.parents !== undefined && !isStringArray(d.parents)) ||
    (d.resourceKey !== undefined && (typeof d.resourceKey !== 'string' || d.resourceKey === '')) ||
    (d.advance !== undefined && typeof d.advance !== 'boolean')
  ) {
    return invalid(draftIssues(d, problem, `$[${index}]`));
  }
  if (recorded !== undefined) {
    return ok({
      kind: d.kind as NodeKind,
      payload: copy as JsonValue,
      parents: d.parents as string[] | undefined,
      resourceKey: d.resourceKey as string | undefined,
      advance: d.advance !== false,
      ...(typeof recordedId === 'string' ? { recordedId } : {}),
    });
  }
  if (isReservedPayload(copy)) {
    return invalid([
      {
        path: `$[${index}].payload`,
        message: `a payload whose only key is "${TOMBSTONE_KEY}" is reserved for redacted nodes`,
      },
    ]);
  }
  if (typeof d.resourceKey === 'string' && utf8Length(d.resourceKey) > MAX_RESOURCE_KEY_BYTES) {
    return invalid([
      {
        path: `$[${index}].resourceKey`,
        message: `resourceKey is ${utf8Length(d.resourceKey)} bytes of UTF-8, over the limit of ${MAX_RESOURCE_KEY_BYTES}`,
      },
    ]);
  }
  return resolveDraft(graph, d, index, copy as JsonValue);
}

/** The import rule code a recorded node that breaks a node rule fails with. */
const RECORDED_CODES: Record<NodeRule, ImportRuleCode> = {
  resourceKey: 'NODE_RESOURCE_KEY_INVALID',
  semantic: 'NODE_SEMANTIC_INVALID',
  vocabulary: 'NODE_SEMANTIC_TYPE_NOT_ALLOWED',
};

export function recordedFailure(
  recorded: Recorded,
  index: number,
  id: unknown,
  code: ImportRuleCode,
  broken: Pick<NodeProblem, 'field' | 'problem'>,
): Failure {
  const named = typeof id === 'string' ? ` (${id})` : '';
  const message = `${recorded.label(index)}${named}: ${broken.field} ${broken.problem}`;
  return err(typeof id === 'string' ? { code, message, nodeId: id } : { code, message });
}

const isStringArray = (value: unknown): boolean =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Every shape problem of a draft, for the error; only built once a draft is known to be bad. */
function draftIssues(
  d: Partial<Record<keyof NodeDraft, unknown>>,
  problem: ReturnType<typeof findJsonProblem>,
  path: string,
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isNodeKind(d.kind)) {
    issues.push({ path: `${path}.kind`, message: `unknown node kind ${JSON.stringify(d.kind)}` });
  }
  if (d.payload === undefined) {
    issues.push({ path: `${path}.payload`, message: 'payload is required (use null for none)' });
  } else if (problem) {
    issues.push({ path: `${path}.payload${problem.path}`, message: problem.reason });
  }
  if (
    d.parents !== undefined &&
    (!Array.isArray(d.parents) || d.parents.some((p) => typeof p !== 'string'))
  ) {
    issues.push({ path: `${path}.parents`, message: 'parents must be an array of node ids' });
  }
  if (d.resourceKey !== undefined && (typeof d.resourceKey !== 'string' || d.resourceKey === '')) {
    issues.push({ path: `${path}.resourceKey`, message: 'resourceKey must be a non-empty string' });
  }
  if (d.advance !== undefined && typeof d.advance !== 'boolean') {
    issues.push({ path: `${path}.advance`, message: 'advance must be a boolean' });
  }
  return issues;
}

/**
 * `copy` is the frozen copy of `d.payload`, which a semantic draft replaces by its normal form
 * (its resource key derived when omitted); the result must then obey the node rules.
 */
function resolveDraft(
  graph: GraphState,
  d: Partial<Record<keyof NodeDraft, unknown>>,
  index: number,
  copy: JsonValue,
): Result<PreparedDraft> {
  const kind = d.kind as NodeKind;
  const path = `$[${index}]`;
  let payload = copy;
  let resourceKey = d.resourceKey as string | undefined;
  if (kind === 'semantic') {
    const semantic = resolveSemantic(graph.config, payload, `${path}.payload`);
    if (!semantic.ok) return semantic;
    // A fresh {type, key, content} around the already frozen copy of the content.
    payload = Object.freeze(semantic.value.payload);
    resourceKey ??= semantic.value.resourceKey;
  }
  const broken = nodeProblem(graph.config, kind, payload, resourceKey, resourceKey !== undefined);
  if (broken?.rule === 'vocabulary') {
    const type = (payload as { type: string }).type;
    return err({
      code: 'SEMANTIC_TYPE_NOT_ALLOWED',
      message: `Semantic type ${broken.problem}`,
      type,
    });
  }
  if (broken !== undefined) {
    return invalid([
      { path: `${path}.${broken.field}`, message: `${broken.field} ${broken.problem}` },
    ]);
  }
  return ok({
    kind,
    payload,
    parents: d.parents as string[] | undefined,
    resourceKey,
    advance: d.advance !== false,
  });
}

export const invalid = (issues: ValidationIssue[]): Result<never> =>
  err({
    code: 'VALIDATION_FAILED',
    message: `Invalid node draft: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    issues,
  });
