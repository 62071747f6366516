/**
 * What WeftStore's reads compute over the folded items: filters, namespace listing and the exact
 * vector scan. Pure. Semantics follow LangGraph's InMemoryStore, the reference the store
 * conformance suite runs beside WeftStore.
 */
import type {
  Item,
  ListNamespacesOperation,
  MatchCondition,
  SearchItem,
} from '@langchain/langgraph-checkpoint';
import type { CurrentItem } from './store-fold.js';

const OPERATORS: ReadonlySet<string> = new Set([
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
]);

/** True when `value` is an operator object such as `{ $gte: 3 }`. */
function isOperators(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length > 0 &&
    Object.keys(value).every((k) => OPERATORS.has(k))
  );
}

/** One filter condition against an item's top-level field; a plain value means equality. */
function matchesCondition(actual: unknown, expected: unknown): boolean {
  if (!isOperators(expected)) return sameJson(actual, expected);
  return Object.entries(expected).every(([op, operand]) => {
    switch (op) {
      case '$eq':
        return sameJson(actual, operand);
      case '$ne':
        return !sameJson(actual, operand);
      case '$gt':
        return Number(actual) > Number(operand);
      case '$gte':
        return Number(actual) >= Number(operand);
      case '$lt':
        return Number(actual) < Number(operand);
      case '$lte':
        return Number(actual) <= Number(operand);
      case '$in':
        return Array.isArray(operand) && operand.some((o) => sameJson(actual, o));
      default:
        return !Array.isArray(operand) || !operand.some((o) => sameJson(actual, o));
    }
  });
}

/** Equality of JSON values (objects and arrays by content, not identity). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

export function matchesFilter(
  value: Record<string, unknown>,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (filter === undefined) return true;
  return Object.entries(filter).every(([field, expected]) =>
    matchesCondition(value[field], expected),
  );
}

export function hasPrefix(namespace: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((label, i) => namespace[i] === label);
}

export function toItem(current: CurrentItem): Item {
  return {
    namespace: [...current.content.ns],
    key: current.content.key,
    value: current.content.value as Record<string, unknown>,
    createdAt: new Date(current.createdAt),
    updatedAt: new Date(current.updatedAt),
  };
}

function matchesCondition_(condition: MatchCondition, namespace: readonly string[]): boolean {
  const { matchType, path } = condition;
  if (path.length > namespace.length) return false;
  const offset = matchType === 'suffix' ? namespace.length - path.length : 0;
  return path.every((label, i) => label === '*' || namespace[offset + i] === label);
}

/** The namespaces of live items, as `listNamespaces` answers (sorted, depth-cut, paged). */
export function listNamespaces(
  namespaces: Iterable<readonly string[]>,
  op: ListNamespacesOperation,
): string[][] {
  const seen = new Map<string, string[]>();
  for (const ns of namespaces) {
    if (!(op.matchConditions ?? []).every((c) => matchesCondition_(c, ns))) continue;
    const cut = op.maxDepth === undefined ? [...ns] : ns.slice(0, op.maxDepth);
    seen.set(JSON.stringify(cut), cut);
  }
  const sorted = [...seen.values()].sort((a, b) => compareLabels(a, b));
  const offset = op.offset ?? 0;
  return sorted.slice(offset, offset + (op.limit ?? sorted.length));
}

function compareLabels(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}

/** A vector as stored: base64 of its float32s (4 bytes a dimension, not a JSON number each). */
export function packVector(vector: readonly number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

export function unpackVector(packed: string): Float32Array {
  const bytes = Buffer.from(packed, 'base64');
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

function cosine(a: readonly number[], b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i]!;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * The exact scan: every candidate scored by its best field's cosine similarity to `query`,
 * best first; candidates without vectors follow unscored, as InMemoryStore orders them.
 */
export function rankByVector(
  candidates: readonly CurrentItem[],
  query: readonly number[],
  offset: number,
  limit: number,
): SearchItem[] {
  const scored: Array<[number, CurrentItem]> = [];
  const scoreless: CurrentItem[] = [];
  for (const item of candidates) {
    item.unpacked ??= Object.values(item.content.vectors ?? {}).map(unpackVector);
    const vectors = item.unpacked;
    if (vectors.length === 0) {
      scoreless.push(item);
      continue;
    }
    scored.push([Math.max(...vectors.map((v) => cosine(query, v))), item]);
  }
  scored.sort((a, b) => b[0] - a[0]);
  const page = [...scored, ...scoreless.map((item) => [undefined, item] as const)].slice(
    offset,
    offset + limit,
  );
  return page.map(([score, item]) =>
    score === undefined ? toItem(item) : { ...toItem(item), score },
  );
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** One `[…]` step of a field path over the values reached so far. */
function indexInto(values: unknown[], index: string): unknown[] {
  return values.flatMap((v) => {
    if (!Array.isArray(v)) return [];
    if (index === '*') return v;
    let i = Number.parseInt(index, 10);
    if (Number.isNaN(i)) return [];
    if (i < 0) i += v.length;
    return i >= 0 && i < v.length ? [v[i]] : [];
  });
}

/**
 * The texts an index field selects in a value, as LangGraph's stores read field paths: `$` is
 * the whole value, `a.b` a nested field, `a[*].b` every element, `a[0]` / `a[-1]` one. A
 * non-string leaf is embedded as its JSON.
 */
export function textsAt(value: unknown, path: string): string[] {
  if (path === '$') return [JSON.stringify(value, null, 2)];
  let reached: unknown[] = [value];
  for (const part of path.split('.')) {
    const match = /^([^[\]]*)((?:\[[^\]]*\])*)$/.exec(part);
    if (match === null) return [];
    const [, name = '', brackets = ''] = match;
    if (name !== '') reached = reached.flatMap((v) => (isRecord(v) && name in v ? [v[name]] : []));
    for (const step of brackets.match(/\[[^\]]*\]/g) ?? []) {
      reached = indexInto(reached, step.slice(1, -1));
    }
  }
  return reached.flatMap((v) => {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      return [String(v)];
    return v === null || v === undefined ? [] : [JSON.stringify(v, null, 2)];
  });
}
