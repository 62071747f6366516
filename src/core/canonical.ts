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

const compareKeys = (a: string, b: string): number => a.localeCompare(b);

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
      const keys = Object.keys(record).sort(compareKeys);
      let out = '{';
      let first = true;
      for (const key of keys) {
        const item = record[key];
        if (item === undefined || typeof item === 'function') continue;
        if (!first) out += ',';
        first = false;
        out += JSON.stringify(key) + ':' + write(item);
      }
      return out + '}';
    }
    default:
      return 'null';
  }
}
