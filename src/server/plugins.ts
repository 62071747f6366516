/** Small yoga plugins, one concern each, and the GraphiQL page. */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants as zlibConstants } from 'node:zlib';
import { type ExecutionResult, GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });

/** Refuses a request whose declared body is larger than `maxBytes`, before reading it (413). */
export function useBodyLimit(maxBytes: number): Plugin {
  return {
    onRequest({ request, endResponse }) {
      const length = Number(request.headers.get('content-length') ?? 0);
      if (length > maxBytes) {
        endResponse(
          json(413, {
            errors: [
              {
                message: `request body is ${length} bytes, over the limit of ${maxBytes} (WEFT_MAX_BODY_BYTES)`,
                extensions: { code: 'PAYLOAD_TOO_LARGE' },
              },
            ],
          }),
        );
      }
    },
  };
}

/** `/healthz` (the process answers) and `/readyz` (the database answers). */
export function useHealth(ready: () => Promise<void>): Plugin {
  return {
    async onRequest({ request, endResponse, url }) {
      if (request.method !== 'GET') return;
      if (url.pathname === '/healthz') {
        endResponse(json(200, { status: 'ok' }));
      } else if (url.pathname === '/readyz') {
        try {
          await ready();
          endResponse(json(200, { status: 'ready' }));
        } catch (error) {
          // The driver's message can name files and hosts: a short reason only.
          const why =
            error instanceof Error && error.message === 'shutting down'
              ? 'shutting down'
              : 'database unreachable';
          endResponse(json(503, { status: 'unavailable', reason: why }));
        }
      }
    },
  };
}

/** Refuses introspection queries (WEFT_INTROSPECTION=false). */
export function useNoIntrospection(): Plugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(NoSchemaIntrospectionCustomRule);
    },
  };
}

/** graphql-js's hints: "Did you mean "GOAL"?", "Did you mean the enum value "GOAL"?", … */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

function withoutSuggestion(error: GraphQLError): GraphQLError;
function withoutSuggestion(error: Error): Error;
function withoutSuggestion(error: Error): Error {
  if (!/Did you mean/.test(error.message)) return error;
  const message = error.message.replace(SUGGESTION, '').trim();
  if (!(error instanceof GraphQLError)) return new Error(message);
  return new GraphQLError(message, {
    nodes: error.nodes ?? null,
    source: error.source ?? null,
    positions: error.positions ?? null,
    path: error.path ?? null,
    originalError: error.originalError ?? null,
    extensions: error.extensions,
  });
}

const resultWithoutSuggestions = (result: ExecutionResult): ExecutionResult | undefined => {
  if (result.errors === undefined || !result.errors.some((e) => /Did you mean/.test(e.message)))
    return undefined;
  return { ...result, errors: result.errors.map((e) => withoutSuggestion(e)) };
};

const isIterable = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/**
 * Removes "Did you mean …" from every message (WEFT_INTROSPECTION=false): validation (fields,
 * arguments, types, enum literals) and variable coercion (enum values in variables), for queries,
 * mutations and subscriptions, over HTTP and graphql-ws alike. The suggestions would otherwise
 * spell out the schema that introspection hides.
 */
export function useNoSuggestions(): Plugin {
  return {
    onValidate() {
      return ({ result, setResult }) => {
        if (result.some((e) => /Did you mean/.test(e.message)))
          setResult(result.map(withoutSuggestion));
      };
    },
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          if (isIterable(result)) return;
          const cleaned = resultWithoutSuggestions(result as ExecutionResult);
          if (cleaned !== undefined) setResult(cleaned);
        },
      };
    },
    onSubscribe() {
      return {
        onSubscribeResult({ result, setResult }) {
          if (isIterable(result)) return;
          const cleaned = resultWithoutSuggestions(result as ExecutionResult);
          if (cleaned !== undefined) setResult(cleaned);
        },
      };
    },
  };
}

/**
 * GraphiQL on `GET /graphql` for browsers (Accept: text/html), answered ahead of yoga: rendered
 * once, compressed once (brotli or gzip, as the browser accepts), with an ETag so that a reload
 * costs a 304 instead of megabytes. The page is public in every mode — it holds no data, and
 * a browser navigation cannot carry an API key — but it runs nothing without one: every
 * operation it sends goes through the same authentication as any other request.
 */
export function graphiqlPage(
  render: () => string | Promise<string>,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  let page: Promise<Page> | undefined;
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/graphql' && path !== '/graphql/') return false;
    if (!String(req.headers.accept ?? '').includes('text/html')) return false;
    page ??= Promise.resolve().then(render).then(preparePage);
    void page.then(
      (p) => answerPage(req, res, p),
      () => {
        res.writeHead(500).end();
      },
    );
    return true;
  };
}

interface Page {
  etag: string;
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
}

async function preparePage(html: string): Promise<Page> {
  const identity = Buffer.from(html, 'utf8');
  const [gz, br] = await Promise.all([
    gzipAsync(identity, { level: 6 }),
    // Quality 5: nearly as small as quality 9 in a fraction of the time, once per page at start.
    brotliAsync(identity, {
      params: {
        [zlibConstants.BROTLI_PARAM_QUALITY]: 5,
        [zlibConstants.BROTLI_PARAM_SIZE_HINT]: identity.length,
      },
    }),
  ]);
  const etag = `"${createHash('sha256').update(identity).digest('base64url').slice(0, 27)}"`;
  return { etag, identity, gzip: gz, br };
}

function answerPage(req: IncomingMessage, res: ServerResponse, page: Page): void {
  const headers: Record<string, string> = {
    'content-type': 'text/html; charset=utf-8',
    etag: page.etag,
    // Cached, and revalidated on each load: a new version of the server is seen at once.
    'cache-control': 'no-cache',
    vary: 'Accept, Accept-Encoding',
  };
  const match = String(req.headers['if-none-match'] ?? '')
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''));
  if (match.includes(page.etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  const accepted = acceptedEncodings(String(req.headers['accept-encoding'] ?? ''));
  let body = page.identity;
  if (accepted.has('br')) {
    body = page.br;
    headers['content-encoding'] = 'br';
  } else if (accepted.has('gzip')) {
    body = page.gzip;
    headers['content-encoding'] = 'gzip';
  }
  headers['content-length'] = String(body.length);
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** The codings of an Accept-Encoding header, but those with q=0. */
function acceptedEncodings(header: string): Set<string> {
  const codings = new Set<string>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    if (name !== '') codings.add(name);
  }
  return codings;
}
