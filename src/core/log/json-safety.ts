import { WeftFailure } from '../errors.js';
import { childPath, pathOf } from '../json-path.js';

export { childPath, type PathLink, pathOf } from '../json-path.js';

/** Where a value stops being plain JSON, and why. */
export interface JsonUnsafe {
  /** JSON path of the offending value, e.g. `$.event.payload.items[2]`. */
  path: string;
  reason: string;
  /**
   * The value is data JSON would drop without a word (a non-enumerable property), rather than
   * a value JSON cannot represent: writers must not lose it silently.
   */
  dropped?: true;
}

/** Marks an array hole on the work stack, so it is reported in traversal order. */
const HOLE: unique symbol = Symbol('hole');

interface Frame {
  value: unknown;
  parent: Frame | null;
  key: string | number | null;
  /** Number of objects above this value; the open-object stack is cut back to it. */
  depth: number;
}

/**
 * Finds the first place where `value` is not plain JSON, or returns null when it is.
 *
 * Rejected: `undefined` (as a value, object entry or array item), NaN, ±Infinity, -0, bigint,
 * symbol, function, array holes, symbol keys, non-enumerable properties of objects (flagged
 * `dropped`), cycles (reported where the cycle closes) and any object whose prototype is neither
 * `Object.prototype` nor null (Date, Map, Set, RegExp, typed arrays, boxed primitives, class
 * instances). The same object reached twice without a cycle is
 * fine: JSON writes it twice.
 *
 * Order is deterministic: depth first, object keys in `Object.keys` order, arrays by index.
 * Pure; iterative (deep values do not overflow the call stack); paths are only built for the
 * value that fails, so the happy path allocates little.
 */
export function findJsonUnsafe(value: unknown, path = '$'): JsonUnsafe | null {
  const stack: Frame[] = [{ value, parent: null, key: null, depth: 0 }];
  const open: object[] = [];
  const openFrames = new Map<object, Frame>();
  const fail = (frame: Frame, reason: string): JsonUnsafe => ({
    path: pathOf(frame, path),
    reason,
  });
  const dropped = (frame: Frame, key: string): JsonUnsafe => ({
    path: childPath(pathOf(frame, path), key),
    reason: 'non-enumerable property: JSON would silently drop it; make it enumerable or remove it',
    dropped: true,
  });

  while (stack.length > 0) {
    const frame = stack.pop()!;
    while (open.length > frame.depth) openFrames.delete(open.pop()!);
    const current = frame.value;
    if (current === HOLE) return fail(frame, 'array hole (sparse array) is not JSON: fill it');
    if (typeof current !== 'object' || current === null) {
      const reason = primitiveProblem(current);
      if (reason !== null) return fail(frame, reason);
      continue;
    }
    const ancestor = openFrames.get(current);
    if (ancestor !== undefined) return fail(frame, `cycle back to ${pathOf(ancestor, path)}`);
    const depth = frame.depth + 1;

    if (Array.isArray(current)) {
      open.push(current);
      openFrames.set(current, frame);
      for (let i = current.length - 1; i >= 0; i--) {
        const item: unknown = i in current ? current[i] : HOLE;
        if (!isSafeLeaf(item)) stack.push({ value: item, parent: frame, key: i, depth });
      }
      continue;
    }

    const proto: unknown = Object.getPrototypeOf(current);
    if (proto !== Object.prototype && proto !== null) return fail(frame, instanceProblem(current));
    const symbols = Object.getOwnPropertySymbols(current);
    if (symbols.length > 0) {
      return fail(frame, `symbol key ${String(symbols[0])} is not JSON: use a string key`);
    }
    open.push(current);
    openFrames.set(current, frame);
    const record = current as Record<string, unknown>;
    const keys = Object.keys(record);
    const names = Object.getOwnPropertyNames(record);
    if (names.length !== keys.length) {
      const enumerable = new Set(keys);
      return dropped(frame, names.find((name) => !enumerable.has(name))!);
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      const item = record[key];
      if (!isSafeLeaf(item)) stack.push({ value: item, parent: frame, key, depth });
    }
  }
  return null;
}

/** True when `findJsonUnsafe(value)` finds nothing. */
export const isJsonSafe = (value: unknown): boolean => findJsonUnsafe(value) === null;

/**
 * Throws `WeftFailure(VALIDATION_FAILED)` naming the first unsafe path; returns otherwise.
 * For deep code paths where threading a Result is awkward; prefer `findJsonUnsafe` elsewhere.
 */
export function assertJsonSafe(value: unknown, path = '$'): void {
  const problem = findJsonUnsafe(value, path);
  if (problem === null) return;
  throw new WeftFailure({
    code: 'VALIDATION_FAILED',
    message: `Value is not plain JSON at ${problem.path}: ${problem.reason}.`,
    issues: [{ path: problem.path, message: problem.reason }],
  });
}

/** Safe leaves need no frame: skipping them keeps the common case allocation-free. */
function isSafeLeaf(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    default:
      return value === null;
  }
}

function primitiveProblem(value: unknown): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      if (Number.isNaN(value)) return 'NaN is not JSON';
      if (value === Number.POSITIVE_INFINITY) return 'Infinity is not JSON';
      if (value === Number.NEGATIVE_INFINITY) return '-Infinity is not JSON';
      if (Object.is(value, -0)) return '-0 does not survive JSON (it reads back as 0): use 0';
      return null;
    case 'undefined':
      return 'undefined is not JSON: omit the key or use null';
    case 'bigint':
      return 'bigint is not JSON: convert it to a string or a safe integer';
    case 'symbol':
      return 'symbol is not JSON: use a string';
    case 'function':
      return 'function is not JSON: store data, not behaviour';
    default:
      return null;
  }
}

function instanceProblem(value: object): string {
  // The tag works across realms, where `instanceof` does not.
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  switch (tag) {
    case 'Date':
      return 'Date instance: convert to an ISO string';
    case 'Map':
      return 'Map instance: convert to a plain object or an array of [key, value] pairs';
    case 'Set':
      return 'Set instance: convert to an array';
    case 'RegExp':
      return 'RegExp instance: convert to its source string';
    case 'Number':
    case 'String':
    case 'Boolean':
      return `boxed ${tag} instance: use the primitive value`;
    case 'Error':
      return 'Error instance: convert to {name, message}';
    case 'Promise':
      return 'Promise is not JSON: await it first';
    default:
      if (ArrayBuffer.isView(value) || tag === 'ArrayBuffer') {
        return `${tag} instance (binary data): convert to an array of numbers or a base64 string`;
      }
      return `${constructorName(value)} instance is not plain JSON: convert it to a plain object`;
  }
}

function constructorName(value: object): string {
  const ctor: unknown = (value as { constructor?: unknown }).constructor;
  if (typeof ctor === 'function' && ctor.name !== '') return ctor.name;
  return 'class';
}
