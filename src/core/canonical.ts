/**
 * Canonical JSON exactly as the StateWeave SDK writes it, so content ids are byte-compatible:
 * no whitespace; object keys ordered by `a.localeCompare(b)` (not code-unit order); entries whose
 * value is `undefined` dropped; arrays kept in order; finite numbers as `String(n)`, non-finite
 * numbers as a quoted string (`"NaN"`, `"Infinity"`); strings, booleans and null as
 * `JSON.stringify` writes them.
 *
 * Pure. Undefined at the top level or inside an array is written as `null`, as JSON.stringify does.
 * Throws a TypeError for a bigint anywhere in the value: it has no faithful JSON form.
 */
export function canonicalJson(value: unknown): string {
  return write(value);
}

/**
 * True when `JSON.stringify(value)` already is the canonical text: plain objects and arrays only,
 * every object's own keys in canonical order (a stable sort keeps keys that compare equal in
 * their own order, hence `<= 0`), finite numbers, no `toJSON`-bearing or exotic objects, no
 * functions or undefined. JSON.stringify writes keys in `Object.keys` order, so the two agree.
 * Values read back from canonical text (log entries, stored payloads) always pass, which turns
 * their canonicalisation into one native stringify. Allocates nothing but key lists.
 */
function isCanonicalTree(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth > MAX_FAST_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!isCanonicalTree(value[i], depth + 1)) return false;
        }
        return true;
      }
      if (!isPlainRecord(value)) return false;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      if (keys.length > 1 && !shapeOf(keys).ordered) return false;
      for (let i = 0; i < keys.length; i++) {
        if (!isCanonicalTree(record[keys[i]!], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

function isPlainRecord(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Deeper values take the general writer, which bounds the cost of repeated fast-path checks. */
const MAX_FAST_DEPTH = 64;

/**
 * `a.localeCompare(b)` with no arguments is specified as `new Intl.Collator().compare(a, b)`;
 * one shared collator gives the same order without building one per comparison.
 */
const compareKeys = new Intl.Collator().compare;

/** An object shape: its own key list, and those keys in canonical order with `"key":` prefixes. */
interface Shape {
  own: readonly string[];
  keys: readonly string[];
  quoted: readonly string[];
  /** The own key order already is the canonical order. */
  ordered: boolean;
}

const EMPTY_SHAPE: Shape = { own: [], keys: [], quoted: [], ordered: true };

/**
 * Shapes by the object's first own key, each bucket holding the few key lists seen with that
 * first key. Payloads repeat a few shapes many times, so sorting and quoting keys (the costly
 * part of canonicalisation) mostly becomes one map lookup and a key-by-key comparison — no
 * joined lookup string is built. Keys read from JSON are interned, so the comparison is mostly
 * pointer checks. Bounded.
 */
const shapes = new Map<string, Shape[]>();
const SHAPE_BUCKET_LIMIT = 16;
const SHAPE_CACHE_LIMIT = 4096;

function shapeOf(own: string[]): Shape {
  if (own.length === 0) return EMPTY_SHAPE;
  const first = own[0]!;
  const bucket = shapes.get(first);
  if (bucket !== undefined) {
    for (let i = 0; i < bucket.length; i++) {
      const cached = bucket[i]!;
      if (sameKeys(cached.own, own)) return cached;
    }
  }
  const keys = [...own].sort(compareKeys);
  const shape: Shape = {
    own,
    keys,
    quoted: keys.map((key) => JSON.stringify(key) + ':'),
    ordered: sameKeys(own, keys),
  };
  if (bucket === undefined) {
    if (shapes.size >= SHAPE_CACHE_LIMIT) shapes.clear();
    shapes.set(first, [shape]);
  } else {
    if (bucket.length >= SHAPE_BUCKET_LIMIT) bucket.length = 0;
    bucket.push(shape);
  }
  return shape;
}

/**
 * `own` (an object's own keys) in canonical order: the order a value read back from its canonical
 * text was written in. Cached by shape, like canonicalisation itself.
 */
export function canonicalKeyOrder(own: string[]): readonly string[] {
  return shapeOf(own).keys;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Characters JSON.stringify escapes: quote, backslash, controls, and (lone) surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes.
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/**
 * `JSON.stringify(text)` for a string. Most strings need no escape, and quoting them directly
 * is cheaper than the native serialiser, which copies through a growing buffer.
 */
export function quoteJson(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : '"' + text + '"';
}

function write(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return quoteJson(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      // Written as a number it would read back as a different value once past 2^53, or as a
      // number where a bigint went in: no faithful JSON form exists, so the caller must choose.
      throw new TypeError(
        `canonicalJson: bigint ${String(value)}n is not JSON; convert it to a string or a safe integer first`,
      );
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        if (isCanonicalTree(value, 0)) return JSON.stringify(value);
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          const item: unknown = value[i];
          out += item === undefined || typeof item === 'function' ? 'null' : write(item);
        }
        return out + ']';
      }
      const record = value as Record<string, unknown>;
      const own = Object.keys(record);
      const shape = own.length > 1 ? shapeOf(own) : undefined;
      // One look at the shape decides: already canonical all the way down → native stringify.
      if ((shape === undefined || shape.ordered) && isPlainRecord(record)) {
        let canonical = true;
        for (let i = 0; i < own.length && canonical; i++) {
          canonical = isCanonicalTree(record[own[i]!], 1);
        }
        if (canonical) return JSON.stringify(record);
      }
      const { keys, quoted } = shape ?? shapeOf(own);
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const item = record[keys[i]!];
        if (item === undefined || typeof item === 'function') continue;
        if (out.length > 1) out += ',';
        out += quoted[i]! + write(item);
      }
      return out + '}';
    }
    default:
      return 'null';
  }
}

/**
 * True when `JSON.stringify(value)` already is `canonicalJson(value)` — always the case for values
 * parsed from canonical text. Cost: one walk of the value, no string building.
 */
export const isCanonicallyOrdered = (value: unknown): boolean => isCanonicalTree(value, 0);

/** Returned by a `canonicalObject` override to leave a key out. */
export const OMIT: unique symbol = Symbol('omit');

/**
 * The canonical text of one object whose values can be overridden per key: `override(key, value)`
 * returns the text to write, `OMIT` to leave the key out, or undefined for the default. Lets a
 * caller hash a view of an object (say, without a signature) without building a copy of it.
 */
export function canonicalObject(
  record: Record<string, unknown>,
  override: (key: string, value: unknown) => string | typeof OMIT | undefined,
): string {
  const { keys, quoted } = shapeOf(Object.keys(record));
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = record[key];
    if (item === undefined || typeof item === 'function') continue;
    const text = override(key, item);
    if (text === OMIT) continue;
    if (out.length > 1) out += ',';
    out += quoted[i]! + (text ?? write(item));
  }
  return out + '}';
}

/** Stands for a long list while the value around it is rendered (see canonicalListPieces). */
const LIST_MARK = '\u0000weft-list';
const LIST_MARK_TEXT = write(LIST_MARK);

/**
 * `canonicalJson(value)` in pieces, for a value holding one long list at `path` (keys from
 * `value` down): the text around the list and each item's text, rendered `every` items per step
 * (a generator that yields between steps, so a caller can pause). The pieces joined are
 * canonicalJson(value). Undefined when there is no list at `path` (or the value's text holds the
 * mark itself): the caller renders the value whole. Pure.
 */
export function* canonicalListPieces(
  value: unknown,
  path: readonly string[],
  every: number,
): Generator<void, string[] | undefined, void> {
  const list = path.reduce<unknown>(
    (at, key) =>
      typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined,
    value,
  );
  if (!Array.isArray(list)) return undefined;
  const around = write(replacedAt(value, path, LIST_MARK)).split(LIST_MARK_TEXT);
  if (around.length !== 2) return undefined;
  const pieces = [`${around[0]}[`];
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    const text = item === undefined || typeof item === 'function' ? 'null' : write(item);
    pieces.push(i === 0 ? text : `,${text}`);
    if (i > 0 && i % every === 0) yield;
  }
  pieces.push(`]${around[1]}`);
  return pieces;
}

/** `value` with what is at `path` replaced by `by` (copies along the path only). */
function replacedAt(value: unknown, path: readonly string[], by: unknown): unknown {
  if (path.length === 0) return by;
  const record = value as Record<string, unknown>;
  const [key, ...rest] = path as [string, ...string[]];
  return { ...record, [key]: replacedAt(record[key], rest, by) };
}
