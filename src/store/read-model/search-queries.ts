/**
 * Full-text search over node payloads. Each database finds the matches with its own index:
 * SQLite's contentless FTS5 table `node_search` (kept by the triggers of migration 0020),
 * Postgres's `tsv` column (GIN-indexed) matched by websearch_to_tsquery. Neither keeps a copy of
 * the text: a page's texts are derived again from their payloads (search-text-of.cjs), or read
 * from node_text.body for a payload sealed at rest, the one case the text is stored beside it.
 * What each search costs is bounded whatever the documents: only the tenant's newest
 * MAX_SEARCH_CANDIDATES matches are ranked, a query's first MAX_SEARCH_WORDS words are looked
 * for, and snippets are cut here (search-text.ts) from the first SNIPPET_HEAD characters of a
 * page's texts (the whole text only when its passage runs past them), never by the databases'
 * snippet functions, which are quadratic in the matches of one text.
 *
 * Scores use nothing but the node's own text and the query, so one tenant's scores never depend
 * on another's nodes: on SQLite a score computed from the text in the search thread (FTS5's
 * bm25 would use the whole index's statistics); on Postgres ts_rank, which reads the node's own
 * tsvector.
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
import {
  createMatcher,
  type SearchSnippet,
  SNIPPET_HEAD,
  snippetOfHead,
  snippetOfText,
  wordsOf,
} from './search-text.js';
import { textOfRow, textOfValue } from './search-text-of.cjs';
import { marks } from './select.js';
import { openSqliteSearcher } from './sqlite-searcher.js';

export type { SearchSnippet } from './search-text.js';

export { MAX_SEARCH_TEXT } from './search-text-of.cjs';

/**
 * The searchable text of a canonical JSON payload: its string values in document order, joined
 * by single spaces, NUL and the snippet markers replaced by spaces, cut at MAX_SEARCH_TEXT (never
 * inside a surrogate pair; search-text-of.cjs). Pure; '' for a payload without strings and for a
 * redacted node (its tombstone's reason is not content).
 */
export function nodeSearchText(payload: string): string {
  const parsed = JSON.parse(payload) as unknown;
  return isTombstone(parsed) ? '' : textOfValue(parsed);
}

/**
 * The node_text rows of new nodes: one per node with any text. `sealed`: the payloads are stored
 * sealed, so each row keeps its text in `body` (a search cannot read it from the payload);
 * otherwise `body` is null and the text is stored once, as the payload.
 */
export function nodeTextRows(nodes: readonly NodeRow[], sealed: boolean): NodeTextRow[] {
  const rows: NodeTextRow[] = [];
  for (const n of nodes) {
    const text = nodeSearchText(n.payload);
    if (text.trim() !== '') {
      rows.push({
        threadId: n.threadId,
        sequence: n.sequence,
        body: sealed ? text : null,
        text,
      });
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
 * The words of a query that are looked for, at most; the rest are ignored (a phrase that runs
 * past the limit keeps its first words). Matching a phrase walks every position of each of its
 * words in a text (FTS5 on SQLite), so a phrase of hundreds of words over texts of one repeated
 * word took a tenth of a second per text; this bounds each text's walk at 32 words' positions.
 */
export const MAX_SEARCH_WORDS = 32;

/** A word, as wordsOf finds them. */
const WORD_RUN = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

/** `item` with its first `n` words (wordsOf) only. */
function firstWords(item: SearchItem, n: number): SearchItem {
  let end = 0;
  let seen = 0;
  for (const m of item.text.matchAll(WORD_RUN)) {
    if (seen++ === n) break;
    end = m.index + m[0].length;
  }
  return { text: item.text.slice(0, end), phrase: item.phrase };
}

/**
 * Parses a query in websearch syntax, as Postgres's websearch_to_tsquery reads it: words and
 * "quoted phrases" (an unclosed quote runs to the end) must all match; `or` between two of them
 * lets either match; a leading `-` excludes a word or phrase. Everything else is text: the
 * tokenizers split it. Items without a letter or digit are dropped, and words past the
 * MAX_SEARCH_WORDS-th. Pure; never fails.
 */
export function parseSearchQuery(query: string): ParsedSearch {
  const groups: SearchItem[][] = [];
  const excluded: SearchItem[] = [];
  let orPending = false;
  let budget = MAX_SEARCH_WORDS;
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
    const words = wordsOf(item.text).length;
    if (words > budget) {
      if (budget === 0) break;
      item = firstWords(item, budget);
    }
    budget -= Math.min(words, budget);
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
 * The matches a search ranks: the tenant's newest, at most this many. Ranking every match made a
 * search's cost grow with the index; paging reaches 1,000 deep (MAX_SEARCH_DEPTH) anyway.
 */
export const MAX_SEARCH_CANDIDATES = 1_000;
/**
 * Text read and scored per search on SQLite, in UTF-8 bytes of what each text is read from (its
 * payload, or its body when sealed): the newest candidates up to this much are ranked (always at
 * least one), the rest are left out.
 */
export const MAX_SCORED_BYTES = 4 * 1024 * 1024;

/** The items a query looks for (not those it excludes), each as its words. */
const wantedItems = (parsed: ParsedSearch) =>
  parsed.groups.flat().map((item) => wordsOf(item.text));

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs what it is given one at a time, in order, each after a turn of the event loop. */
function oneAtATime(): <T>(run: () => Promise<T>) => Promise<T> {
  let lane: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>): Promise<T> => {
    const mine = lane.then(turn).then(run);
    lane = mine.catch(() => undefined);
    return mine;
  };
}

const T = nodeText.c;
const H = thread.c;
const N = node.c;

/** SQLite: the stored text (`body`) and payload of node_text rows by id (`ids`: their marks). */
const textById = (ids: string) =>
  `SELECT t.${T.id} AS cand, t.${T.body} AS body, n.${N.payload} AS payload ` +
  `FROM ${nodeText.sql} t JOIN ${node.sql} n ON n.${N.threadId} = t.${T.threadId} ` +
  `AND n.${N.sequence} = t.${T.sequence} WHERE t.${T.id} IN (${ids})`;

/** The joins and filters both engines share (`t` the node_text row). */
function scope(q: NodeSearchQuery, lineage: Lineage | undefined) {
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
    where += ` AND n.${N.kind} IN (${marks(q.kinds.length)})`;
    values.push(...q.kinds);
  }
  const joins =
    ` JOIN ${thread.sql} h ON h.${H.id} = t.${T.threadId}` +
    ` JOIN ${node.sql} n ON n.${N.threadId} = t.${T.threadId} AND n.${N.sequence} = t.${T.sequence}`;
  return { joins, where, values };
}
// Within one thread ties go by sequence, whichever thread of its lineage holds the node.
function ties(alias: string, lineage: Lineage | undefined): string {
  return lineage === undefined
    ? `${alias}.${T.threadId}, ${alias}.${T.sequence}`
    : `${alias}.${T.sequence}`;
}

export interface SearchQueries {
  /** The tenant's nodes matching the query, best first (ties by thread and sequence). */
  searchNodes(query: NodeSearchQuery): Promise<NodeSearchHit[]>;
  /** Ends the SQLite search thread, if one was started. */
  close(): Promise<void>;
}

export function createSearchQueries(weft: WeftPrisma, lineages: Lineages): SearchQueries {
  const searcher =
    weft.provider === 'sqlite' ? openSqliteSearcher(weft.path, weft.queryTimeoutMs) : undefined;
  /**
   * SQLite: the newest matches (FTS5 walks its index by rowid, newest first, and stops), their
   * texts newest first up to MAX_SCORED_BYTES, scored by their own text and ranked, all in the
   * search thread (sqlite-search-thread.cjs): only the page comes back, each text cut to its
   * first SNIPPET_HEAD characters, and a text whose passage does not end there is read whole.
   */
  const sqlite = async (q: NodeSearchQuery, parsed: ParsedSearch, lineage?: Lineage) => {
    const match = ftsMatchText(parsed);
    if (match === undefined) return [];
    const matcher = createMatcher(wantedItems(parsed));
    const s = scope(q, lineage);
    const fts = nodeSearch.sql;
    const page = await searcher!.rank({
      kind: 'rank',
      candidates: {
        text:
          `SELECT t.${T.id} AS cand, t.${T.threadId}, t.${T.sequence}, n.${N.id}, ` +
          `t.${T.threadId} AS rank_thread, t.${T.sequence} AS rank_seq, ` +
          `octet_length(coalesce(t.${T.body}, n.${N.payload})) AS bytes FROM ${fts} ` +
          `JOIN ${nodeText.sql} t ON t.${T.id} = ${fts}.rowid${s.joins} ` +
          `WHERE ${fts} MATCH ?${s.where} ORDER BY ${fts}.rowid DESC LIMIT ?`,
        values: [match, ...s.values, MAX_SEARCH_CANDIDATES],
      },
      body: textById('?'),
      maxBytes: MAX_SCORED_BYTES,
      matcher: matcher === undefined ? null : { source: matcher.source, flags: matcher.flags },
      // Within one thread ties go by sequence, whichever thread of its lineage holds the node.
      byThread: lineage === undefined,
      offset: q.offset,
      take: q.take,
      head: SNIPPET_HEAD,
    });
    const snippets = page.map((hit) => snippetOfHead(hit.head, hit.cut, matcher));
    const bodies = await wholeTexts(
      page.filter((_, i) => snippets[i] === undefined).map((hit) => hit.row.cand),
    );
    return page.map((hit, i) => {
      const row = node.decode(hit.row, weft.provider);
      return {
        threadId: row.threadId,
        sequence: row.sequence,
        nodeId: row.id,
        score: hit.score,
        snippet: snippets[i] ?? snippetOfText(bodies.get(hit.row.cand) ?? '', matcher),
      };
    });
  };

  /** The whole texts of node_text rows by id (those whose snippet their head does not hold). */
  const wholeTexts = async (ids: unknown[]): Promise<Map<unknown, string>> => {
    const bodies = new Map<unknown, string>();
    if (ids.length === 0 || searcher === undefined) return bodies;
    const rows = await searcher.bodies({ kind: 'bodies', text: textById(marks(ids.length)), ids });
    for (const r of rows) bodies.set(r.cand, textOfRow(r.body, r.payload));
    return bodies;
  };

  // Postgres ranks the newest candidates by ts_rank, which reads the node's own tsvector only.
  // The page's texts are derived from their payloads (or read from `body`, for a sealed payload)
  // and each snippet cut from its text.
  const postgres = async (q: NodeSearchQuery, parsed: ParsedSearch, lineage?: Lineage) => {
    const websearch = websearchText(parsed);
    if (websearch === undefined) return [];
    const s = scope(q, lineage);
    const tsquery = `(SELECT websearch_to_tsquery('simple', CAST(? AS TEXT)) AS query) q`;
    const rows = await rawQuery(
      weft,
      `SELECT hit.cand, hit.${T.threadId}, hit.${T.sequence}, hit.${N.id}, hit.score, ` +
        `b.${T.body} AS body, bn.${N.payload} AS payload FROM (` +
        `SELECT c.cand, c.${T.threadId}, c.${T.sequence}, c.${N.id}, ts_rank(c.${T.tsv}, q.query) AS score FROM (` +
        `SELECT t.${T.id} AS cand, t.${T.threadId}, t.${T.sequence}, n.${N.id}, t.${T.tsv} ` +
        `FROM ${nodeText.sql} t${s.joins}, ${tsquery} ` +
        `WHERE t.${T.tsv} @@ q.query${s.where} ORDER BY t.${T.id} DESC LIMIT ?` +
        `) c, ${tsquery} ORDER BY score DESC, ${ties('c', lineage)} LIMIT ? OFFSET ?` +
        `) hit JOIN ${nodeText.sql} b ON b.${T.id} = hit.cand` +
        ` JOIN ${node.sql} bn ON bn.${N.threadId} = b.${T.threadId} AND bn.${N.sequence} = b.${T.sequence}` +
        ` ORDER BY hit.score DESC, ${ties('hit', lineage)}`,
      [websearch, ...s.values, MAX_SEARCH_CANDIDATES, websearch, q.take, q.offset],
    );
    const matcher = createMatcher(wantedItems(parsed));
    return rows.map((raw) => {
      const row = node.decode(raw, weft.provider);
      return {
        threadId: row.threadId,
        sequence: row.sequence,
        nodeId: row.id,
        score: Number(raw.score),
        snippet: snippetOfText(textOfRow(raw.body, raw.payload), matcher),
      };
    });
  };

  // On SQLite searches take turns, one at a time, with a turn of the event loop before each: the
  // search thread then has one search to run, which its deadline can end alone (by terminating
  // the thread), and the scoring here of one search's texts is never followed back to back by
  // another's in one phase of the loop.
  const inTurn = oneAtATime();

  return {
    searchNodes: (q) =>
      weft.provider === 'sqlite' ? inTurn(() => searchNodes(q)) : searchNodes(q),
    close: async () => {
      await searcher?.close();
    },
  };

  async function searchNodes(q: NodeSearchQuery): Promise<NodeSearchHit[]> {
    if (q.take <= 0 || q.kinds?.length === 0) return [];
    const parsed = parseSearchQuery(q.text);
    if (parsed.groups.length === 0) return [];
    const lineage = q.threadId === undefined ? undefined : await lineages.of(q.threadId);
    const hits =
      weft.provider === 'postgres'
        ? await postgres(q, parsed, lineage)
        : await sqlite(q, parsed, lineage);
    return hits.map((h) => ({
      // A node of a shared stretch is reported in the thread searched.
      threadId: q.threadId ?? h.threadId,
      sequence: h.sequence,
      nodeId: h.nodeId,
      score: h.score,
      snippet: h.snippet,
    }));
  }
}
