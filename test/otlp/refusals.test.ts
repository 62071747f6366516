/**
 * What the receiver refuses, and that a refusal writes nothing: keys and scopes as for GraphQL
 * writes (401, 403; a tenant's spans land in its own threads), bodies that are not an OTLP export
 * (400 with a google.rpc.Status in the request's encoding), bounds (413, payloads over
 * WEFT_MAX_PAYLOAD_BYTES, spans and attributes per request), methods and media types.
 */
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeStatus } from '../../src/otlp/proto.js';
import { spansOfRequest } from '../../src/otlp/request.js';
import { DEFAULT_OTLP_LIMITS } from '../../src/otlp/spans.js';
import { type AuthApp, createAuthApp } from '../auth/support.js';
import { emitAgentTurn } from './support.js';

/** The spans of one agent turn, as the OTel SDK hands them to its exporters. */
function agentTurnSpans(
  conversationId: string,
  extra: Record<string, string> = {},
): ReadableSpan[] {
  const spans: ReadableSpan[] = [];
  const provider = new BasicTracerProvider({
    spanProcessors: [
      {
        onStart: () => undefined,
        onEnd: (span: ReadableSpan) => {
          spans.push(span);
        },
        forceFlush: async () => undefined,
        shutdown: async () => undefined,
      },
    ],
  });
  emitAgentTurn(provider.getTracer('refusals'), { conversationId, extra });
  return spans;
}

const jsonBody = (spans: ReadableSpan[]) =>
  Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8');

describe('OTLP receiver refusals', () => {
  let t: AuthApp;
  let base: string;
  let writer: string;
  beforeAll(async () => {
    t = await createAuthApp({
      env: { WEFT_MAX_BODY_BYTES: '200000', WEFT_MAX_PAYLOAD_BYTES: '4096' },
    });
    base = (await t.listen()).replace(/\/graphql$/, '');
    writer = (await t.key('acme', ['read', 'write'])).key;
  });
  afterAll(() => t?.close());

  const post = (body: string | Uint8Array, headers: Record<string, string> = {}, key = writer) =>
    fetch(`${base}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
      body: typeof body === 'string' ? body : Buffer.from(body),
    });
  const threadExists = async (id: string, key = writer) => {
    const answer = await t.gql(key, 'query ($id: ID!) { thread(id: $id) { id } }', { id });
    return answer.data.thread !== null;
  };

  it('needs a key with the write scope, and writes into the key’s tenant', async () => {
    const body = jsonBody(agentTurnSpans('tenant-conv'));
    const none = await fetch(`${base}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 16 });
    const reader = (await t.key('acme', ['read'])).key;
    const readOnly = await post(body, {}, reader);
    expect(readOnly.status).toBe(403);
    expect(await readOnly.json()).toMatchObject({ code: 7 });
    expect(await threadExists('tenant-conv')).toBe(false);
    expect((await post(body)).status).toBe(200);
    expect(await threadExists('tenant-conv', reader)).toBe(true);
    const other = (await t.key('globex', ['read'])).key;
    expect(await threadExists('tenant-conv', other)).toBe(false);
  });

  it('answers a body that is not an export with 400 and a Status, in JSON and protobuf', async () => {
    const json = await post('{"resourceSpans": 7}');
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({ code: 3, message: 'resourceSpans must be a list' });
    const proto = await post(Uint8Array.from([0x0a, 0xff, 0xff, 0x01]), {
      'content-type': 'application/x-protobuf',
    });
    expect(proto.status).toBe(400);
    expect(proto.headers.get('content-type')).toBe('application/x-protobuf');
    expect(decodeStatus(new Uint8Array(await proto.arrayBuffer()))).toMatchObject({ code: 3 });
    const gzip = await post('not gzip', { 'content-encoding': 'gzip' });
    expect(gzip.status).toBe(400);
  });

  it('writes nothing of a batch with one bad span', async () => {
    const body = JSON.parse(jsonBody(agentTurnSpans('half-conv')));
    const spans = body.resourceSpans[0].scopeSpans[0].spans;
    spans[spans.length - 1].traceId = 'not-hex';
    const answer = await post(JSON.stringify(body));
    expect(answer.status).toBe(400);
    expect((await answer.json()).message).toMatch(/traceId must be 32 hex digits/);
    expect(await threadExists('half-conv')).toBe(false);
  });

  it('writes no thread of a batch when another one’s conversation id or text cannot be stored', async () => {
    const badId = [...agentTurnSpans('good-conv'), ...agentTurnSpans('bad\u0001conv')];
    const answer = await post(jsonBody(badId));
    expect(answer.status).toBe(400);
    expect((await answer.json()).message).toMatch(/gen_ai\.conversation\.id/);
    const badText = [
      ...agentTurnSpans('good-conv'),
      ...agentTurnSpans('other-conv', { 'gen_ai.system_instructions': 'lone \ud800 surrogate' }),
    ];
    const refused = await post(jsonBody(badText));
    expect(refused.status).toBe(400);
    expect(await threadExists('good-conv')).toBe(false);
    expect(await threadExists('other-conv')).toBe(false);
  });

  it('refuses a payload over WEFT_MAX_PAYLOAD_BYTES whole', async () => {
    const big = agentTurnSpans('big-conv', { 'gen_ai.system_instructions': 'x'.repeat(5000) });
    const answer = await post(jsonBody(big));
    expect(answer.status).toBe(400);
    expect((await answer.json()).message).toMatch(/more than the 4096 allowed/);
    expect(await threadExists('big-conv')).toBe(false);
  });

  it('refuses bodies over WEFT_MAX_BODY_BYTES, compressed or not', async () => {
    const huge = agentTurnSpans('huge-conv', { 'x.padding': 'y'.repeat(250_000) });
    const answer = await post(jsonBody(huge));
    expect(answer.status).toBe(413);
    const proto = ProtobufTraceSerializer.serializeRequest(huge)!;
    const { gzipSync } = await import('node:zlib');
    const zipped = await post(gzipSync(proto), {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'gzip',
    });
    expect(zipped.status).toBe(413);
    expect(await threadExists('huge-conv')).toBe(false);
  });

  it('answers other methods and media types', async () => {
    const get = await fetch(`${base}/v1/traces`, {
      headers: { authorization: `Bearer ${writer}` },
    });
    expect(get.status).toBe(405);
    const text = await post('hello', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
  });

  it('bounds spans and attributes per request', () => {
    const request = JSON.parse(jsonBody(agentTurnSpans('bounds')));
    expect(() => spansOfRequest(request, 'hex', { ...DEFAULT_OTLP_LIMITS, maxSpans: 2 })).toThrow(
      /more than 2 spans/,
    );
    expect(() =>
      spansOfRequest(request, 'hex', { ...DEFAULT_OTLP_LIMITS, maxAttributes: 3 }),
    ).toThrow(/attributes, more than the 3 allowed/);
    expect(spansOfRequest(request, 'hex', DEFAULT_OTLP_LIMITS)).toHaveLength(5);
  });
});
