/**
 * With API keys, nothing but /healthz and /readyz answers without a key. Over
 * a real port: `{ __typename }`, introspection and GET queries get 401 UNAUTHENTICATED; /metrics
 * needs WEFT_METRICS_TOKEN or an admin key; the GraphiQL page loads but runs nothing without a
 * key, and is served compressed with an ETag; with introspection off, no message says
 * "Did you mean" (fields, arguments, types, enum literals and enum variables).
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { type AuthApp, createAuthApp } from '../auth/support.js';

let t: AuthApp;
let url: string;
let origin: string;
let admin: string;
let reader: string;

beforeAll(async () => {
  t = await createAuthApp({ mode: 'keys' });
  url = await t.listen();
  origin = new URL(url).origin;
  admin = (await t.key('acme', ['admin'])).key;
  reader = (await t.key('acme', ['read'])).key;
});
afterAll(() => t.close());

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read bodies loosely
  json: any;
}

async function call(target: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(target, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

const post = (target: string, query: string, key?: string, variables?: object) =>
  call(target, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify({ query, variables }),
  });

const codeOf = (a: Answer): unknown => a.json?.errors?.[0]?.extensions?.code;

/** A second server on the same database and keys, with other settings. */
async function serverWith(env: Record<string, string>): Promise<{ app: App; url: string }> {
  const config = loadConfig({
    DATABASE_URL: t.databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_REQUEST_LOG: 'off',
    ...env,
  });
  const app = buildApp({ config, engine: t.engine, auth: t.authenticator });
  return { app, url: await app.start() };
}

describe('without a key', () => {
  it('{ __typename }, introspection and GET queries are refused with 401 UNAUTHENTICATED', async () => {
    const documents = [
      '{ __typename }',
      '{ __schema { queryType { name } types { name } } }',
      '{ __type(name: "Query") { fields { name } } }',
    ];
    for (const document of documents) {
      for (const key of [undefined, 'not-a-key']) {
        const answer = await post(url, document, key);
        expect(answer.status, document).toBe(401);
        expect(codeOf(answer), document).toBe('UNAUTHENTICATED');
        expect(answer.json.data, document).toBeUndefined();
        expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    }
    const get = await call(`${url}?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/json' },
    });
    expect(get.status).toBe(401);
    expect(codeOf(get)).toBe('UNAUTHENTICATED');
    const batch = await call(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    });
    expect(batch.text).not.toContain('"Query"');
    // With a key, the same documents are answered.
    const typename = await post(url, '{ __typename }', reader);
    expect(typename.json.data).toEqual({ __typename: 'Query' });
    const schema = await post(url, '{ __schema { queryType { name } } }', reader);
    expect(schema.json.data.__schema.queryType.name).toBe('Query');
  });

  it('a validation error reaches no one without a key (no schema hints)', async () => {
    const answer = await post(url, '{ thred(id: "t") { id } }');
    expect(answer.status).toBe(401);
    expect(answer.text).not.toMatch(/thread|Did you mean/);
  });

  it('/healthz and /readyz answer; /metrics does not', async () => {
    expect((await call(`${origin}/healthz`)).status).toBe(200);
    expect((await call(`${origin}/readyz`)).status).toBe(200);
    const metrics = await call(`${origin}/metrics`);
    expect(metrics.status).toBe(401);
    expect(codeOf(metrics)).toBe('UNAUTHENTICATED');
    expect(metrics.text).not.toContain('weft_');
  });
});

describe('/metrics with keys', () => {
  it('needs an admin key (a read key is refused) or WEFT_METRICS_TOKEN', async () => {
    const asReader = await call(`${origin}/metrics`, {
      headers: { authorization: `Bearer ${reader}` },
    });
    expect(asReader.status).toBe(401);
    const asAdmin = await call(`${origin}/metrics`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.text).toContain('weft_http_requests_total');

    const token = 'scrape-token-0123456789abcdef';
    const scraped = await serverWith({ WEFT_METRICS_TOKEN: token });
    try {
      const base = new URL(scraped.url).origin;
      const withToken = await call(`${base}/metrics`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(withToken.status).toBe(200);
      expect(withToken.text).toContain('weft_http_requests_total');
      const wrong = await call(`${base}/metrics`, {
        headers: { authorization: `Bearer ${token}x` },
      });
      expect(wrong.status).toBe(401);
      expect((await call(`${base}/metrics`)).status).toBe(401);
      // The metrics token is no API key.
      expect((await post(scraped.url, '{ __typename }', token)).status).toBe(401);
    } finally {
      await scraped.app.stop();
    }
  });
});

describe('GraphiQL', () => {
  it('the page loads without a key, compressed and revalidated by ETag; what it sends needs a key', async () => {
    const page = await call(url, { headers: { accept: 'text/html', 'accept-encoding': 'gzip' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    // fetch decodes the body; the header says it travelled compressed.
    expect(page.headers.get('content-encoding')).toBe('gzip');
    expect(page.text).toContain('<title>Weft</title>');
    const etag = page.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    expect(page.headers.get('cache-control')).toBeTruthy();

    const raw = await rawGet(url, { accept: 'text/html', 'accept-encoding': 'gzip' });
    expect(raw.length).toBeLessThan(page.text.length / 2);
    expect(gunzipSync(raw).toString('utf8')).toBe(page.text);

    const brotli = await call(url, { headers: { accept: 'text/html', 'accept-encoding': 'br' } });
    expect(brotli.headers.get('content-encoding')).toBe('br');
    expect(brotli.text).toBe(page.text);

    const again = await call(url, {
      headers: { accept: 'text/html', 'if-none-match': etag ?? '' },
    });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');

    // What the page sends (a same-origin JSON POST, no key) runs nothing.
    const fromPage = await call(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', origin },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(fromPage.status).toBe(401);
  });
});

/** The body bytes as sent (Node's fetch would decode them). */
async function rawGet(target: string, headers: Record<string, string>): Promise<Buffer> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(target, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks)));
    });
    req.on('error', reject);
    req.end();
  });
}

const ENUM_VARIABLE: [string, object] = [
  'query ($s: [RunStatus!]) { thread(id: "t") { runs(status: $s) { __typename } } }',
  { s: ['COMPLETE'] },
];

describe('suggestions with introspection off', () => {
  it('no "Did you mean" for fields, arguments, types, enum literals or enum variables', async () => {
    const closed = await serverWith({ WEFT_INTROSPECTION: 'false' });
    try {
      const documents: Array<[string, object?]> = [
        ['{ thred(id: "t") { id } }'],
        ['{ thread(idd: "t") { id } }'],
        ['query ($id: IDD!) { thread(id: $id) { id } }', { id: 't' }],
        ['{ thread(id: "t") { ... on Thred { id } } }'],
        ['{ thread(id: "t") { id logLenght } }'],
        ['{ thread(id: "t") { runs(status: [COMPLETE]) { __typename } } }'],
        // Coerced at execution, not validation: a variable with a misspelt enum value.
        ENUM_VARIABLE,
      ];
      for (const [document, variables] of documents) {
        const answer = await post(closed.url, document, reader, variables);
        expect(answer.json.errors?.length ?? 0, document).toBeGreaterThan(0);
        expect(answer.text, document).not.toMatch(/Did you mean/);
      }
      // The same mistakes on the open schema do get suggestions (the probe is meaningful).
      const open = await post(url, '{ thred(id: "t") { id } }', reader);
      expect(open.text).toMatch(/Did you mean/);
      const hinted = await post(url, ENUM_VARIABLE[0], reader, ENUM_VARIABLE[1]);
      expect(hinted.text).toMatch(/Did you mean/);
    } finally {
      await closed.app.stop();
    }
  });
});
