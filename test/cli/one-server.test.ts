/**
 * One `weft serve` per SQLite file: a second server on the same file would take writes that the
 * first one's subscribers never hear of, so it is refused at start (one line, exit 2) for as long
 * as the first one lives, however that ends (a SIGKILL included). Other processes (the CLI, an
 * embedded engine) still open the file, and Postgres servers still share one database.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openEngineWithEvents } from '../../src/index.js';
import { loadConfig } from '../../src/server/config.js';
import { StartupRefused, startServer } from '../../src/server/serve.js';
import { type LineChild, spawnLineChild, spawnServe } from '../integration/support.js';
import {
  createTestDatabase,
  describeWithPostgres,
  describeWithRedis,
  REDIS_URL,
} from '../support/services.js';
import { weftIn } from './support.js';

const root = mkdtempSync(join(tmpdir(), 'weft-one-server-'));
const children: LineChild[] = [];
let files = 0;
const freshFile = () => `file:${join(root, `weft-${++files}.db`)}`;

afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.process.exitCode === null && child.process.signalCode === null) {
      child.process.kill('SIGKILL');
    }
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const quiet = () => undefined;
const config = (env: Record<string, string>) =>
  loadConfig({ PORT: '0', HOST: '127.0.0.1', WEFT_REQUEST_LOG: 'off', ...env });

async function graphql(url: string, query: string): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  return response.json();
}

describe('weft serve on a SQLite file another server holds', { timeout: 240_000 }, () => {
  it('the second exits 2 in one line; the CLI still opens the file; after a SIGKILL of the first a new one starts', async () => {
    const DATABASE_URL = freshFile();
    const first = await spawnServe({ DATABASE_URL, WEFT_REQUEST_LOG: 'false' });
    children.push(first);

    const second = spawnLineChild('src/cli/main.ts', ['serve'], undefined, {
      ...process.env,
      DATABASE_URL,
      PORT: '0',
      HOST: '127.0.0.1',
    });
    children.push(second);
    const { code } = await second.exited;
    const errors = second
      .stderr()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(errors, second.stderr()).toHaveLength(1);
    expect(errors[0]).toContain('weft serve: another weft serve is already running on');
    expect(errors[0]).toContain('stop it first');
    expect(second.lines.filter((l) => l.startsWith('weft: serving'))).toEqual([]);
    expect(code).toBe(2);

    // Only servers are refused: the first still answers, and the CLI works on the same file.
    expect(await graphql(first.url, '{ __typename }')).toEqual({ data: { __typename: 'Query' } });
    const keys = await weftIn(['keys', 'list'], { DATABASE_URL });
    expect(keys.err).toBe('');
    expect(keys.code).toBe(0);

    first.process.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const third = await spawnServe({ DATABASE_URL, WEFT_REQUEST_LOG: 'false' });
    children.push(third);
    expect(await graphql(third.url, '{ __typename }')).toEqual({ data: { __typename: 'Query' } });
    third.process.kill('SIGTERM');
    expect((await third.exited).code).toBe(0);
  });

  it('in one process: refused until the first server closes; an embedded engine is not refused', async () => {
    const DATABASE_URL = freshFile();
    const lockFile = `${DATABASE_URL.slice('file:'.length)}-weft.lock`;
    const first = await startServer(config({ DATABASE_URL }), quiet);
    let again: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const refused = await startServer(config({ DATABASE_URL }), quiet).then(
        (s) => s,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(StartupRefused);
      expect((refused as Error).message).toContain('another weft serve is already running');
      // The refused start leaves the file the first server holds.
      expect(existsSync(lockFile)).toBe(true);
      // What a LangGraph WeftSaver or a script opens beside a server.
      const embedded = await openEngineWithEvents(DATABASE_URL);
      await embedded.close();
      // Neither the refusal nor the engine let go of the first server's lock.
      await expect(startServer(config({ DATABASE_URL }), quiet)).rejects.toBeInstanceOf(
        StartupRefused,
      );
    } finally {
      await first.close();
    }
    // A server that stops removes its lock file.
    expect(existsSync(lockFile)).toBe(false);
    try {
      again = await startServer(config({ DATABASE_URL }), quiet);
      expect(await graphql(again.url!, '{ __typename }')).toEqual({
        data: { __typename: 'Query' },
      });
    } finally {
      await again?.close();
    }
  });

  it('a start refused for its configuration removes the lock file it took', async () => {
    const DATABASE_URL = freshFile();
    const path = DATABASE_URL.slice('file:'.length);
    const refused = await startServer(config({ DATABASE_URL, HOST: '0.0.0.0' }), quiet).then(
      (s) => s,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(StartupRefused);
    expect(existsSync(`${path}-weft.lock`)).toBe(false);
    expect(existsSync(`${path}-weft.lock-journal`)).toBe(false);
  });
});

describeWithRedis('weft serve on one SQLite file with Redis', () => {
  it('is still refused: Redis does not make a second server on one SQLite file useful', async () => {
    const DATABASE_URL = freshFile();
    const first = await startServer(config({ DATABASE_URL, REDIS_URL }), quiet);
    try {
      await expect(startServer(config({ DATABASE_URL, REDIS_URL }), quiet)).rejects.toBeInstanceOf(
        StartupRefused,
      );
    } finally {
      await first.close();
    }
  });
});

describeWithPostgres('weft serve on one Postgres database', () => {
  it('takes no lock: several servers share it', { timeout: 120_000 }, async () => {
    const db = await createTestDatabase();
    const a = await startServer(config({ DATABASE_URL: db.url }), quiet);
    try {
      const b = await startServer(config({ DATABASE_URL: db.url }), quiet);
      await b.close();
    } finally {
      await a.close();
      await db.drop();
    }
  });
});
