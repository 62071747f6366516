/**
 * A bound on how deeply a GraphQL document nests brackets, checked on the source text before it
 * is parsed. graphql-js parses recursively, a few stack frames per level, so a list literal
 * a few thousand levels deep (`[[[[…]]]]`, well under the token limit) overflows the call stack
 * inside `parse` and the client would get a masked 500. Selection depth has its own, smaller
 * limit (graphql-armor's, in validation); this one also covers value literals, object literals
 * and variable types, which that limit does not count.
 */
import { GraphQLError, type Source } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Deepest nesting of `{`, `[` and `(` a document may have: far beyond any real query. */
export const MAX_DOCUMENT_NESTING = 256;

/**
 * The deepest bracket nesting of `source`, or the first depth above `limit` (scanning stops
 * there). Brackets inside strings, block strings and comments do not count. Linear, no
 * recursion.
 */
export function documentNesting(source: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let i = 0;
  const n = source.length;
  while (i < n) {
    const ch = source.charCodeAt(i);
    if (ch === 0x23 /* # */) {
      while (i < n && source[i] !== '\n' && source[i] !== '\r') i++;
    } else if (ch === 0x22 /* " */) {
      if (source.startsWith('"""', i)) {
        i += 3;
        while (i < n && !source.startsWith('"""', i)) i += source.startsWith('\\"""', i) ? 4 : 1;
        i += 3;
        continue;
      }
      i++;
      while (i < n && source[i] !== '"' && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
    } else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */ || ch === 0x28 /* ( */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */ || ch === 0x29 /* ) */) {
      if (depth > 0) depth--;
    }
    i++;
  }
  return deepest;
}

/** Refuses, before parsing, a document nesting brackets deeper than `limit` (BAD_USER_INPUT). */
export function useDocumentNestingLimit(limit = MAX_DOCUMENT_NESTING): Plugin {
  return {
    onParse({ params }) {
      const source = params.source as string | Source;
      const text = typeof source === 'string' ? source : source.body;
      if (documentNesting(text, limit) <= limit) return;
      throw new GraphQLError(
        `the document nests brackets ({, [, () more than ${limit} levels deep: pass deep values as variables`,
        { extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } } },
      );
    },
  };
}
