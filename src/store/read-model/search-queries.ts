/**
 * Full-text search over node payloads, with each database's own engine: SQLite's FTS5 table
 * `node_search` (over node_text.body, kept by the triggers of migration 0010) ranked by bm25,
 * Postgres's `tsv` column (GIN-indexed) matched by websearch_to_tsquery and ranked by ts_rank.
 *
 * What is indexed is a node's text (`nodeSearchText`): the string values of its payload, joined
 * by spaces — no keys, numbers or JSON punctuation. The store writes it in the node's
 * transaction (thread-store.ts derives it from the plain payload, before sealing).
 *
 * The user's query is parsed here once (`parseSearchQuery`, websearch syntax: words, "phrases",
 * `or`, `-word`) and rendered for each engine, every word and phrase quoted for FTS5, so no
 * input can be an FTS5 syntax error; a query with no word to look for answers nothing.
 */
import { isTombstone } from '../../core/graph/tombstone.js';
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { type NodeTextRow, node, nodeSearch, nodeText, thread } from '../tables/index.js';
import { type Lineage, type Lineages, nodeSpans } from './lineage.js';
import type { NodeRow } from './rows.js';
import { marks } from './select.js';

/** The longest text indexed per node, in UTF-16 code units (the rest is not searchable). */
export const MAX_SEARCH_TEXT = 65_536;

/**
 * Private-use characters the databases put around matched words in a snippet. Indexed text never
 * holds them (they become spaces), so every one in a snippet is a marker.
 */
const MARK_START = '\uE000';
const MARK_END = '\uE001';
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it replaces
const UNINDEXED = /[\u0000\uE000\uE001]/g;

/**
 * The searchable text of a canonical JSON payload: its string values in document order, joined
 * by single spaces, NUL and the snippet markers replaced by spaces, cut at MAX_SEARCH_TEXT (never
 * inside a surrogate pair). Pure; '' for a payload without strings.
 */
export function nodeSearchText(payload: string): string {
  const parts: string[] = [];
  let length = 0;
  // Iterative, so a deeply nested payload cannot overflow the stack.
  const parsed = JSON.parse(payload) as unknown;
  // A redacted node has no text to find (its tombstone's reason is not content).
  if (isTombstone(parsed)) return '';
  const stack: unknown[] = [parsed];
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

/** The node_text rows of new nodes: one per node with any text. */
export function nodeTextRows(nodes: readonly NodeRow[]): NodeTextRow[] {
  const rows: NodeTextRow[] = [];
  for (const n of nodes) {
    const body = nodeSearchText(n.payload);
    if (body.trim() !== '') {
      rows.push({ threadId: n.threadId, sequence: n.sequence, kind: n.kind, body });
    }
  }
  return rows;
}

/** A word or a "quoted phrase" of a query. */
export interface SearchItem {
  text: string;
  phrase: boolean;
}

/**
 * A parsed query: every group must match (a group matches when one of its items does), and no
 * excluded item may. Empty `groups`: nothing to look for.
 */
export interface ParsedSearch {
  groups: SearchItem[][];
  excluded: SearchItem[];
}

/** Whether an item holds a letter or digit, i.e. anything a tokenizer would index. */
const HAS_WORD = /[\p{L}\p{N}]/u;

/**
 * Parses a query in websearch syntax, as Postgres's websearch_to_tsquery reads it: words and
 * "quoted phrases" (an unclosed quote runs to the end) must all match; `or` between two of them
 * lets either match; a leading `-` excludes a word or phrase. Everything else is text: the
 * tokenizers split it. Items without a letter or digit are dropped. Pure; never fails.
 */
export function parseSearchQuery(query: string): ParsedSearch {
  const groups: SearchItem[][] = [];
  const excluded: SearchItem[] = [];
  let orPending = false;
  let i = 0;
  while (i < query.length) {
    if (/\s/u.test(query[i]!)) {
      i++;
      continue;
    }
    let negated = false;
    while (query[i] === '-') {
      negated = true;
      i++;
    }
    let item: SearchItem;
    if (query[i] === '"') {
      const close = query.indexOf('"', i + 1);
      const end = close < 0 ? query.length : close;
      item = { text: query.slice(i + 1, end), phrase: true };
      i = end + 1;
    } else {
      let end = i;
      while (end < query.length && !/\s/u.test(query[end]!) && query[end] !== '"') end++;
      item = { text: query.slice(i, end), phrase: false };
      i = end;
    }
    if (!negated && !item.phrase && item.text.toLowerCase() === 'or') {
      orPending = groups.length > 0;
      continue;
    }
    if (!HAS_WORD.test(item.text)) continue;
    if (negated) {
      excluded.push(item);
    } else if (orPending) {
      groups.at(-1)!.push(item);
    } else {
      groups.push([item]);
    }
    orPending = false;
  }
  return { groups, excluded };
}

/** FTS5: each item a quoted string (FTS5 tokenizes it into a phrase), so nothing is syntax. */
const ftsItem = (item: SearchItem) => `"${item.text.replaceAll('"', '""')}"`;
const ftsAny = (items: readonly SearchItem[]) => `(${items.map(ftsItem).join(' OR ')})`;

/** The FTS5 MATCH text of a parsed query; undefined when it looks for nothing. */
export function ftsMatchText(parsed: ParsedSearch): string | undefined {
  if (parsed.groups.length === 0) return undefined;
  const wanted = `(${parsed.groups.map(ftsAny).join(' AND ')})`;
  return parsed.excluded.length === 0 ? wanted : `${wanted} NOT ${ftsAny(parsed.excluded)}`;
}

/** websearch_to_tsquery text of a parsed query (its own syntax, rebuilt from the items). */
export function websearchText(parsed: ParsedSearch): string | undefined {
  if (parsed.groups.length === 0) return undefined;
  const item = (i: SearchItem) => (i.phrase ? `"${i.text}"` : i.text.replace(/^-+/, ''));
  return [
    ...parsed.groups.map((g) => g.map(item).join(' or ')),
    ...parsed.excluded.map((i) => `-${item(i)}`),
  ].join(' ');
}

/** A snippet of a node's text: `highlights` are the matched words, as UTF-16 offsets in `text`. */
export interface SearchSnippet {
  text: string;
  highlights: Array<{ start: number; length: number }>;
}

/** A snippet as the database marked it (MARK_START … MARK_END), as text and ranges. */
export function snippetOf(marked: string): SearchSnippet {
  let text = '';
  const highlights: SearchSnippet['highlights'] = [];
  let start: number | undefined;
  for (const part of marked.split(/([\uE000\uE001])/u)) {
    if (part === MARK_START) {
      start ??= text.length;
    } else if (part === MARK_END) {
      if (start !== undefined && text.length > start) {
        highlights.push({ start, length: text.length - start });
      }
      start = undefined;
    } else {
      text += part;
    }
  }
  return { text, highlights };
}

export interface NodeSearchQuery {
  tenantId: string;
  /** The user's query, in websearch syntax (parseSearchQuery). */
  text: string;
  /** Only nodes of this thread (storage key). */
  threadId?: string | undefined;
  kinds?: readonly string[] | undefined;
  take: number;
  /** Matches to skip, in rank order. */
  offset: number;
}

export interface NodeSearchHit {
  /** Storage key of the node's thread. */
  threadId: string;
  sequence: number;
  nodeId: string;
  /** Higher is better; comparable within one search only. */
  score: number;
  snippet: SearchSnippet;
}

/**
 * Words around the matches a snippet shows (FTS5 allows at most 64). FTS5 marks text left out
 * with an ellipsis; ts_headline shows one passage around the best match, unmarked.
 */
const SNIPPET_WORDS = 24;
const ELLIPSIS = '…';
const HEADLINE_OPTIONS = [
  `StartSel="${MARK_START}"`,
  `StopSel="${MARK_END}"`,
  `MaxWords=${SNIPPET_WORDS}`,
  'MinWords=8',
  'ShortWord=0',
].join(', ');

export interface SearchQueries {
  /** The tenant's nodes matching the query, best first (ties by thread and sequence). */
  searchNodes(query: NodeSearchQuery): Promise<NodeSearchHit[]>;
}

export function createSearchQueries(weft: WeftPrisma, lineages: Lineages): SearchQueries {
  const T = nodeText.c;
  const H = thread.c;
  const N = node.c;
  /** The joins and filters both engines share (`t` the node_text row). */
  const scope = (q: NodeSearchQuery, lineage: Lineage | undefined) => {
    const values: unknown[] = [q.tenantId];
    // A deleted thread's nodes are found only through the forks still reading them.
    let where = ` AND h.${H.tenantId} = ?${lineage === undefined ? ` AND h.${H.deletedAt} IS NULL` : ''}`;
    if (lineage !== undefined) {
      // A thread's nodes include those of its shared history, each stretch within its bounds.
      const spans = nodeSpans(lineage).map((span) => {
        values.push(span.threadId, span.fromSeq, span.toSeq);
        return `(t.${T.threadId} = ? AND t.${T.sequence} > ? AND t.${T.sequence} <= ?)`;
      });
      where += ` AND (${spans.join(' OR ')})`;
    }
    if (q.kinds !== undefined) {
      where += ` AND t.${T.kind} IN (${marks(q.kinds.length)})`;
      values.push(...q.kinds);
    }
    const joins =
      ` JOIN ${thread.sql} h ON h.${H.id} = t.${T.threadId}` +
      ` JOIN ${node.sql} n ON n.${N.threadId} = t.${T.threadId} AND n.${N.sequence} = t.${T.sequence}`;
    return { joins, where, values };
  };
  // Within one thread ties go by sequence, whichever thread of its lineage holds the node.
  const ties = (alias: string, lineage: Lineage | undefined) =>
    lineage === undefined
      ? `${alias}.${T.threadId}, ${alias}.${T.sequence}`
      : `${alias}.${T.sequence}`;
  const order = (score: string, lineage: Lineage | undefined) =>
    ` ORDER BY ${score}, ${ties('t', lineage)}`;

  const sqlite = (q: NodeSearchQuery, match: string, lineage: Lineage | undefined) => {
    const s = scope(q, lineage);
    const fts = nodeSearch.sql;
    return rawQuery(
      weft,
      `SELECT t.${T.threadId}, t.${T.sequence}, n.${N.id}, -bm25(${fts}) AS score, ` +
        `snippet(${fts}, 0, ?, ?, ?, ?) AS snippet FROM ${fts} ` +
        `JOIN ${nodeText.sql} t ON t.${T.id} = ${fts}.rowid${s.joins} ` +
        `WHERE ${fts} MATCH ?${s.where}${order(`bm25(${fts})`, lineage)} LIMIT ? OFFSET ?`,
      [MARK_START, MARK_END, ELLIPSIS, SNIPPET_WORDS, match, ...s.values, q.take, q.offset],
    );
  };

  // The headline is computed for the page's rows only: it re-parses each text.
  const postgres = (q: NodeSearchQuery, websearch: string, lineage: Lineage | undefined) => {
    const s = scope(q, lineage);
    const tsquery = `(SELECT websearch_to_tsquery('simple', CAST(? AS TEXT)) AS query) q`;
    return rawQuery(
      weft,
      `SELECT hit.${T.threadId}, hit.${T.sequence}, hit.${N.id}, hit.score, ` +
        `ts_headline('simple', hit.${T.body}, q.query, CAST(? AS TEXT)) AS snippet FROM (` +
        `SELECT t.${T.threadId}, t.${T.sequence}, n.${N.id}, t.${T.body}, ` +
        `ts_rank(t.${T.tsv}, q.query) AS score FROM ${nodeText.sql} t${s.joins}, ${tsquery} ` +
        `WHERE t.${T.tsv} @@ q.query${s.where}${order('score DESC', lineage)} LIMIT ? OFFSET ?` +
        `) hit, ${tsquery}` +
        ` ORDER BY hit.score DESC, ${ties('hit', lineage)}`,
      [HEADLINE_OPTIONS, websearch, ...s.values, q.take, q.offset, websearch],
    );
  };

  return {
    async searchNodes(q) {
      if (q.take <= 0 || q.kinds?.length === 0) return [];
      const parsed = parseSearchQuery(q.text);
      const text = weft.provider === 'postgres' ? websearchText(parsed) : ftsMatchText(parsed);
      if (text === undefined) return [];
      const lineage = q.threadId === undefined ? undefined : await lineages.of(q.threadId);
      const rows =
        weft.provider === 'postgres'
          ? await postgres(q, text, lineage)
          : await sqlite(q, text, lineage);
      return rows.map((raw) => {
        const row = node.decode(raw, weft.provider);
        return {
          // A node of a shared stretch is reported in the thread searched.
          threadId: q.threadId ?? row.threadId,
          sequence: row.sequence,
          nodeId: row.id,
          score: Number(raw.score),
          snippet: snippetOf(String(raw.snippet ?? '')),
        };
      });
    },
  };
}
