/**
 * Canonical JSON exactly as the StateWeave SDK writes it, so content ids are byte-compatible:
 * no whitespace; object keys ordered by `a.localeCompare(b)` (not code-unit order); entries whose
 * value is `undefined` dropped; arrays kept in order; finite numbers as `String(n)`, non-finite
 * numbers as a quoted string (`"NaN"`, `"Infinity"`); strings, booleans and null as
 * `JSON.stringify` writes them.
 *
 * Pure. Undefined at the top level or inside an array is written as `null`, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  return write(value);
}

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
}

const EMPTY_SHAPE: Shape = { own: [], keys: [], quoted: [] };

/**
 * Shapes by the object's own key list. Payloads repeat a few shapes many times, so sorting and
 * quoting keys (the costly part of canonicalisation) mostly becomes one map lookup. A hit is
 * confirmed key by key, so keys containing the separator can never alias another shape. Bounded.
 */
const shapes = new Map<string, Shape>();
const SHAPE_CACHE_LIMIT = 4096;

function shapeOf(own: string[]): Shape {
  if (own.length === 0) return EMPTY_SHAPE;
  const id = own.length === 1 ? own[0]! : own.join('\u0000');
  const cached = shapes.get(id);
  if (cached !== undefined && sameKeys(cached.own, own)) return cached;
  const keys = [...own].sort(compareKeys);
  const shape: Shape = { own, keys, quoted: keys.map((key) => JSON.stringify(key) + ':') };
  if (shapes.size >= SHAPE_CACHE_LIMIT) shapes.clear();
  shapes.set(id, shape);
  return shape;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function write(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : JSON.stringify(String(value));
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return String(value);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          const item: unknown = value[i];
          out += item === undefined || typeof item === 'function' ? 'null' : write(item);
        }
        return out + ']';
      }
      const record = value as Record<string, unknown>;
      const { keys, quoted } = shapeOf(Object.keys(record));
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
