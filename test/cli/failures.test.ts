/**
 * Configuration and environment failures of the real CLI: an unreachable or missing Postgres
 * database, a missing or wrong encryption key, a busy port, an invalid variable. Each must be
 * exactly one line on stderr saying what to do, exit code 2, and never a stack trace.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openEngine } from '../../src/engine/index.js';
import { spawnLineChild } from '../integration/support.js';
import {
  describeWithPostgres,
  describeWithRedis,
  postgresUrlFor,
  REDIS_URL,
} from '../support/services.js';
import { weftIn } from './support.js';

const root = mkdtempSync(join(tmpdir(), 'weft-failures-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Exit code 2 and one non-empty stderr line, with no stack frame anywhere in the output. */
function expectOneLine(result: { code: number | null; out: string; err: string }, text: string) {
  const lines = result.err.split('\n').filter((l) => l.trim() !== '');
  expect(lines, result.err).toHaveLength(1);
  expect(lines[0]).toContain(text);
  expect(`${result.out}\n${result.err}`).not.toMatch(/^\s+at /m);
  expect(result.code).toBe(2);
}

// Nothing listens on this port (Postgres tests use 5432).
const UNREACHABLE = 'postgres://postgres@127.0.0.1:5999/test';

describe('an unreachable or missing database', { timeout: 120_000 }, () => {
  it('Postgres not listening: migrate, serve, keys and export each print one line, exit 2', async () => {
    for (const args of [['migrate'], ['serve'], ['keys', 'list'], ['export', 't1']]) {
      const result = await weftIn(args, { DATABASE_URL: UNREACHABLE, PORT: '0' });
      expectOneLine(result, 'cannot reach the database at 127.0.0.1:5999 (ECONNREFUSED)');
      expect(result.err).toContain('DATABASE_URL');
    }
  });

  it('an unopenable SQLite path prints one line, exit 2', async () => {
    const DATABASE_URL = `file:${join(root, 'not-a-dir.db', 'x', 'weft.db')}`;
    const blocker = join(root, 'not-a-dir.db');
    writeFileSync(blocker, 'a file where a directory should be');
    const result = await weftIn(['migrate'], { DATABASE_URL });
    expectOneLine(result, 'cannot open the SQLite database (ENOTDIR');
  });
});

describeWithPostgres('a database missing on a running Postgres', () => {
  it('migrate and serve say to create it, in one line, exit 2', { timeout: 120_000 }, async () => {
    const DATABASE_URL = postgresUrlFor(`weft_missing_${randomBytes(4).toString('hex')}`);
    for (const args of [['migrate'], ['serve']]) {
      const result = await weftIn(args, { DATABASE_URL, PORT: '0' });
      expectOneLine(result, 'does not exist: create that database');
    }
  });
});

describe('the encryption key', { timeout: 180_000 }, () => {
  const KEY = randomBytes(32).toString('hex');
  const OTHER = randomBytes(32).toString('hex');

  it('missing or wrong: every command that opens the data says so in one line, exit 2', async () => {
    const DATABASE_URL = `file:${join(root, 'encrypted.db')}`;
    const engine = await openEngine(DATABASE_URL, {
      storeOptions: { encryptionKey: Buffer.from(KEY, 'hex') },
    });
    const created = await engine.createThread({ threadId: 't1' });
    expect(created.ok).toBe(true);
    await engine.close();

    const commands = [
      ['export', 't1'],
      ['verify', 't1'],
      ['replay', 't1'],
      ['projection', 't1'],
      ['serve'],
    ];
    for (const args of commands) {
      const missing = await weftIn(args, { DATABASE_URL, PORT: '0' });
      expectOneLine(missing, 'ENCRYPTION_KEY_MISSING');
      expect(missing.err).toContain('set WEFT_ENCRYPTION_KEY');
      const wrong = await weftIn(args, { DATABASE_URL, PORT: '0', WEFT_ENCRYPTION_KEY: OTHER });
      expectOneLine(wrong, 'ENCRYPTION_KEY_MISMATCH');
    }
    // The right key still works.
    const verified = await weftIn(['verify', 't1'], { DATABASE_URL, WEFT_ENCRYPTION_KEY: KEY });
    expect(verified.code).toBe(0);
  });

  it('malformed: one line naming the variable, exit 2', async () => {
    const result = await weftIn(['migrate'], {
      DATABASE_URL: `file:${join(root, 'plain.db')}`,
      WEFT_ENCRYPTION_KEY: 'too-short',
    });
    expectOneLine(
      result,
      'invalid configuration: WEFT_ENCRYPTION_KEY: the encryption key must be 32 bytes',
    );
  });
});

describe('a busy port', { timeout: 120_000 }, () => {
  let blocker: Server | undefined;
  afterAll(() => blocker?.close());

  it('weft serve (its own process) prints only the friendly line, exit 2', async () => {
    blocker = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker!.listen(0, '127.0.0.1', () => resolve((blocker!.address() as { port: number }).port)),
    );
    const child = spawnLineChild('src/cli/main.ts', ['serve'], undefined, {
      ...process.env,
      DATABASE_URL: `file:${join(root, 'busy.db')}`,
      HOST: '127.0.0.1',
      PORT: String(port),
    });
    const { code } = await child.exited;
    expectOneLine(
      { code, out: child.lines.join('\n'), err: child.stderr() },
      `cannot listen on 127.0.0.1:${port} (EADDRINUSE): choose another PORT`,
    );
  });
});

describeWithRedis('a Redis that refuses the login', () => {
  it('weft serve (its own process) prints one line without the password, exit 2', {
    timeout: 120_000,
  }, async () => {
    // The test Redis has no users but `default` and no password: any other login is refused
    // (WRONGPASS); one that requires a password answers NOAUTH, which is handled alike.
    const url = new URL(REDIS_URL);
    url.username = 'weft-test-user';
    url.password = 's3cretpw';
    const dir = mkdtempSync(join(root, 'redis-login-'));
    const child = spawnLineChild('src/cli/main.ts', ['serve'], undefined, {
      ...process.env,
      DATABASE_URL: `file:${join(dir, 'weft.db')}`,
      HOST: '127.0.0.1',
      PORT: '0',
      REDIS_URL: url.toString(),
    });
    const { code } = await child.exited;
    const result = { code, out: child.lines.join('\n'), err: child.stderr() };
    expectOneLine(result, 'refused the login');
    expect(result.err).toContain('REDIS_URL');
    expect(`${result.out}\n${result.err}`).not.toContain('s3cretpw');
    // The refused start removed the server lock it had taken.
    expect(readdirSync(dir).filter((name) => name.includes('-weft.lock'))).toEqual([]);
  });
});
