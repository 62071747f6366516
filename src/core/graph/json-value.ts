import { canonicalKeyOrder } from '../canonical.js';
import type { JsonValue } from '../json.js';

/** Payloads nested deeper than this are refused (this also turns a cyclic object into a refusal). */
export const MAX_JSON_DEPTH = 512;

export interface JsonProblem {
  /** Path below the checked value, e.g. `.a[2]`; empty for the value itself. */
  path: string;
  reason: string;
}

const isPlainObject = (value: object): boolean => {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

const keyPath = (key: string): string =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;

/**
 * The first reason `value` is not plain JSON (undefined, a non-finite number, a function, a
 * class instance, a hole in an array, nesting deeper than MAX_JSON_DEPTH), or undefined when it
 * is. Pure; cost O(size of value).
 */
export function findJsonProblem(value: unknown, depth = 0): JsonProblem | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : { path: '', reason: `${value} is not JSON` };
    case 'object': {
      if (value === null) return undefined;
      if (depth >= MAX_JSON_DEPTH) {
        return { path: '', reason: `nested deeper than ${MAX_JSON_DEPTH} levels (or cyclic)` };
      }
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) return { path: `[${i}]`, reason: 'array hole is not JSON' };
          const inner = findJsonProblem(value[i], depth + 1);
          if (inner) return { path: `[${i}]${inner.path}`, reason: inner.reason };
        }
        return undefined;
      }
      if (!isPlainObject(value)) return { path: '', reason: 'not a plain object' };
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const inner = findJsonProblem(record[key], depth + 1);
        if (inner) return { path: `${keyPath(key)}${inner.path}`, reason: inner.reason };
      }
      return undefined;
    }
    default:
      return { path: '', reason: `a ${typeof value} is not JSON` };
  }
}

/**
 * A deep, frozen copy of a value already known to be plain JSON. Key order is preserved, so
 * `JSON.stringify` of the copy equals that of the original (an export then round-trips byte for
 * byte); an own `__proto__` key (which `JSON.parse` can produce) stays an own data property.
 */
export function frozenJsonCopy(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenJsonCopy)) as JsonValue[];
  const out: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) {
    const item = frozenJsonCopy(value[key] as JsonValue);
    if (key === '__proto__') {
      Object.defineProperty(out, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      out[key] = item;
    }
  }
  return Object.freeze(out);
}

/** What `tryFrozenJsonCopy` returns for a value that `findJsonProblem` would refuse. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/**
 * A deep, frozen copy of `value` with its keys in canonical order when `findJsonProblem(value)`
 * finds nothing, else NOT_JSON — the check and the copy in one pass (ask `findJsonProblem` for
 * the reason). A node appended then reads the same from memory as from its stored (canonical)
 * text, whatever order the caller wrote its keys in. Pure.
 */
export function tryFrozenJsonCopy(value: unknown, depth = 0): JsonValue | typeof NOT_JSON {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : NOT_JSON;
    case 'object': {
      if (value === null) return null;
      if (depth >= MAX_JSON_DEPTH) return NOT_JSON;
      if (Array.isArray(value)) {
        const out = new Array<JsonValue>(value.length);
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) return NOT_JSON;
          const item = tryFrozenJsonCopy(value[i], depth + 1);
          if (item === NOT_JSON) return NOT_JSON;
          out[i] = item;
        }
        return Object.freeze(out) as JsonValue[];
      }
      if (!isPlainObject(value)) return NOT_JSON;
      const record = value as Record<string, unknown>;
      const out: { [key: string]: JsonValue } = {};
      for (const key of canonicalKeyOrder(Object.keys(record))) {
        const item = tryFrozenJsonCopy(record[key], depth + 1);
        if (item === NOT_JSON) return NOT_JSON;
        if (key === '__proto__') {
          Object.defineProperty(out, key, {
            value: item,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else {
          out[key] = item;
        }
      }
      return Object.freeze(out);
    }
    default:
      return NOT_JSON;
  }
}

/**
 * A cheap, bounded estimate of the canonical JSON length of `value`: it stops as soon as the
 * running total exceeds `budget` (and then returns a number above `budget`). Strings count their
 * length plus quotes (escapes ignored). Values that are not JSON count as nothing; the shape rules
 * reject them later.
 */
export function estimateJsonSize(value: unknown, budget: number, depth = 0): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
      return String(value).length;
    case 'boolean':
      return value ? 4 : 5;
    case 'object': {
      if (value === null) return 4;
      if (depth >= MAX_JSON_DEPTH) return 0;
      let total = 2;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length && total <= budget; i++) {
          total += 1 + estimateJsonSize(value[i], budget - total, depth + 1);
        }
        return total;
      }
      const record = value as Record<string, unknown>;
      for (const key in record) {
        if (total > budget) break;
        if (!Object.hasOwn(record, key)) continue;
        total += key.length + 4 + estimateJsonSize(record[key], budget - total, depth + 1);
      }
      return total;
    }
    default:
      return 0;
  }
}
