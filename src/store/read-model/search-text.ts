/**
 * What search computes over a node's text itself, in bounded time whatever the text: a snippet
 * here, and on SQLite a score (scoreText in sqlite-search-thread.cjs, where the texts are read).
 * Neither uses anything but the text and the query — no statistics of the rest of the index — so
 * no tenant's answer depends on another tenant's nodes.
 *
 * The databases' own functions were not bounded: FTS5's `snippet()` and `highlight()` and
 * Postgres's `ts_headline` take time quadratic in the matches of one text (a 64 KiB node of one
 * repeated word took seconds to minutes), and FTS5's bm25 ranks with whole-index statistics,
 * which told a tenant how many of another tenant's nodes hold a word.
 *
 * Matching here is case-insensitive on whole words (runs of letters, digits and marks), which is
 * how both databases' tokenizers split text; FTS5 also folds diacritics, which this does not, so
 * such a match is found by the database but neither counted nor highlighted here.
 */

/** A snippet of a node's text: `highlights` are the matched words, as UTF-16 offsets in `text`. */
export interface SearchSnippet {
  text: string;
  highlights: Array<{ start: number; length: number }>;
}

/** Words around the first match a snippet shows. */
export const SNIPPET_WORDS = 24;
/** Of those, words shown before the first match. */
const WORDS_BEFORE = 4;
/** How far back from the first match those words are looked for (UTF-16 code units). */
const LOOK_BACK = 256;
const ELLIPSIS = '…';

const WORD_CHAR = String.raw`[\p{L}\p{N}\p{M}\p{Co}]`;
const NON_WORD = String.raw`[^\p{L}\p{N}\p{M}\p{Co}]+`;
const WORD = new RegExp(`${WORD_CHAR}+`, 'gu');

/** The words of `text`, lowercased: a query item's words, as its phrase. Pure. */
export function wordsOf(text: string): string[] {
  return [...text.matchAll(WORD)].map((m) => m[0].toLowerCase());
}

/**
 * One regex finding every query item in a text, each item its own capture group: a word, or the
 * words of a phrase with anything but word characters between them. Undefined for no items.
 */
export function createMatcher(items: readonly (readonly string[])[]): RegExp | undefined {
  const kept = items.filter((words) => words.length > 0);
  if (kept.length === 0) return undefined;
  const escaped = (w: string) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const alternatives = kept.map((words) => `(${words.map(escaped).join(NON_WORD)})`);
  return new RegExp(`(?<!${WORD_CHAR})(?:${alternatives.join('|')})(?!${WORD_CHAR})`, 'giu');
}

/**
 * How much of a text the snippet is first cut from (SNIPPET_HEAD, in characters): a passage is
 * found in the first few kilobytes of most texts, so only those are read for it; a text whose
 * passage does not end inside them is read whole (snippetOfHead).
 */
export const SNIPPET_HEAD = 4096;

/**
 * A passage of `text`: SNIPPET_WORDS words from a few before the first match, every match in it
 * highlighted, `…` where text is left out. Reads the text up to the end of the passage only.
 * Without a match, the passage starts the text. Pure.
 */
export function snippetOfText(text: string, matcher: RegExp | undefined): SearchSnippet {
  return snippetOfHead(text, false, matcher)!;
}

/**
 * snippetOfText of a whole text, from `head`, its beginning (all of it unless `cut`): undefined
 * when the head is cut before the passage ends, or holds no match — then only the whole text
 * tells. When answered it is the whole text's snippet, the passage ending on a character of the
 * head that is no word's; it differs only when a match that begins earlier runs past the head
 * (a phrase whose words are thousands of characters apart), and shows a later match. Pure.
 */
export function snippetOfHead(
  head: string,
  cut: boolean,
  matcher: RegExp | undefined,
): SearchSnippet | undefined {
  const text = head;
  let first = -1;
  if (matcher !== undefined) {
    matcher.lastIndex = 0;
    first = matcher.exec(text)?.index ?? -1;
  }
  // The start of the passage: WORDS_BEFORE word starts back from the first match.
  // Looked for in the few hundred characters before it only, the first of which may be cut.
  const words = new RegExp(WORD.source, 'gu');
  const limit = Math.max(first, 0);
  const scanFrom = Math.max(0, limit - LOOK_BACK);
  words.lastIndex = scanFrom;
  const starts: number[] = [];
  for (let m = words.exec(text); m !== null && m.index < limit; m = words.exec(text)) {
    starts.push(m.index);
  }
  if (scanFrom > 0 && starts[0] === scanFrom) starts.shift();
  const before = starts.slice(-WORDS_BEFORE);
  const from = first < 0 ? 0 : (before[0] ?? first);
  // The end: the end of the SNIPPET_WORDS-th word from there.
  words.lastIndex = from;
  let to = from;
  let lastWord = false;
  for (let n = 0; n < SNIPPET_WORDS; n++) {
    const m = words.exec(text);
    if (m === null) {
      lastWord = true;
      break;
    }
    to = m.index + m[0].length;
  }
  // Past the text's last word, what follows (symbols, punctuation) is part of the passage, up to
  // a bound: a short text is shown whole, not cut before a trailing "✓".
  if (cut && (first < 0 || lastWord || to === from || to >= text.length)) return undefined;
  if (lastWord || to === from) to = Math.min(text.length, to + 200);
  const passage = text.slice(from, to);
  const highlights: SearchSnippet['highlights'] = [];
  const lead = from > 0 ? ELLIPSIS.length : 0;
  if (matcher !== undefined) {
    matcher.lastIndex = 0;
    for (let m = matcher.exec(passage); m !== null; m = matcher.exec(passage)) {
      highlights.push({ start: lead + m.index, length: m[0].length });
    }
  }
  return {
    text: `${from > 0 ? ELLIPSIS : ''}${passage}${cut || to < text.length ? ELLIPSIS : ''}`,
    highlights,
  };
}
