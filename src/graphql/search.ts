/**
 * `Query.searchNodes`: full-text search over the caller's node payloads, ranked by a score of each
 * node's own text (see store/read-model/search-queries.ts), each match with a snippet whose
 * highlights are ranges, never markup. Pages are windows of the ranked list, by position, up to
 * MAX_SEARCH_DEPTH matches deep; a cursor is bound to the search it came from.
 */
import { createHash } from 'node:crypto';
import type { NodeKind } from '../core/graph/index.js';
import { textProblem } from '../core/text.js';
import type { NodeSearchView } from '../reads/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { NodeKindEnum } from './enums.js';
import { ApiError, badInput, notFound } from './error-classes.js';
import { cursorKind, decodeCursor, isInt, isString, toConnection } from './pagination.js';
import { CausalNodeRef } from './refs.js';

/** The longest query, in characters. */
export const MAX_SEARCH_QUERY = 1000;
export const DEFAULT_SEARCH_PAGE = 20;
export const MAX_SEARCH_PAGE = 100;
/** How deep into the ranked matches paging reaches. */
export const MAX_SEARCH_DEPTH = 1000;
/**
 * What one search adds to an operation's complexity (limit COMPLEXITY_LIMITS.complexity, 50,000),
 * beside its page: a search reads and ranks up to a thousand texts, whatever page it returns, so
 * an operation holds at most nine, however they are aliased.
 */
export const SEARCH_COMPLEXITY = 5_000;

/**
 * Search answers nothing because its index is off (encryption at rest); the message says how to
 * turn it on. The read API's own answer (not an engine error), so it is translated here.
 */
export class SearchDisabledError extends ApiError {
  constructor(message: string) {
    super('SEARCH_DISABLED', message);
  }
}

const TextRangeRef = builder.objectRef<{ start: number; length: number }>('TextRange').implement({
  description:
    'A range of a text, in UTF-16 code units (JavaScript string indices): `text.slice(start, start + length)`.',
  fields: (t) => ({ start: t.exposeInt('start'), length: t.exposeInt('length') }),
});

const SearchSnippetRef = builder.objectRef<NodeSearchView['snippet']>('SearchSnippet').implement({
  description:
    "A passage of a node's text around its first match (up to 24 words): plain text (no markup; render it as text) and the ranges of the matched words in it, in order. `…` marks text left out.",
  fields: (t) => ({
    text: t.exposeString('text'),
    highlights: t.field({ type: [TextRangeRef], resolve: (s) => s.highlights }),
  }),
});

const NodeSearchHitRef = builder.objectRef<NodeSearchView>('NodeSearchHit').implement({
  description: 'A node whose payload text matches the search.',
  fields: (t) => ({
    // Read only when selected, through the operation's node loader: one batch for the page.
    node: t.field({
      type: CausalNodeRef,
      resolve: async (h, _args, ctx) => {
        const node = await ctx.loaders.node.load({ threadId: h.threadId, id: h.nodeId });
        if (node === undefined) throw notFound('CausalNode', h.nodeId);
        return node;
      },
    }),
    threadId: t.exposeID('threadId'),
    score: t.float({
      description:
        "Relevance: higher is better. Comparable within one search only. It depends on the node's own text and the query alone (SQLite: Weft's own BM25-style measure; Postgres: ts_rank).",
      resolve: (h) => h.score,
    }),
    snippet: t.field({ type: SearchSnippetRef, resolve: (h) => h.snippet }),
  }),
});

const NodeSearchConnection = builder.connectionObject(
  {
    type: NodeSearchHitRef,
    name: 'NodeSearchConnection',
    edgesNullable: false,
    nodeNullable: false,
  },
  { name: 'NodeSearchEdge' },
);

const NodeSearchFilter = builder.inputType('NodeSearchFilter', {
  fields: (t) => ({
    threadId: t.id({ description: 'Only nodes of this thread.' }),
    kinds: t.field({ type: [NodeKindEnum], description: 'Only nodes of these kinds.' }),
  }),
});

/** A position in one search's ranked list: `p` the match's position, `s` the search. */
type SearchCursor = { p: number; s: string };
const isSearchCursor = (v: unknown): v is SearchCursor =>
  typeof v === 'object' &&
  v !== null &&
  isInt((v as SearchCursor).p) &&
  isString((v as SearchCursor).s);
const SEARCH_CURSOR = cursorKind('search', isSearchCursor);

/** What a cursor is bound to: the query and the filter (not the page size). */
const searchId = (
  query: string,
  threadId: string | undefined,
  kinds: readonly string[] | undefined,
) =>
  createHash('sha256')
    .update(
      JSON.stringify([query, threadId ?? null, kinds === undefined ? null : [...kinds].sort()]),
    )
    .digest('base64url')
    .slice(0, 16);

async function searchPage(
  ctx: GraphQLContext,
  args: {
    query: string;
    filter?:
      | { threadId?: string | null | undefined; kinds?: NodeKind[] | null | undefined }
      | null
      | undefined;
    first?: number | null | undefined;
    after?: string | null | undefined;
  },
) {
  const { query } = args;
  if (query.trim() === '') throw badInput('$.query', 'must contain a word to search for');
  if (query.length > MAX_SEARCH_QUERY) {
    throw badInput(
      '$.query',
      `must be at most ${MAX_SEARCH_QUERY} characters (got ${query.length})`,
    );
  }
  const problem = textProblem(query);
  if (problem !== undefined) throw badInput('$.query', problem);
  const first = args.first ?? DEFAULT_SEARCH_PAGE;
  if (!Number.isInteger(first) || first < 0 || first > MAX_SEARCH_PAGE) {
    throw badInput('$.first', `must be an integer from 0 to ${MAX_SEARCH_PAGE} (got ${first})`);
  }
  const threadId = args.filter?.threadId ?? undefined;
  const kinds = args.filter?.kinds ?? undefined;
  const search = searchId(query, threadId, kinds);
  const cursor = decodeCursor(args.after, SEARCH_CURSOR);
  if (cursor !== undefined && cursor.s !== search) {
    throw badInput(
      '$.after',
      'is a cursor of another search: page with the query and filter it came from',
    );
  }
  const offset = cursor === undefined ? 0 : cursor.p + 1;
  if (offset >= MAX_SEARCH_DEPTH && first > 0) {
    throw badInput(
      '$.after',
      `search pages reach the first ${MAX_SEARCH_DEPTH} matches: refine the query to find more`,
    );
  }
  const size = Math.min(first, MAX_SEARCH_DEPTH - offset);
  // One more than the page, when the list goes on beyond it, says whether a next page exists.
  const take = Math.min(size + 1, MAX_SEARCH_DEPTH - offset);
  const found = await ctx.reads.searchNodes({
    tenantId: ctx.auth.tenant,
    text: query,
    threadId,
    kinds,
    take,
    offset,
  });
  if (!found.ok) throw new SearchDisabledError(found.error.message);
  const hits = found.value.map((h, i) => ({ ...h, position: offset + i }));
  return toConnection(
    SEARCH_CURSOR,
    hits,
    size,
    (h) => ({ p: h.position, s: search }),
    cursor !== undefined,
  );
}

builder.queryFields((t) => ({
  searchNodes: t.field({
    type: NodeSearchConnection,
    description:
      'Full-text search over the string values of the payloads of the nodes the caller may see, best match first. `query` (1–1,000 characters) is web-search syntax: words (all must match), "quoted phrases", `or` between alternatives, `-word` to exclude. Only the newest 1,000 matching nodes are ranked; pages of `first` (default 20, at most 100) reach through them. Each search counts 5,000 towards the complexity limit of its operation. Answers SEARCH_DISABLED when payloads are encrypted at rest and the plain-text index is not enabled (WEFT_SEARCH_PLAINTEXT_INDEX=1).',
    args: {
      query: t.arg.string({ required: true }),
      filter: t.arg({ type: NodeSearchFilter }),
      first: t.arg.int(),
      after: t.arg.string(),
    },
    complexity: (args) => ({
      field: SEARCH_COMPLEXITY,
      multiplier:
        typeof args.first === 'number' && args.first >= 0 ? Math.min(args.first, 100) : 20,
    }),
    resolve: (_r, args, ctx) => searchPage(ctx, args),
  }),
}));
