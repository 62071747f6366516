import type { ValidationIssue } from './errors.js';
import { childPath, pathOf } from './json-path.js';

/** `String.prototype.isWellFormed` (Node 20+), which the ES2023 lib typings do not declare. */
type WellFormedCheck = string & { isWellFormed(): boolean };

/**
 * Why `text` cannot be stored and read back exactly, or undefined when it can. Two things do
 * not round-trip: a lone UTF-16 surrogate (both databases store UTF-8, so it comes back as
 * U+FFFD and the value no longer matches itself) and U+0000 (Postgres text refuses it; SQLite
 * takes it, and one rule for both backends keeps data portable between them). Pure.
 */
export function textProblem(text: string): string | undefined {
  if (!(text as WellFormedCheck).isWellFormed()) {
    return 'contains a lone UTF-16 surrogate (not well-formed Unicode), which cannot be stored and read back';
  }
  if (text.includes('\u0000')) return 'contains U+0000 (NUL), which cannot be stored';
  return undefined;
}

/**
 * The first string or object key inside `value` (any depth, `value` itself included) that
 * `textProblem` refuses, as an issue naming its `$`-rooted path; undefined when every one is
 * fine. Values that are not JSON are walked as far as they are plain; the JSON checks report
 * the rest. Iterative, so a deep value cannot overflow the stack; a cycle is walked once.
 */
export function findTextIssue(value: unknown, root = '$'): ValidationIssue | undefined {
  return findInputIssue(value, root);
}

/**
 * Why `n` may not be what the caller meant, or undefined. A number of magnitude above 2^53 − 1
 * is where doubles stop holding every integer: by the time it is a JS number (JSON parsing, a
 * GraphQL literal) a larger integer has already been rounded, and nothing can tell, so such
 * numbers are refused rather than stored silently changed. Pure.
 */
export function numberProblem(n: number): string | undefined {
  if (Math.abs(n) <= Number.MAX_SAFE_INTEGER || !Number.isFinite(n)) return undefined;
  return `${n} is beyond ±(2^53 − 1), where numbers stop being exact integers (it may already have been rounded): send it as a string`;
}

export interface InputIssueOptions {
  /** Refuse objects and arrays nested deeper than this (`value` itself is level 1). */
  maxDepth?: number;
  /** Refuse numbers `numberProblem` refuses. */
  exactNumbers?: boolean;
  /** The level of `value` itself, when it is part of a larger value checked in parts (default 1). */
  atDepth?: number;
}

/**
 * `findTextIssue`, and optionally the first object or array nested deeper than `maxDepth`
 * levels (hashing, canonical JSON and schema checks recurse once per level, so a deep enough
 * value would overflow the stack there instead of getting an answer) and the first number
 * `numberProblem` refuses.
 */
export function findInputIssue(
  value: unknown,
  root: string,
  options: InputIssueOptions = {},
): ValidationIssue | undefined {
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const exactNumbers = options.exactNumbers === true;
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem === undefined ? undefined : { path: root, message: problem };
  }
  if (typeof value === 'number' && exactNumbers) {
    const problem = numberProblem(value);
    return problem === undefined ? undefined : { path: root, message: problem };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const seen = new Set<object>();
  const stack: Frame[] = [{ value, parent: null, key: null, depth: options.atDepth ?? 1 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > maxDepth) {
      return {
        path: pathOf(frame, root),
        message: `nested deeper than ${maxDepth} levels of objects and arrays: flatten the value or store it as a string`,
      };
    }
    if (seen.has(frame.value)) continue;
    seen.add(frame.value);
    const isArray = Array.isArray(frame.value);
    const record = frame.value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      // Paths are only built for the value that fails, so the common case allocates little.
      if (!isArray) {
        const problem = textProblem(key);
        if (problem !== undefined) {
          return { path: childPath(pathOf(frame, root), key), message: `key ${problem}` };
        }
      }
      const item = record[key];
      const at = isArray ? Number(key) : key;
      if (typeof item === 'string') {
        const problem = textProblem(item);
        if (problem !== undefined)
          return { path: childPath(pathOf(frame, root), at), message: problem };
      } else if (typeof item === 'number') {
        const problem = exactNumbers ? numberProblem(item) : undefined;
        if (problem !== undefined)
          return { path: childPath(pathOf(frame, root), at), message: problem };
      } else if (typeof item === 'object' && item !== null) {
        stack.push({ value: item, parent: frame, key: at, depth: frame.depth + 1 });
      }
    }
  }
  return undefined;
}

interface Frame {
  value: object;
  parent: Frame | null;
  key: string | number | null;
  depth: number;
}
