import type { JsonValue } from '../json.js';

/*
 * Lexical terms: the words of a payload's string values (and numbers), never its keys. A term
 * is a maximal run of letters, digits and combining marks (`\p{L}\p{N}\p{M}`), lowercased, at
 * least two code units long and not a stopword. Matching is by whole term, so `config` does not
 * match `configuration`.
 */

export const MIN_TERM_LENGTH = 2;
/** Terms of the query (and, separately, of the latest goal) that take part in relevance. */
export const MAX_QUERY_TERMS = 32;

export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his ' +
    'i if in into is it its me my no not of on or our she so than that the their them then ' +
    'there these they this those to too up us was we were what when where which while who why ' +
    'will with would you your'
  ).split(' '),
);

// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range is meant.
const ASCII_ONLY = /^[\u0000-\u007f]*$/;
const ASCII_SEPARATORS = /[^a-z0-9]+/;
const SEPARATORS = /[^\p{L}\p{N}\p{M}]+/u;

/** Where terms go (a Set, or a consumer that tolerates repeats). */
export interface TermSink {
  add(term: string): unknown;
}

/** The longest stopword: longer terms skip the lookup. */
const MAX_STOPWORD_LENGTH = 5;

/**
 * Adds the terms of `text` to `out`: the text is lowercased, then split at every run of
 * characters outside `\p{L}\p{N}\p{M}` (for ASCII text, outside `a-z0-9`: the same split).
 */
export function addTerms(text: string, out: TermSink): void {
  const lower = text.toLowerCase();
  const parts = lower.split(ASCII_ONLY.test(lower) ? ASCII_SEPARATORS : SEPARATORS);
  for (let i = 0; i < parts.length; i++) {
    const term = parts[i]!;
    if (term.length < MIN_TERM_LENGTH) continue;
    if (term.length > MAX_STOPWORD_LENGTH || !STOPWORDS.has(term)) out.add(term);
  }
}

/** Adds the terms of every string value and finite number inside `value` (keys excluded). */
export function addValueTerms(value: JsonValue | undefined, out: TermSink, depth = 0): void {
  if (typeof value === 'string') {
    addTerms(value, out);
  } else if (typeof value === 'number') {
    if (Number.isFinite(value)) addTerms(String(value), out);
  } else if (value !== null && typeof value === 'object' && depth < MAX_TEXT_DEPTH) {
    if (Array.isArray(value)) {
      for (const item of value) addValueTerms(item, out, depth + 1);
    } else {
      for (const key in value) addValueTerms(value[key], out, depth + 1);
    }
  }
}

/** Deeper values contribute no terms and no excerpt (payloads are this shallow in practice). */
export const MAX_TEXT_DEPTH = 64;

/** The distinct terms of a query, in order of first appearance, at most MAX_QUERY_TERMS. */
export function queryTerms(text: string): string[] {
  const out = new Set<string>();
  addTerms(text, out);
  return [...out].slice(0, MAX_QUERY_TERMS);
}

/** Collation of canonical JSON keys (`localeCompare` order; see canonical.ts). */
const compareKeys = new Intl.Collator().compare;

/**
 * The first `max` characters of a payload's string and number values, in canonical key order,
 * whitespace collapsed to single spaces, trimmed; `…` marks a cut. Deterministic for equal
 * content whatever order its keys were stored in.
 */
export function excerpt(value: JsonValue | undefined, max: number): string {
  if (max <= 0) return '';
  const parts: string[] = [];
  collectLeaves(value, parts, { left: max + 1 }, 0);
  return clip(parts.join(' ').replace(/\s+/g, ' ').trim(), max);
}

function collectLeaves(
  value: JsonValue | undefined,
  out: string[],
  budget: { left: number },
  depth: number,
): void {
  if (budget.left <= 0) return;
  if (typeof value === 'string') {
    const part = value.length > budget.left + 1 ? value.slice(0, budget.left + 1) : value;
    out.push(part);
    budget.left -= part.length + 1;
  } else if (typeof value === 'number') {
    if (Number.isFinite(value)) {
      const part = String(value);
      out.push(part);
      budget.left -= part.length + 1;
    }
  } else if (value !== null && typeof value === 'object' && depth < MAX_TEXT_DEPTH) {
    if (Array.isArray(value)) {
      for (const item of value) collectLeaves(item, out, budget, depth + 1);
    } else {
      for (const key of Object.keys(value).sort(compareKeys)) {
        collectLeaves(value[key], out, budget, depth + 1);
      }
    }
  }
}

/** `text` cut to at most `max` code units (never inside a surrogate pair), `…` marking a cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 1) return max === 1 ? '…' : '';
  return cut(text, max - 1).trimEnd() + '…';
}

/** The first `length` code units of `text`, one fewer when that would split a surrogate pair. */
export function cut(text: string, length: number): string {
  if (text.length <= length) return text;
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}
