/**
 * A thread metadata filter as a subset match: a thread matches when its metadata holds every
 * key of the filter object with an equal value, recursively for nested objects; any other value
 * (string, number, boolean, null, array) must be equal as a whole. The filter is flattened to
 * its leaves, each a key path and the canonical JSON of the value there, which the store turns
 * into one comparison per leaf. Pure.
 */
import { canonicalJson } from '../canonical.js';
import { err, ok, type Result } from '../errors.js';

export interface MetadataLeaf {
  /** Keys from the metadata object down to the value. */
  path: string[];
  /** canonicalJson of the value the path must hold. */
  value: string;
}

/** Most leaves and nesting a filter may have: each leaf is a comparison on every candidate row. */
export const MAX_METADATA_FILTER_LEAVES = 32;
export const MAX_METADATA_FILTER_DEPTH = 8;

const invalid = (path: string, message: string) =>
  err({ code: 'VALIDATION_FAILED' as const, message, issues: [{ path, message }] });

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The leaves of `filter` (a JSON object); VALIDATION_FAILED for anything else, for a key with a
 * double quote, backslash or control character (which the databases' JSON paths cannot name
 * alike), an empty nested object (it would match only by its absence of keys), or a filter
 * beyond the bounds above. `{}` has no leaves: it matches every thread.
 */
export function metadataLeaves(filter: unknown, at = '$.metadata'): Result<MetadataLeaf[]> {
  if (!isObject(filter)) return invalid(at, 'metadata filter must be a JSON object');
  const leaves: MetadataLeaf[] = [];
  const walk = (value: Record<string, unknown>, path: string[]): Result<void> => {
    if (path.length >= MAX_METADATA_FILTER_DEPTH) {
      return invalid(at, `metadata filter nests deeper than ${MAX_METADATA_FILTER_DEPTH} levels`);
    }
    for (const [key, inner] of Object.entries(value)) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are refused
      if (key === '' || /["\\\u0000-\u001f]/.test(key)) {
        return invalid(`${at}.${key}`, `metadata filter key ${JSON.stringify(key)} is not allowed`);
      }
      const here = [...path, key];
      if (isObject(inner)) {
        if (Object.keys(inner).length === 0) {
          return invalid(`${at}.${here.join('.')}`, 'metadata filter holds an empty object');
        }
        const nested = walk(inner, here);
        if (!nested.ok) return nested;
        continue;
      }
      if (leaves.length >= MAX_METADATA_FILTER_LEAVES) {
        return invalid(at, `metadata filter has more than ${MAX_METADATA_FILTER_LEAVES} values`);
      }
      leaves.push({ path: here, value: canonicalJson(inner) });
    }
    return ok(undefined);
  };
  const walked = walk(filter, []);
  return walked.ok ? ok(leaves) : walked;
}
