/**
 * Hostile-input limits: graphql-armor's depth, cost, alias, token and directive
 * limits with a clear `extensions.code` each, a cap on batched operations, a code for recursive
 * fragments, CSRF prevention, Origin and Host checks (HTTP and WebSocket), and a body-size guard in front of yoga
 * that refuses an oversized body from its headers, before reading it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EnvelopArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Limits } from './config.js';

/** The `extensions.code` of each refusal. */
export const LIMIT_CODES = {
  depth: 'QUERY_TOO_DEEP',
  // The same code as the schema's own complexity limit (Pothos): one code for "too expensive".
  cost: 'QUERY_TOO_COMPLEX',
  aliases: 'TOO_MANY_ALIASES',
  tokens: 'TOO_MANY_TOKENS',
  directives: 'TOO_MANY_DIRECTIVES',
  batch: 'BATCH_TOO_LARGE',
  batchingOff: 'BATCHING_DISABLED',
  fragmentCycle: 'RECURSIVE_FRAGMENT',
  body: 'PAYLOAD_TOO_LARGE',
  lengthRequired: 'LENGTH_REQUIRED',
  csrf: 'CSRF_REJECTED',
  origin: 'ORIGIN_NOT_ALLOWED',
  host: 'HOST_NOT_ALLOWED',
} as const;

/** Batching is switched on in yoga with this ceiling; useBatchLimit applies the configured one. */
export const YOGA_BATCH_CEILING = 1_000_000;

/**
 * Reports a refusal as a validation error carrying `code` (in the validation phase), or throws it
 * (in the parse phase, where there is no validation context).
 */
const refuse =
  (code: string, variable: string) => (ctx: ValidationContext | null, error: GraphQLError) => {
    const message = `${error.message.replace(/^Syntax Error: /, '')} (${variable})`;
    const coded = new GraphQLError(message, { extensions: { code } });
    if (ctx === null) throw coded;
    ctx.reportError(coded);
  };

/** graphql-armor with Weft's limits and codes. */
export function armorPlugins(
  limits: Omit<Limits, 'maxBodyBytes'>,
  options: { blockFieldSuggestions: boolean },
): Plugin[] {
  const armor = new EnvelopArmor({
    maxDepth: {
      n: limits.maxDepth,
      propagateOnRejection: false,
      onReject: [refuse(LIMIT_CODES.depth, 'WEFT_MAX_DEPTH')],
    },
    costLimit: {
      maxCost: limits.maxCost,
      propagateOnRejection: false,
      onReject: [refuse(LIMIT_CODES.cost, 'WEFT_MAX_COST')],
    },
    maxAliases: {
      n: limits.maxAliases,
      // graphql-armor exempts `__typename` by default, so 1,000 `a: __typename` would pass: every
      // alias makes the server resolve and serialise one more field, so every alias counts.
      allowList: [],
      propagateOnRejection: false,
      onReject: [refuse(LIMIT_CODES.aliases, 'WEFT_MAX_ALIASES')],
    },
    maxDirectives: {
      n: limits.maxDirectives,
      propagateOnRejection: false,
      onReject: [refuse(LIMIT_CODES.directives, 'WEFT_MAX_DIRECTIVES')],
    },
    maxTokens: {
      n: limits.maxTokens,
      propagateOnRejection: false,
      onReject: [refuse(LIMIT_CODES.tokens, 'WEFT_MAX_TOKENS')],
    },
    // Suggestions ("Did you mean …") reveal the schema; hide them when introspection is off.
    blockFieldSuggestion: { enabled: options.blockFieldSuggestions },
  });
  return armor.protect().plugins as unknown as Plugin[];
}

/**
 * At most `max` operations in one batched request (a JSON array body); `max` 0 refuses batches.
 * Runs before any operation of the batch is parsed.
 */
export function useBatchLimit(max: number): Plugin {
  return {
    onRequestParse() {
      return {
        onRequestParseDone({ requestParserResult }) {
          if (!Array.isArray(requestParserResult)) return;
          const n = requestParserResult.length;
          if (max === 0) {
            throw new GraphQLError('batched requests are turned off (WEFT_MAX_BATCH=0)', {
              extensions: { code: LIMIT_CODES.batchingOff, http: { status: 400 } },
            });
          }
          if (n > max) {
            throw new GraphQLError(
              `a batch of ${n} operations is over the limit of ${max} (WEFT_MAX_BATCH)`,
              { extensions: { code: LIMIT_CODES.batch, http: { status: 413 } } },
            );
          }
        },
      };
    },
  };
}

/** Gives graphql-js's "Cannot spread fragment … within itself" a code of its own. */
export function useFragmentCycleCode(): Plugin {
  return {
    onValidate() {
      return ({ result, setResult }) => {
        if (!result.some((e) => /^Cannot spread fragment .* within itself/.test(e.message))) return;
        setResult(
          result.map((e) =>
            /^Cannot spread fragment .* within itself/.test(e.message) &&
            e.extensions.code === undefined
              ? new GraphQLError(e.message, {
                  nodes: e.nodes ?? null,
                  source: e.source ?? null,
                  positions: e.positions ?? null,
                  extensions: { ...e.extensions, code: LIMIT_CODES.fragmentCycle },
                })
              : e,
          ),
        );
      };
    },
  };
}

/** Media types a browser may send cross-site without a CORS preflight. */
const SIMPLE_TYPES: ReadonlySet<string> = new Set([
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/plain',
  '',
]);

/** Headers that prove the request was preflighted (a page on another origin cannot add them). */
export const CSRF_HEADERS = [
  'x-weft-csrf',
  'graphql-require-preflight',
  'apollo-require-preflight',
];

/**
 * CSRF prevention: a POST a browser could send cross-site without a preflight (a form, or
 * `text/plain`) is refused unless it carries one of CSRF_HEADERS. GET cannot mutate (yoga refuses
 * mutations over GET), and JSON POSTs are preflighted, so GraphiQL, the typed client, SSE and the
 * graphql-http audits are unaffected.
 */
export function useCsrfPrevention(): Plugin {
  return {
    onRequest({ request, endResponse }) {
      if (request.method !== 'POST') return;
      const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (!SIMPLE_TYPES.has(type)) return;
      if (CSRF_HEADERS.some((h) => request.headers.has(h))) return;
      endResponse(
        Response.json(
          {
            errors: [
              {
                message:
                  `a POST with content-type "${type || 'none'}" needs an ${CSRF_HEADERS[0]} header ` +
                  '(CSRF prevention); send application/json instead',
                extensions: { code: LIMIT_CODES.csrf },
              },
            ],
          },
          { status: 403 },
        ),
      );
    },
  };
}

/** Loopback names a browser may put in Host when talking to a server bound on loopback. */
const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a request's Origin may call: no Origin at all (curl, server-to-server, a browser's
 * same-origin GET), the server's own origin (GraphiQL), and the configured ones (`*`: any).
 * Everything else — another site, `null` from a sandboxed frame or a file — is refused, so a
 * page elsewhere can neither read answers nor send mutations on a user's behalf.
 */
export function originAllowed(
  origin: string | undefined,
  host: string | undefined,
  allowed: readonly string[],
): boolean {
  if (origin === undefined || origin === '') return true;
  if (allowed.includes('*') || allowed.includes(origin)) return true;
  try {
    const parsed = new URL(origin);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.host === host;
  } catch {
    return false;
  }
}

/**
 * Whether `host` (a Host header) names the loopback server listening on `port`: localhost,
 * 127.0.0.1 or [::1] (or the bound address itself), with that port (none for port 80). A
 * DNS-rebinding page reaches the same socket under its own name, and is refused by this check.
 */
export function loopbackHostAllowed(
  host: string | undefined,
  port: number,
  boundHost: string,
): boolean {
  if (host === undefined) return false;
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  if (match === null) return false;
  const name = match[1]!;
  const named = match[2] === undefined ? 80 : Number(match[2]);
  if (named !== port) return false;
  const bound = boundHost.includes(':') ? `[${boundHost.toLowerCase()}]` : boundHost.toLowerCase();
  return LOOPBACK_NAMES.has(name) || name === bound;
}

export interface ForeignCheck {
  allowedOrigins: readonly string[];
  /** Check Host against the loopback names (open mode on a loopback address). */
  loopbackHost: boolean;
  /** The port the server listens on. */
  port: number;
  boundHost: string;
}

/** Why a request from elsewhere is refused (403), or undefined when it may proceed. */
export function foreignRequest(
  headers: IncomingMessage['headers'],
  check: ForeignCheck,
): { code: string; message: string } | undefined {
  if (check.loopbackHost && !loopbackHostAllowed(headers.host, check.port, check.boundHost)) {
    return {
      code: LIMIT_CODES.host,
      message:
        `Host "${headers.host ?? ''}" is not this server: without API keys it answers only ` +
        `localhost, 127.0.0.1 or [::1] on port ${check.port} (a defence against DNS rebinding); ` +
        'create an API key to serve other names',
    };
  }
  const origin = headers.origin;
  if (!originAllowed(origin, headers.host, check.allowedOrigins)) {
    return {
      code: LIMIT_CODES.origin,
      message: `Origin "${origin}" may not call this server: add it to WEFT_CORS_ORIGINS (comma-separated) to allow it`,
    };
  }
  return undefined;
}

/** The JSON body of a refusal. */
export const refusalBody = (code: string, message: string): string =>
  JSON.stringify({ errors: [{ message, extensions: { code } }] });

/**
 * The node-level body guard, ahead of yoga: a request whose Content-Length is over `maxBytes`
 * gets 413 at once and its connection is closed, so the body is never read; a POST with a
 * chunked body (no length) gets 411. Returns true when it answered.
 */
export function refuseOversizedBody(
  req: IncomingMessage,
  res: ServerResponse,
  maxBytes: number,
): boolean {
  const declared = req.headers['content-length'];
  let status: number | undefined;
  let code: string | undefined;
  let message = '';
  if (declared !== undefined && Number(declared) > maxBytes) {
    status = 413;
    code = LIMIT_CODES.body;
    message = `request body is ${declared} bytes, over the limit of ${maxBytes} (WEFT_MAX_BODY_BYTES)`;
  } else if (
    declared === undefined &&
    req.headers['transfer-encoding'] !== undefined &&
    req.method !== 'GET' &&
    req.method !== 'HEAD'
  ) {
    status = 411;
    code = LIMIT_CODES.lengthRequired;
    message = 'a request body needs a Content-Length header (chunked bodies are not accepted)';
  }
  if (status === undefined) return false;
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    connection: 'close',
  });
  res.end(JSON.stringify({ errors: [{ message, extensions: { code } }] }), () => {
    // Unread body bytes would otherwise be drained from the socket; drop the connection instead.
    req.socket.destroySoon();
  });
  return true;
}
