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

/** ASCII letters and digits (the fast path of `isTermChar`). */
const ASCII_TERM = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII_TERM[c] = 1;
for (let c = 65; c <= 90; c++) ASCII_TERM[c] = 1;
for (let c = 97; c <= 122; c++) ASCII_TERM[c] = 1;

const UNICODE_TERM = /^[\p{L}\p{N}\p{M}]$/u;

/** Adds the terms of `text` to `out`. */
export function addTerms(text: string, out: Set<string>): void {
  const n = text.length;
  let start = -1;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    let width = 1;
    let isTerm: boolean;
    if (c < 128) {
      isTerm = ASCII_TERM[c] === 1;
    } else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) width = 2;
      }
      isTerm = UNICODE_TERM.test(text.slice(i, i + width));
    }
    if (isTerm) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      addTerm(text.slice(start, i), out);
      start = -1;
    }
    i += width;
  }
  if (start >= 0) addTerm(start === 0 ? text : text.slice(start), out);
}

function addTerm(raw: string, out: Set<string>): void {
  if (raw.length < MIN_TERM_LENGTH) return;
  const term = raw.toLowerCase();
  if (!STOPWORDS.has(term)) out.add(term);
}

/** Adds the terms of every string value and finite number inside `value` (keys excluded). */
export function addValueTerms(value: JsonValue | undefined, out: Set<string>, depth = 0): void {
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

/** `' ' + terms.join(' ') + ' '`: a term t is present iff this includes `' ' + t + ' '`. */
export function termText(terms: Iterable<string>): string {
  let text = ' ';
  for (const term of terms) text += term + ' ';
  return text;
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
