/**
 * The console's browser tests: a real `weft serve` (startServer) on a fresh SQLite file (or a
 * given database), keyed
 * (an admin and a read-only key created first), requests through its port, and headless Chromium
 * where every request to another origin is aborted and recorded.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { apiKeys } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/server/config.js';
import { startServer } from '../../src/server/serve.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';

// biome-ignore lint/suspicious/noExplicitAny: tests read response data loosely
export type Json = Record<string, any>;

export interface ConsoleServer {
  base: string;
  admin: string;
  reader: string;
  gql(query: string, variables?: Record<string, unknown>, key?: string): Promise<Json>;
  /** Stops the server and starts it again on the same port and database file. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** A console server on a fresh SQLite file, or on `url` (an empty Postgres database, say). */
export async function startConsoleServer(url?: string): Promise<ConsoleServer> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-console-'));
  const databaseUrl = url ?? `file:${join(dir, 'weft.db')}`;
  await migrate(databaseUrl);
  const db = createPrisma(databaseUrl);
  const keys = apiKeys(db);
  const admin = (await keys.create({ tenant: 'default', scopes: ['admin'] })).key;
  const reader = (await keys.create({ tenant: 'default', scopes: ['read'] })).key;
  await db.prisma.$disconnect();
  const start = (port: string) =>
    startServer(
      loadConfig({
        DATABASE_URL: databaseUrl,
        PORT: port,
        HOST: '127.0.0.1',
        WEFT_REQUEST_LOG: 'off',
      }),
      () => undefined,
    );
  let server = await start('0');
  const base = new URL(server.url!).origin;
  const gql = async (query: string, variables?: Record<string, unknown>, key = admin) => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${key}`,
      },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as Json;
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data as Json;
  };
  return {
    base,
    admin,
    reader,
    gql,
    async restart() {
      await server.close();
      server = await start(new URL(base).port);
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Watched {
  /** Requests to anything but the server's origin (aborted). */
  foreign: string[];
  /** console.error messages and uncaught page errors. */
  errors: string[];
}

/** Aborts and records every request leaving `origin`; records console errors. */
export async function watch(page: Page, origin: string, watched: Watched): Promise<void> {
  await page.route('**', (route) => {
    const target = new URL(route.request().url());
    if (target.origin === origin || ['data:', 'blob:'].includes(target.protocol)) {
      return route.continue();
    }
    watched.foreign.push(route.request().url());
    return route.abort('internetdisconnected');
  });
  page.on('console', (message) => {
    if (message.type() === 'error') watched.errors.push(message.text());
  });
  page.on('pageerror', (error) => watched.errors.push(error.message));
}

/** Enters `key` at the console's key prompt. */
export async function signIn(page: Page, key: string, watched: Watched): Promise<void> {
  await page.locator('#api-key').waitFor({ timeout: 30_000 });
  // The page learnt that a key is needed from a 401, which Chromium logs as an error: that one
  // is expected, any other is not.
  const expected =
    'Failed to load resource: the server responded with a status of 401 (Unauthorized)';
  const unexpected = watched.errors.filter((e) => e !== expected);
  expect(watched.errors.length - unexpected.length).toBe(1);
  watched.errors.splice(0, watched.errors.length, ...unexpected);
  await page.locator('#api-key').fill(key);
  await page.getByRole('button', { name: 'Connect' }).click();
  await page.locator('[data-live="connected"]').waitFor({ timeout: 30_000 });
}

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is. */
export async function axeViolations(
  page: Page,
): Promise<Array<{ id: string; impact: string; nodes: string[] }>> {
  // Evaluated through the DevTools protocol: the page's CSP (script-src 'self') does not apply.
  await page.evaluate(AXE);
  type Violation = { id: string; impact: string; nodes: Array<{ target: string[] }> };
  type Axe = { run(context: Document, options: object): Promise<{ violations: Violation[] }> };
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: Axe }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
}

/**
 * The committed screenshots in docs/console are written by `npm run console:screenshots` (which
 * sets WEFT_SCREENSHOTS=1), on purpose, and looked at before committing; an ordinary test run
 * leaves the working tree as it was.
 */
const SHOTS = join(process.cwd(), 'docs', 'console');
export const shoot = async (
  page: { screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown> },
  name: string,
  fullPage = false,
): Promise<void> => {
  if (process.env.WEFT_SCREENSHOTS !== '1') return;
  await page.screenshot({ path: join(SHOTS, name), fullPage });
};
