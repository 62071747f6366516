/**
 * A web page on another origin, or a DNS-rebinding page, must not read or write
 * a developer's server. Over a real port: a foreign Origin is refused (403 ORIGIN_NOT_ALLOWED)
 * on HTTP and WebSocket alike and gets no CORS headers; configured origins (WEFT_CORS_ORIGINS, and
 * the older WEFT_ALLOWED_ORIGINS) get CORS with credentials; in open mode a Host that is not the
 * loopback name of the server is refused (403 HOST_NOT_ALLOWED), HTTP and WebSocket alike.
 * Requests without Origin (curl, servers) keep working.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { loadConfig } from '../../src/server/config.js';
import { createTestApp, type TestApp } from '../api/support.js';
import { type AuthApp, createAuthApp } from '../auth/support.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An HTTP request with exactly these headers (Host included, which fetch does not let us set). */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(options.body === undefined
            ? {}
            : { 'content-length': Buffer.byteLength(options.body) }),
          ...options.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const codeOf = (a: Answer): unknown => JSON.parse(a.body).errors?.[0]?.extensions?.code;

/** Opens a graphql-ws socket with these headers: 'open', or 'refused <status> <code>'. */
function openSocket(url: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws', { headers });
    ws.on('open', () => {
      ws.close();
      resolve('open');
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => {
        let code: unknown;
        try {
          code = JSON.parse(body).errors?.[0]?.extensions?.code;
        } catch {
          code = body;
        }
        resolve(`refused ${res.statusCode} ${String(code)}`);
      });
    });
    ws.on('error', () => resolve('error'));
  });
}

const WRITE = JSON.stringify({
  query: 'mutation { createThread(input: { threadId: "from-evil" }) { __typename } }',
});
const READ = JSON.stringify({ query: '{ thread(id: "from-evil") { id } }' });

describe('open mode on loopback', () => {
  let t: TestApp;
  let url: string;
  let port: string;
  beforeAll(async () => {
    t = await createTestApp({
      config: { requestLog: false, allowedOrigins: ['https://app.example'] },
    });
    url = await t.app.start();
    port = new URL(url).port;
  });
  afterAll(() => t.close());

  it('a foreign Origin is refused with 403 ORIGIN_NOT_ALLOWED, no CORS headers, and writes nothing', async () => {
    const write = await send(url, { body: WRITE, headers: { origin: 'https://evil.example' } });
    expect(write.status).toBe(403);
    expect(codeOf(write)).toBe('ORIGIN_NOT_ALLOWED');
    expect(write.headers['access-control-allow-origin']).toBeUndefined();
    expect(write.headers['access-control-allow-credentials']).toBeUndefined();
    const preflight = await send(url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const sandboxed = await send(url, { body: READ, headers: { origin: 'null' } });
    expect(sandboxed.status).toBe(403);
    // Nothing was written: a request without Origin (curl) reads it and is answered.
    const read = await send(url, { body: READ });
    expect(read.status).toBe(200);
    expect(JSON.parse(read.body).data).toEqual({ thread: null });
  });

  it('the own origin and a configured origin are answered; only the configured one gets CORS', async () => {
    const own = await send(url, { body: READ, headers: { origin: `http://127.0.0.1:${port}` } });
    expect(own.status).toBe(200);
    const configured = await send(url, { body: READ, headers: { origin: 'https://app.example' } });
    expect(configured.status).toBe(200);
    expect(configured.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(configured.headers['access-control-allow-credentials']).toBe('true');
    const other = await send(url, { body: READ, headers: { origin: 'https://other.example' } });
    expect(other.status).toBe(403);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a Host that is not a loopback name of this server is refused (DNS rebinding), HTTP and WebSocket', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`]) {
      const rebound = await send(url, { body: WRITE, headers: { host } });
      expect(rebound.status, host).toBe(403);
      expect(codeOf(rebound), host).toBe('HOST_NOT_ALLOWED');
    }
    // A rebinding page is same-origin with itself: Origin and Host agree, and it is still refused.
    const samePage = await send(url, {
      body: WRITE,
      headers: { host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
    });
    expect(samePage.status).toBe(403);
    expect(codeOf(samePage)).toBe('HOST_NOT_ALLOWED');
    expect(await openSocket(url, { host: `evil.example:${port}` })).toBe(
      'refused 403 HOST_NOT_ALLOWED',
    );
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const ok = await send(url, { body: READ, headers: { host } });
      expect(ok.status, host).toBe(200);
      expect(await openSocket(url, { host }), host).toBe('open');
    }
    const read = await send(url, { body: READ });
    expect(JSON.parse(read.body).data).toEqual({ thread: null });
  });

  it('a WebSocket from a foreign origin is refused with 403 ORIGIN_NOT_ALLOWED; own origin and no origin open', async () => {
    expect(await openSocket(url, { origin: 'https://evil.example' })).toBe(
      'refused 403 ORIGIN_NOT_ALLOWED',
    );
    expect(await openSocket(url, { origin: `http://127.0.0.1:${port}` })).toBe('open');
    expect(await openSocket(url, { origin: 'https://app.example' })).toBe('open');
    expect(await openSocket(url, {})).toBe('open');
  });
});

describe('keyed mode', () => {
  let t: AuthApp;
  let url: string;
  let port: string;
  beforeAll(async () => {
    t = await createAuthApp({ mode: 'keys' });
    url = await t.listen();
    port = new URL(url).port;
  });
  afterAll(() => t.close());

  it('any Host may reach it (a proxy), but a foreign Origin is still refused even with a key', async () => {
    const key = await t.key('acme', ['read']);
    const authorization = `Bearer ${key.key}`;
    const proxied = await send(url, {
      body: READ,
      headers: { host: `weft.internal:${port}`, authorization },
    });
    expect(proxied.status).toBe(200);
    const foreign = await send(url, {
      body: READ,
      headers: { origin: 'https://evil.example', authorization },
    });
    expect(foreign.status).toBe(403);
    expect(codeOf(foreign)).toBe('ORIGIN_NOT_ALLOWED');
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('configuration', () => {
  it('WEFT_CORS_ORIGINS and the older WEFT_ALLOWED_ORIGINS both allow origins; a malformed one is named', () => {
    expect(loadConfig({}).allowedOrigins).toEqual([]);
    expect(
      loadConfig({
        WEFT_CORS_ORIGINS: 'https://a.example, https://b.example/',
        WEFT_ALLOWED_ORIGINS: 'https://b.example,http://localhost:3000',
      }).allowedOrigins,
    ).toEqual(['https://a.example', 'https://b.example', 'http://localhost:3000']);
    expect(() => loadConfig({ WEFT_CORS_ORIGINS: 'a.example' })).toThrow(/WEFT_CORS_ORIGINS/);
  });
});
