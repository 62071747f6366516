'use strict';
/**
 * A node's searchable text, from its payload: the one definition that the store (indexing, via
 * search-queries.ts nodeSearchText) and the SQLite search thread (sqlite-search-thread.cjs, which
 * scores and cuts snippets from the text) both use, so the text read back for a search is the
 * text that was indexed. The text is not stored beside a plain payload: it is derived again.
 *
 * Plain CommonJS (no build step), so that the search thread loads it the same under tsx, vitest
 * and from dist/.
 */

/** The longest text indexed per node, in UTF-16 code units (the rest is not searchable). */
const MAX_SEARCH_TEXT = 65_536;

/**
 * NUL, and the private-use characters U+E000 and U+E001 that snippets were once marked with:
 * indexed text never holds them (they become spaces), as the migrations' backfill wrote it.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it replaces
const UNINDEXED = /[\u0000\uE000\uE001]/g;

/**
 * The text of a parsed JSON value: its string values in document order, joined by single spaces,
 * NUL and the snippet markers replaced by spaces, cut at MAX_SEARCH_TEXT (never inside a
 * surrogate pair). '' for a value without strings.
 */
function textOfValue(parsed) {
  const parts = [];
  let length = 0;
  // Iterative, so a deeply nested payload cannot overflow the stack.
  const stack = [parsed];
  while (stack.length > 0 && length < MAX_SEARCH_TEXT) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (value.length > 0) {
        parts.push(value);
        length += value.length + 1;
      }
    } else if (typeof value === 'object' && value !== null) {
      const children = Array.isArray(value) ? value : Object.values(value);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }
  let text = parts.join(' ');
  if (text.length > MAX_SEARCH_TEXT) {
    text = text.slice(0, MAX_SEARCH_TEXT);
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) text = text.slice(0, -1);
  }
  return text.replace(UNINDEXED, ' ');
}

/**
 * The text of a node_text row as a search reads it: `body` when the row keeps one (a sealed
 * payload's text), otherwise derived from the plain canonical JSON `payload`; '' when neither
 * gives one (a payload that is not JSON, e.g. sealed without a kept text).
 */
function textOfRow(body, payload) {
  if (typeof body === 'string') return body;
  if (typeof payload !== 'string') return '';
  let parsed;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return '';
  }
  return textOfValue(parsed);
}

exports.MAX_SEARCH_TEXT = MAX_SEARCH_TEXT;
exports.textOfValue = textOfValue;
exports.textOfRow = textOfRow;
