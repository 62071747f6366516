/**
 * Hostile input, over a real port: depth 100, 1,000 aliases, 50,000 tokens,
 * recursive fragments, 1,000 batched operations and a 50 MB body are each refused with a clear
 * code, while normal queries sent concurrently keep being answered (their p99 is printed, not
 * asserted). Also CSRF prevention, the WebSocket origin check and the limit configuration.
 */
import { request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ConfigError, LIMIT_DEFAULTS, loadConfig } from '../../src/server/config.js';
import { createTestApp, type TestApp } from '../api/support.js';

let t: TestApp;
let url: string;

beforeAll(async () => {
  t = await createTestApp({ config: { requestLog: false } });
  url = await t.app.start();
  const r = await t.gql('mutation { createThread(input: { threadId: "h" }) { __typename } }');
  expect(r.data.createThread.__typename).toBe('CreateThreadSuccess');
});
afterAll(() => t.close());

interface Answer {
  status: number;
  body: {
    errors?: Array<{ message: string; extensions?: { code?: string } }>;
    data?: unknown;
  } & Array<unknown>;
}

async function post(body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      // The GraphQL-over-HTTP media type: refused documents get 4xx (application/json gets 200).
      accept: 'application/graphql-response+json',
      ...headers,
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) };
}

const query = (q: string) => post(JSON.stringify({ query: q }));
const codes = (a: Answer) => (a.body.errors ?? []).map((e) => e.extensions?.code);

/** Streams a body of `total` bytes declared in Content-Length; resolves with the answer and how much was written before it came. */
function postHuge(
  total: number,
  declareLength: boolean,
): Promise<{ status: number; body: string; writtenBeforeAnswer: number }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = httpRequest({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(declareLength ? { 'content-length': String(total) } : {}),
      },
    });
    let written = 0;
    let answered = false;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    req.on('response', (res) => {
      answered = true;
      const at = written;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, writtenBeforeAnswer: at }));
      res.on('error', reject);
    });
    // The server drops the connection after answering: writes after that may fail.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const pump = () => {
      while (!answered && written < total) {
        const n = Math.min(chunk.length, total - written);
        written += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

describe('hostile queries are refused with clear codes while normal queries keep working', () => {
  it('depth 100, 1,000 aliases, 50,000 tokens, recursive fragments, 1,000 batched operations, a 50 MB body', async () => {
    const percentiles = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const p = (q: number) =>
        sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
      return `${sorted.length} answered, p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${p(1)} ms`;
    };
    // Baseline: the same 4 clients, 10 queries each, without attacks.
    const baseline: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let i = 0; i < 10; i++) {
          const started = performance.now();
          await query('{ thread(id: "h") { id logLength } }');
          baseline.push(performance.now() - started);
        }
      }),
    );
    // Normal traffic: 4 clients sending a small query back to back until the attacks are done.
    const latencies: number[] = [];
    let failures = 0;
    let attacking = true;
    const normal = async () => {
      while (attacking) {
        const started = performance.now();
        const r = await query('{ thread(id: "h") { id logLength } }');
        latencies.push(performance.now() - started);
        if (r.status !== 200 || (r.body.data as { thread?: { id?: string } })?.thread?.id !== 'h') {
          failures++;
        }
      }
    };
    const clients = Array.from({ length: 4 }, normal);

    const results: Record<string, { status: number; codes: unknown[] }> = {};
    const record = (name: string, a: Answer) => {
      results[name] = { status: a.status, codes: codes(a) };
    };
    try {
      const deep = `{ thread(id: "h") { ${'forkedFrom { thread { '.repeat(50)}id${' } }'.repeat(50)} } }`;
      record('depth 100', await query(deep));

      const aliases = Array.from({ length: 1000 }, (_, i) => `a${i}: id`).join(' ');
      record('1,000 aliases', await query(`{ thread(id: "h") { ${aliases} } }`));

      record(
        '50,000 tokens',
        await query(`{ thread(id: "h") { ${Array(50_000).fill('id').join(' ')} } }`),
      );

      const directives = Array(60).fill('id @include(if: true)').join(' ');
      record('60 directives', await query(`{ thread(id: "h") { ${directives} } }`));

      record(
        'recursive fragments',
        await query(
          'query { ...A } fragment A on Query { thread(id: "h") { id } ...B } fragment B on Query { ...A }',
        ),
      );

      const batch = JSON.stringify(
        Array.from({ length: 1000 }, () => ({ query: '{ __typename }' })),
      );
      record('1,000 batched operations', await post(batch));

      const huge = await postHuge(50 * 1024 * 1024, true);
      const hugeBody = JSON.parse(huge.body) as Answer['body'];
      results['50 MB body'] = { status: huge.status, codes: codes({ status: 0, body: hugeBody }) };
      // Refused from its headers: the answer came long before the body was sent.
      expect(huge.writtenBeforeAnswer).toBeLessThan(50 * 1024 * 1024);

      const chunked = await postHuge(50 * 1024 * 1024, false);
      results['50 MB chunked body'] = {
        status: chunked.status,
        codes: codes({ status: 0, body: JSON.parse(chunked.body) }),
      };
    } finally {
      attacking = false;
      await Promise.all(clients);
    }

    expect(results).toEqual({
      'depth 100': { status: 400, codes: expect.arrayContaining(['QUERY_TOO_DEEP']) },
      '1,000 aliases': { status: 400, codes: ['TOO_MANY_ALIASES'] },
      '50,000 tokens': { status: 400, codes: ['TOO_MANY_TOKENS'] },
      '60 directives': { status: 400, codes: ['TOO_MANY_DIRECTIVES'] },
      'recursive fragments': { status: 400, codes: ['RECURSIVE_FRAGMENT'] },
      '1,000 batched operations': { status: 413, codes: ['BATCH_TOO_LARGE'] },
      '50 MB body': { status: 413, codes: ['PAYLOAD_TOO_LARGE'] },
      '50 MB chunked body': { status: 411, codes: ['LENGTH_REQUIRED'] },
    });
    expect(failures).toBe(0);
    expect(latencies.length).toBeGreaterThan(0);
    console.log(
      `[limits] normal query (4 concurrent clients; server and clients share one process): ` +
        `baseline ${percentiles(baseline)}; under attack ${percentiles(latencies)}`,
    );
    // The server still answers after the attacks.
    const after = await query('{ thread(id: "h") { id } }');
    expect(after.status).toBe(200);
  });

  it('a batch within the limit is answered, one result per operation', async () => {
    const batch = JSON.stringify(
      Array.from({ length: LIMIT_DEFAULTS.maxBatch }, (_, i) => ({
        query: `{ thread(id: "h") { id } n${i}: __typename }`,
      })),
    );
    const r = await post(batch);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(LIMIT_DEFAULTS.maxBatch);
  });

  it('aliases of __typename count toward the alias limit like any other', async () => {
    const over = LIMIT_DEFAULTS.maxAliases + 10;
    const aliases = Array.from({ length: over }, (_, i) => `t${i}: __typename`).join(' ');
    const r = await query(`{ ${aliases} }`);
    expect(r.status).toBe(400);
    expect(codes(r)).toEqual(['TOO_MANY_ALIASES']);
    const mixed = Array.from({ length: over }, (_, i) =>
      i % 2 === 0 ? `t${i}: __typename` : `a${i}: id`,
    ).join(' ');
    const m = await query(`{ thread(id: "h") { ${mixed} } }`);
    expect(codes(m)).toEqual(['TOO_MANY_ALIASES']);
  });

  it('limits just above a normal query are not hit by it', async () => {
    const r = await query(
      `{ thread(id: "h") { ${Array.from({ length: LIMIT_DEFAULTS.maxAliases }, (_, i) => `a${i}: id`).join(' ')} } }`,
    );
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
  });
});

describe('over graphql-ws', () => {
  it('a too deep or too long document gets an error message with its code; the socket stays open', async () => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const next = () =>
      new Promise<{ type: string; id?: string; payload?: unknown }>((resolve) =>
        ws.once('message', (d) => resolve(JSON.parse(d.toString()))),
      );
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'connection_init' }));
    expect((await next()).type).toBe('connection_ack');
    const documents = {
      deep: `{ thread(id: "h") { ${'forkedFrom { thread { '.repeat(50)}id${' } }'.repeat(50)} } }`,
      long: `{ thread(id: "h") { ${Array(50_000).fill('id').join(' ')} } }`,
    };
    const answers: Record<string, unknown> = {};
    for (const [id, query] of Object.entries(documents)) {
      ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query } }));
      const m = await next();
      answers[id] = {
        type: m.type,
        codes: (m.payload as Array<{ extensions?: { code?: string } }>).map(
          (e) => e.extensions?.code,
        ),
      };
    }
    expect(answers).toEqual({
      deep: { type: 'error', codes: expect.arrayContaining(['QUERY_TOO_DEEP']) },
      long: { type: 'error', codes: ['TOO_MANY_TOKENS'] },
    });
    expect(ws.readyState).toBe(WebSocket.OPEN);
    ws.close();
  });
});

describe('CSRF prevention', () => {
  it('a form or text/plain POST is refused (403 CSRF_REJECTED) and writes nothing', async () => {
    const mutation = 'mutation { createThread(input: { threadId: "csrf" }) { __typename } }';
    const form = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: mutation }).toString(),
    });
    expect(form.status).toBe(403);
    expect(((await form.json()) as Answer['body']).errors?.[0]?.extensions?.code).toBe(
      'CSRF_REJECTED',
    );
    const plain = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ query: mutation }),
    });
    expect(plain.status).toBe(403);
    const read = await query('{ thread(id: "csrf") { id } }');
    expect(read.body.data).toEqual({ thread: null });
  });

  it('the same form POST with the x-weft-csrf header gets past the check', async () => {
    const form = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-weft-csrf': '1' },
      body: new URLSearchParams({ query: '{ thread(id: "h") { id } }' }).toString(),
    });
    expect(form.status).not.toBe(403);
  });

  it('GET queries and JSON POSTs need no header', async () => {
    const get = await fetch(`${url}?query=${encodeURIComponent('{ thread(id: "h") { id } }')}`, {
      headers: { accept: 'application/json' },
    });
    expect(get.status).toBe(200);
    expect((await query('{ thread(id: "h") { id } }')).status).toBe(200);
  });

  it('a WebSocket from a foreign browser origin is refused; the own origin and non-browsers are not', async () => {
    const wsUrl = url.replace(/^http/, 'ws');
    const open = (headers: Record<string, string>) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(wsUrl, 'graphql-transport-ws', { headers });
        ws.on('open', () => {
          ws.close();
          resolve('open');
        });
        ws.on('unexpected-response', (_req, res) => resolve(`refused ${res.statusCode}`));
        ws.on('error', () => resolve('error'));
      });
    expect(await open({ origin: 'https://evil.example' })).toBe('refused 403');
    expect(await open({ origin: new URL(url).origin })).toBe('open');
    expect(await open({})).toBe('open');
  });
});

describe('limit configuration', () => {
  it('defaults, overrides, and every bad value named', () => {
    const defaults = loadConfig({});
    expect(defaults.limits).toEqual({
      maxDepth: LIMIT_DEFAULTS.maxDepth,
      maxCost: LIMIT_DEFAULTS.maxCost,
      maxAliases: LIMIT_DEFAULTS.maxAliases,
      maxTokens: LIMIT_DEFAULTS.maxTokens,
      maxDirectives: LIMIT_DEFAULTS.maxDirectives,
      maxBatch: LIMIT_DEFAULTS.maxBatch,
      maxPayloadBytes: LIMIT_DEFAULTS.maxPayloadBytes,
      maxImportBytes: LIMIT_DEFAULTS.maxImportBytes,
      maxImportNodes: LIMIT_DEFAULTS.maxImportNodes,
    });
    expect(loadConfig({ WEFT_MAX_DEPTH: '8', WEFT_MAX_BATCH: '0' }).limits).toMatchObject({
      maxDepth: 8,
      maxBatch: 0,
    });
    let error: unknown;
    try {
      loadConfig({ WEFT_MAX_DEPTH: 'deep', WEFT_MAX_TOKENS: '-1', WEFT_SHUTDOWN_GRACE_MS: '1e3' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringMatching(/^WEFT_MAX_DEPTH must be an integer .*"deep"/),
      expect.stringMatching(/^WEFT_MAX_TOKENS must be an integer .*"-1"/),
      expect.stringMatching(/^WEFT_SHUTDOWN_GRACE_MS must be an integer .*"1e3"/),
    ]);
  });

  it('a configured limit applies: WEFT_MAX_DEPTH=3 refuses depth 4, WEFT_MAX_BATCH=0 refuses batches', async () => {
    const strict = await createTestApp({
      config: { limits: { ...loadConfig({}).limits, maxDepth: 3, maxBatch: 0 } },
    });
    try {
      const deep = await strict.gql('{ thread(id: "x") { forkedFrom { thread { id } } } }');
      expect(deep.errors?.map((e) => e.extensions?.code)).toContain('QUERY_TOO_DEEP');
      const batch = await strict.post(JSON.stringify([{ query: '{ __typename }' }]));
      expect(batch.status).toBe(400);
      expect(batch.errors?.[0]?.extensions?.code).toBe('BATCHING_DISABLED');
    } finally {
      await strict.close();
    }
  });
});
