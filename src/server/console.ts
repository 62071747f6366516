/**
 * The Weft Console's files (console/dist, built by scripts/console-build.mjs) at /console, and a
 * browser asking for `/` sent there. Only GET and HEAD; anything else falls through to the rest
 * of the server. Files are read once and kept in memory (with a gzip copy of the text ones);
 * hashed assets are cached for good, the page is revalidated on each load. A Content-Security-
 * Policy lets the page load and connect to its own origin only.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const CONSOLE_PATH = '/console';

/** console/dist from src/server (tsx) and from dist/server (compiled) alike. */
const DEFAULT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'dist');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
};

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface File {
  type: string;
  body: Buffer;
  gzip: Buffer | undefined;
  immutable: boolean;
}

function load(dir: string): Map<string, File> {
  const files = new Map<string, File>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!name.startsWith('.')) {
        const body = readFileSync(path);
        const type = TYPES[extname(name)] ?? 'application/octet-stream';
        const text = type.startsWith('text/') || type.includes('json') || type.includes('svg');
        files.set(`/${relative(dir, path).split(sep).join('/')}`, {
          type,
          body,
          gzip: text && body.length > 1024 ? gzipSync(body, { level: 9 }) : undefined,
          immutable: relative(dir, path).startsWith('assets'),
        });
      }
    }
  };
  walk(dir);
  return files;
}

/** Whether console/dist holds a built console (else /console answers 503 saying how to build it). */
export const isConsoleBuilt = (dir: string = DEFAULT_DIR): boolean =>
  existsSync(join(dir, 'index.html'));

/** The handler: true when it answered the request. */
export function consoleRoutes(
  dir: string = DEFAULT_DIR,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  let files: Map<string, File> | undefined;
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/') {
      if (!String(req.headers.accept ?? '').includes('text/html')) return false;
      res.writeHead(302, { location: `${CONSOLE_PATH}/`, 'cache-control': 'no-cache' }).end();
      return true;
    }
    if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return false;
    if (path === CONSOLE_PATH) {
      res.writeHead(301, { location: `${CONSOLE_PATH}/` }).end();
      return true;
    }
    if (files === undefined && isConsoleBuilt(dir)) files = load(dir);
    if (files === undefined) {
      res.writeHead(503, {
        'content-type': 'text/plain; charset=utf-8',
        'cache-control': 'no-cache',
      });
      res.end(
        'The Weft Console is not built here: run `npm run console:build` (needs the dev dependencies), then reload.\n',
      );
      return true;
    }
    const inner = path.slice(CONSOLE_PATH.length);
    const file = files.get(inner === '/' ? '/index.html' : inner);
    if (file === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
      return true;
    }
    const gzip =
      file.gzip !== undefined && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? file.gzip! : file.body;
    res.writeHead(200, {
      'content-type': file.type,
      'content-length': body.length,
      'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      ...(file.gzip === undefined ? {} : { vary: 'Accept-Encoding' }),
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
