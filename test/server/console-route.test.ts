/**
 * The console's files over HTTP (src/server/console.ts), through a real listening server: `/`
 * sends a browser (and only a browser) to /console/, the built files are served with their type,
 * gzip and cache policy and a same-origin CSP, a path outside the build is not found, and a
 * server whose console is not built says how to build it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleRoutes } from '../../src/server/console.js';

const root = mkdtempSync(join(tmpdir(), 'weft-console-route-'));
const built = join(root, 'dist');
const servers: Server[] = [];

async function serve(dir: string): Promise<string> {
  const handle = consoleRoutes(dir);
  const server = createServer((req, res) => {
    if (!handle(req, res)) res.writeHead(418).end('fell through');
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(() => {
  mkdirSync(join(built, 'assets'), { recursive: true });
  writeFileSync(join(built, 'index.html'), '<!doctype html><title>Weft Console</title>');
  writeFileSync(
    join(built, 'assets', 'app-abc.js'),
    `console.log(${JSON.stringify('x'.repeat(4000))});`,
  );
  writeFileSync(join(root, 'secret.txt'), 'outside the build');
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  rmSync(root, { recursive: true, force: true });
});

describe('console routes', () => {
  it('sends a browser asking for / to /console/, and leaves other requests alone', async () => {
    const base = await serve(built);
    const home = await fetch(`${base}/`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(home.status).toBe(302);
    expect(home.headers.get('location')).toBe('/console/');
    expect((await fetch(`${base}/`, { headers: { accept: 'application/json' } })).status).toBe(418);
    expect((await fetch(`${base}/console/`, { method: 'POST' })).status).toBe(418);
    expect((await fetch(`${base}/graphql`)).status).toBe(418);
  });

  it('serves the page and its assets with type, cache policy, gzip and a same-origin CSP', async () => {
    const base = await serve(built);
    const page = await fetch(`${base}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(await page.text()).toContain('Weft Console');
    const script = await fetch(`${base}/console/assets/app-abc.js`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('content-encoding')).toBe('gzip');
    expect(script.headers.get('cache-control')).toContain('immutable');
    expect(await script.text()).toContain('xxxx');
    const head = await fetch(`${base}/console/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('finds nothing outside the build', async () => {
    const base = await serve(built);
    expect((await fetch(`${base}/console/missing.js`)).status).toBe(404);
    // Only the files found in the build are answered: no path reaches outside it.
    for (const path of [
      '/console/../secret.txt',
      '/console/%2e%2e/secret.txt',
      '/console/assets/../../secret.txt',
    ]) {
      const response = await fetch(`${base}${path}`);
      expect(await response.text(), path).not.toContain('outside the build');
    }
  });

  it('says how to build the console when it is not built', async () => {
    const base = await serve(join(root, 'nowhere'));
    const page = await fetch(`${base}/console/`);
    expect(page.status).toBe(503);
    expect(await page.text()).toContain('npm run console:build');
  });
});
