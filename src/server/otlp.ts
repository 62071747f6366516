/**
 * The OTLP/HTTP trace receiver, `POST /v1/traces`: protobuf (`application/x-protobuf`) or JSON
 * (`application/json`), optionally gzip-encoded, authenticated like GraphQL writes (a Bearer key
 * with the `write` scope; open mode: the default tenant). The body is read up to
 * WEFT_MAX_BODY_BYTES (compressed and decompressed alike), decoded and planned whole before
 * anything is written; refusals answer with a google.rpc.Status in the request's encoding.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Authenticator } from '../auth/authenticator.js';
import type { AuthInfo } from '../auth/types.js';
import type { Engine } from '../engine/index.js';
import { checkPlanBounds, ingestPlan, OtlpWriteError } from '../otlp/ingest.js';
import { planIngest } from '../otlp/mapping.js';
import { decodeTraceRequest, encodeStatus, encodeTraceResponse } from '../otlp/proto.js';
import { type IdForm, spansOfRequest } from '../otlp/request.js';
import { DEFAULT_OTLP_LIMITS, OtlpInputError, type OtlpLimits } from '../otlp/spans.js';
import type { ServerConfig } from './config.js';

export const OTLP_TRACES_PATH = '/v1/traces';

const gunzipAsync = promisify(gunzip);

/** google.rpc.Code values used in the answers. */
const RPC = {
  invalidArgument: 3,
  permissionDenied: 7,
  resourceExhausted: 8,
  internal: 13,
  unavailable: 14,
  unauthenticated: 16,
} as const;

export interface OtlpRouteDeps {
  engine: Engine;
  auth: Authenticator;
  maxBodyBytes: number;
  maxPayloadBytes: number;
  limits?: OtlpLimits;
  /** Told of each accepted export (for the request log and tests). */
  onIngested?: (summary: { accepted: number; ignored: number; entries: number }) => void;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

type Encoding = 'protobuf' | 'json';

function encodingOf(req: IncomingMessage): Encoding | undefined {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json') return 'json';
  return undefined;
}

/** The body, at most `max` bytes; past it the request is refused without reading the rest. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.resume();
        reject(tooLarge(max));
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

const tooLarge = (max: number) =>
  new Refusal(
    413,
    RPC.resourceExhausted,
    `the request body is over ${max} bytes (WEFT_MAX_BODY_BYTES): export smaller batches`,
  );

async function decompress(req: IncomingMessage, body: Buffer, max: number): Promise<Buffer> {
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity' || encoding === '') return body;
  if (encoding !== 'gzip') {
    throw new Refusal(
      415,
      RPC.invalidArgument,
      `Content-Encoding ${encoding} is not supported: use gzip or none`,
    );
  }
  try {
    return await gunzipAsync(body, { maxOutputLength: max });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(max);
    throw new Refusal(400, RPC.invalidArgument, 'the body is not valid gzip');
  }
}

function decode(body: Buffer, encoding: Encoding): { request: unknown; form: IdForm } {
  if (encoding === 'json') {
    try {
      return { request: JSON.parse(body.toString('utf8')), form: 'hex' };
    } catch {
      throw new OtlpInputError('the body is not JSON');
    }
  }
  try {
    return { request: decodeTraceRequest(body), form: 'base64' };
  } catch (error) {
    throw new OtlpInputError(
      `the body is not an ExportTraceServiceRequest: ${(error as Error).message}`,
    );
  }
}

async function authorize(auth: Authenticator, req: IncomingMessage): Promise<AuthInfo> {
  const info = await auth.authenticate(req.headers.authorization);
  if (!info.authenticated) {
    throw new Refusal(
      401,
      RPC.unauthenticated,
      `unauthenticated: ${info.reason ?? 'send Authorization: Bearer <key>'}`,
    );
  }
  if (!info.scopes.has('write') && !info.scopes.has('admin')) {
    throw new Refusal(
      403,
      RPC.permissionDenied,
      'the API key lacks the write scope that ingesting traces needs',
    );
  }
  return info;
}

function send(
  res: ServerResponse,
  encoding: Encoding,
  status: number,
  body: unknown,
  proto: Uint8Array,
) {
  if (encoding === 'json') {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  } else {
    res.writeHead(status, { 'content-type': 'application/x-protobuf' });
    res.end(proto);
  }
}

function refuse(res: ServerResponse, encoding: Encoding, refusal: Refusal): void {
  const status = { code: refusal.code, message: refusal.message };
  if (refusal.status === 413 || refusal.status === 411) res.setHeader('connection', 'close');
  send(res, encoding, refusal.status, status, encodeStatus(status));
}

/** A write failure: the client's data (400, not retried) or the server's state (503: retry). */
function refusalOfWrite(error: OtlpWriteError): Refusal {
  const code = error.error.code;
  if (
    code === 'VALIDATION_FAILED' ||
    code === 'NON_SERIALIZABLE' ||
    code === 'INVALID_TRANSITION'
  ) {
    return new Refusal(400, RPC.invalidArgument, error.message);
  }
  return new Refusal(
    503,
    RPC.unavailable,
    `${error.message} (nothing is lost: send the batch again)`,
  );
}

/** Handles one request to OTLP_TRACES_PATH. */
export async function serveOtlpTraces(
  deps: OtlpRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const encoding = encodingOf(req) ?? 'json';
  try {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      throw new Refusal(405, RPC.invalidArgument, 'OTLP/HTTP traces are sent with POST');
    }
    if (encodingOf(req) === undefined) {
      throw new Refusal(
        415,
        RPC.invalidArgument,
        'Content-Type must be application/x-protobuf or application/json',
      );
    }
    const info = await authorize(deps.auth, req);
    const body = await decompress(req, await readBody(req, deps.maxBodyBytes), deps.maxBodyBytes);
    const { request, form } = decode(body, encoding);
    const plan = planIngest(spansOfRequest(request, form, deps.limits ?? DEFAULT_OTLP_LIMITS));
    checkPlanBounds(plan, deps.maxPayloadBytes);
    const written = await ingestPlan(deps.engine.forTenant(info.tenant), plan);
    deps.onIngested?.({ accepted: plan.accepted, ignored: plan.ignored, entries: written.entries });
    const answer =
      plan.ignored === 0
        ? {}
        : {
            partialSuccess: {
              rejectedSpans: plan.ignored,
              errorMessage: `${plan.ignored} span(s) without GenAI attributes (gen_ai.operation.name invoke_agent, chat, generate_content, text_completion or execute_tool) were not stored`,
            },
          };
    send(res, encoding, 200, answer, encodeTraceResponse(answer));
  } catch (error) {
    if (error instanceof Refusal) return refuse(res, encoding, error);
    if (error instanceof OtlpInputError) {
      return refuse(res, encoding, new Refusal(400, RPC.invalidArgument, error.message));
    }
    if (error instanceof OtlpWriteError) return refuse(res, encoding, refusalOfWrite(error));
    refuse(res, encoding, new Refusal(500, RPC.internal, 'internal error'));
    throw error;
  }
}

/** The receiver's dependencies from the server's configuration. */
export const otlpRouteDeps = (
  config: ServerConfig,
  engine: Engine,
  auth: Authenticator,
): OtlpRouteDeps => ({
  engine,
  auth,
  maxBodyBytes: config.maxBodyBytes,
  maxPayloadBytes: config.limits.maxPayloadBytes,
});

/** Answers a request to OTLP_TRACES_PATH (true), or leaves it to the next route (false). */
export function otlpRoute(
  deps: OtlpRouteDeps,
  log: ((line: string) => void) | undefined,
): (req: IncomingMessage, res: ServerResponse, path: string) => boolean {
  return (req, res, path) => {
    if (path !== OTLP_TRACES_PATH) return false;
    serveOtlpTraces(deps, req, res).catch((error: unknown) => {
      log?.(`weft: OTLP ingest failed: ${String(error)}`);
    });
    return true;
  };
}
