import type { ValidationIssue } from '../errors.js';
import { findJsonUnsafe, pathOf } from '../log/json-safety.js';

/**
 * Deepest nesting of objects and arrays accepted in a value from a caller, counted from the
 * value given (an action counts its own object as level 1). Schema validation, canonical JSON
 * and hashing recurse once per level, so without a bound a deep enough value overflows the
 * call stack instead of getting an answer; this bound leaves a wide margin under that.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * The first place where `value` is not plain JSON (a cycle, bigint, function, symbol, symbol
 * key, undefined, NaN, ±Infinity, -0, array hole, non-plain object) or nests deeper than
 * `maxDepth`, as a validation issue with its `$`-rooted path; undefined when it is fine.
 * Iterative, so neither a cycle nor a deep value can overflow the stack here. Pure.
 */
export function findPlainJsonIssue(
  value: unknown,
  root = '$',
  maxDepth = MAX_JSON_DEPTH,
): ValidationIssue | undefined {
  const unsafe = findJsonUnsafe(value, root);
  if (unsafe !== null) return { path: unsafe.path, message: unsafe.reason };
  return findTooDeep(value, root, maxDepth);
}

interface Frame {
  value: object;
  parent: Frame | null;
  key: string | number | null;
  depth: number;
}

/** Only called on values without cycles (findJsonUnsafe checked), so the walk ends. */
function findTooDeep(value: unknown, root: string, maxDepth: number): ValidationIssue | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Frame[] = [{ value, parent: null, key: null, depth: 1 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > maxDepth) {
      return {
        path: pathOf(frame, root),
        message: `nested deeper than ${maxDepth} levels of objects and arrays: flatten the value or store it as a string`,
      };
    }
    const entries: Array<[string | number, unknown]> = Array.isArray(frame.value)
      ? frame.value.map((item, i) => [i, item])
      : Object.entries(frame.value);
    for (const [key, item] of entries) {
      if (typeof item === 'object' && item !== null) {
        stack.push({ value: item, parent: frame, key, depth: frame.depth + 1 });
      }
    }
  }
  return undefined;
}
