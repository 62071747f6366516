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
import { runSteps, type Steps } from '../core/graph/index.js';
import { drive, timeSlices } from '../store/read-model/index.js';
import { parseJsonSteps } from './json-slices.js';

/** Bodies longer than this (characters) are parsed in time slices (json-slices.ts). */
const SLICED_BODY_CHARS = 1024 * 1024;

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

/**
 * Deepest nesting of objects and arrays a JSON request body may have. Every value the engine
 * takes is bounded more tightly (1,024 levels for a whole request, 512 for a stored value), and
 * those bounds give the specific message; this one only keeps a body that could never pass them
 * from being built into a deep object graph at all, which costs far more than the scan.
 */
export const MAX_BODY_NESTING = 1_100;

/**
 * The deepest nesting of `[` and `{` in JSON text, or the first depth above `limit` (scanning
 * stops there). Brackets inside strings do not count. Linear, no recursion; it does not check
 * that the text is JSON (JSON.parse does that next).
 */
export function jsonNesting(text: string, limit = Number.POSITIVE_INFINITY): number {
  return runSteps(jsonNestingSteps(text, limit, Number.POSITIVE_INFINITY));
}

/** `jsonNesting` in steps of about `every` characters (see `Steps`). */
export function* jsonNestingSteps(text: string, limit: number, every = 1 << 20): Steps<number> {
  let depth = 0;
  let deepest = 0;
  const n = text.length;
  let pauseAt = every;
  for (let i = 0; i < n; i++) {
    if (i >= pauseAt) {
      pauseAt = i + every;
      yield;
    }
    const ch = text.charCodeAt(i);
    if (ch === 0x22 /* " */) {
      for (i++; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === 0x5c /* \ */) i++;
        else if (c === 0x22) break;
      }
    } else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) {
      if (depth > 0) depth--;
    }
  }
  return deepest;
}

const badRequest = (message: string, code: string, status = 400) =>
  new GraphQLError(message, { extensions: { code, http: { status } } });

/**
 * Parses JSON request bodies (POST `application/json`) after a linear scan refuses nesting over
 * `limit` with 400 BAD_USER_INPUT. Otherwise it answers as graphql-yoga's own JSON parser does
 * (400 BAD_REQUEST for text that is not JSON or not an object or array).
 */
export function useBodyNestingLimit(limit = MAX_BODY_NESTING): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method !== 'POST' || requestParser === undefined) return;
      const type = request.headers.get('content-type') ?? '';
      if (!/^application\/(graphql\+)?json\b/i.test(type)) return;
      setRequestParser(async (req) => {
        const text = await req.text();
        // A long body (a large import) is scanned and parsed in time slices, with other
        // clients' turns between them: JSON.parse of 10 MB holds the event loop for over 100 ms.
        const sliced = text.length > SLICED_BODY_CHARS;
        const nesting = sliced
          ? await drive(jsonNestingSteps(text, limit), timeSlices())
          : jsonNesting(text, limit);
        if (nesting > limit) {
          throw badRequest(
            `the request body nests objects and arrays more than ${limit} levels deep`,
            'BAD_USER_INPUT',
          );
        }
        let body: unknown;
        try {
          body = sliced ? await drive(parseJsonSteps(text), timeSlices()) : JSON.parse(text);
        } catch {
          throw badRequest('POST body sent invalid JSON.', 'BAD_REQUEST');
        }
        if (body === null || typeof body !== 'object') {
          throw badRequest(
            `POST body is expected to be object but received ${body === null ? 'null' : typeof body}`,
            'BAD_REQUEST',
          );
        }
        return body as never;
      });
    },
  };
}

/**
 * Whether a parsed JSON value nests objects and arrays deeper than `limit`. Iterative, and it
 * stops at the first level past `limit`: at most the whole value is visited, never more.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
