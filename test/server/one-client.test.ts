/**
 * A server started as `weft serve` starts it opens its database once: one Prisma client and the
 * read connection (SQLite) or read pool (Postgres) beside it, plus the writer connection of a
 * SQLite store — shared by the thread store, the read queries, the authenticator, the event hub
 * and the sweepers. Every part is exercised (an open-mode caller, writes, reads, a subscription's
 * replay) before the handles are counted; opening is lazy, so a part that opened a client of its
 * own would show here.
 *
 * SQLite: the connections open on the database file, counted in /proc/self/fd (the writer's
 * thread shares the process's descriptors). Postgres: the pg pools that connected, seen at
 * `Pool.prototype.connect`, which every query of a pool goes through (Prisma's adapter pool
 * included); and every connection to the database is named `weft` in pg_stat_activity.
 */
import { mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import { startServer } from '../../src/server/serve.js';
import { createTestDatabase, describeWithPostgres, POSTGRES_URL } from '../support/services.js';

const root = mkdtempSync(join(tmpdir(), 'weft-one-client-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const quiet = () => undefined;

type Server = Awaited<ReturnType<typeof startServer>>;

async function post(server: Server, query: string): Promise<Record<string, unknown>> {
  const response = await fetch(server.url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as { data?: Record<string, unknown>; errors?: unknown };
  expect(body.errors).toBeUndefined();
  return body.data!;
}

/** What touches every part: the authenticator, the engine's writes, the read queries, the hub. */
async function exercise(server: Server): Promise<void> {
  await post(server, 'mutation { createThread(input: { threadId: "t" }) { __typename } }');
  const appended = await post(
    server,
    'mutation { appendNodes(input: { threadId: "t", nodes: [{ kind: SYSTEM, payload: 1 }] }) { __typename } }',
  );
  expect(appended).toEqual({ appendNodes: { __typename: 'AppendNodesSuccess' } });
  const read = await post(
    server,
    '{ threads(first: 5) { edges { node { id logLength } } } thread(id: "t") { nodes(first: 5) { edges { node { kind } } } } }',
  );
  expect(read).toMatchObject({ threads: { edges: [{ node: { id: 't', logLength: 2 } }] } });
  // A subscription replays from the store through the hub (SSE; ended once it has the entry).
  const controller = new AbortController();
  const response = await fetch(server.url!, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      query: 'subscription { threadEvents(threadId: "t", afterIndex: 0) { index } }',
    }),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('"index":1')) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  controller.abort();
  expect(text).toContain('"index":1');
}

describe('weft serve on SQLite', () => {
  it('opens the database file once for the Prisma client, once to read and once to write', async () => {
    const path = join(root, 'weft.db');
    const server = await startServer(
      loadConfig({
        DATABASE_URL: `file:${path}`,
        PORT: '0',
        HOST: '127.0.0.1',
        WEFT_REQUEST_LOG: 'off',
      }),
      quiet,
    );
    try {
      await exercise(server);
      const file = realpathSync(path);
      const open = readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false; // closed since the listing
        }
      });
      expect(open.length).toBeGreaterThanOrEqual(2); // the count sees the connections
      expect(open.length).toBeLessThanOrEqual(3);
    } finally {
      await server.close();
    }
  });
});

describeWithPostgres('weft serve on Postgres', () => {
  const connect = pg.Pool.prototype.connect;
  const pools = new Set<pg.Pool>();
  beforeEach(() => {
    pg.Pool.prototype.connect = function (this: pg.Pool, ...args: unknown[]) {
      pools.add(this);
      return (connect as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof connect;
  });
  afterEach(() => {
    pg.Pool.prototype.connect = connect;
  });

  it('connects through one Prisma pool and one read pool, every connection named weft', async () => {
    const database = await createTestDatabase();
    try {
      const server = await startServer(
        loadConfig({
          DATABASE_URL: database.url,
          PORT: '0',
          HOST: '127.0.0.1',
          WEFT_REQUEST_LOG: 'off',
        }),
        quiet,
      );
      try {
        await exercise(server);
        expect(pools.size).toBe(2);
        const admin = new pg.Client({ connectionString: POSTGRES_URL });
        await admin.connect();
        try {
          const { rows } = await admin.query(
            'SELECT application_name FROM pg_stat_activity WHERE datname = $1',
            [database.name],
          );
          expect(rows.length).toBeGreaterThan(0);
          expect(new Set(rows.map((r) => r.application_name))).toEqual(new Set(['weft']));
        } finally {
          await admin.end();
        }
      } finally {
        await server.close();
      }
    } finally {
      await database.drop();
    }
  });
});
