/**
 * The CLI speaks plainly: a usage error is the error and one line of usage (not the whole help),
 * every configuration refusal exits 2, `bin/weft.js` without `dist/` says to build in one line,
 * and the start banner names the console and whether Redis fan-out is on.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import { startupBanner } from '../../src/server/serve.js';
import { migrate } from '../../src/store/migrate/index.js';
import { migrationLedger } from '../../src/store/tables/index.js';
import { weftIn } from './support.js';

const ROOT = join(import.meta.dirname, '../..');
const root = mkdtempSync(join(tmpdir(), 'weft-usage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

/** The server lock files (`<db>-weft.lock`, its journal) left in `root` by a refused start. */
const lockFiles = () => readdirSync(root).filter((name) => name.includes('-weft.lock'));

describe('a usage error', () => {
  const cases: Array<{ args: string[]; error: string; usage: string }> = [
    {
      args: ['verify', 't1', '--frob'],
      error: 'weft verify: unknown option --frob',
      usage: 'weft verify',
    },
    {
      args: ['export'],
      error: 'weft export: export takes one thread id',
      usage: 'weft export <threadId>',
    },
    {
      args: ['export', 't1', '--at'],
      error: 'weft export: --at needs a value',
      usage: 'weft export',
    },
    {
      args: ['keys', 'frob'],
      error: 'weft keys: keys needs create, list, revoke or purge',
      usage: 'weft keys create',
    },
    {
      args: ['serve', 'now'],
      error: 'weft serve: serve takes no arguments (got now)',
      usage: 'weft serve',
    },
    {
      args: ['frobnicate'],
      error: "weft: unknown command 'frobnicate'",
      usage: 'weft <serve|migrate|keys',
    },
  ];

  for (const c of cases) {
    it(`weft ${c.args.join(' ')}: the error, then one line of usage pointing at --help; exit 2`, async () => {
      const result = await weftIn(c.args);
      expect(result.code).toBe(2);
      expect(result.out).toBe('');
      const printed = lines(result.err);
      expect(printed, result.err).toHaveLength(2);
      expect(printed[0]).toBe(c.error);
      expect(printed[1]).toMatch(/^usage: /);
      expect(printed[1]).toContain(c.usage);
      expect(printed[1]).toContain('weft --help');
    });
  }
});

describe('--help after a command', () => {
  it('prints the help the usage line points at, exit 0', async () => {
    const help = await weftIn(['export', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('Usage: weft <command> [options]');
    const keys = await weftIn(['keys', 'create', '--help']);
    expect(keys.code).toBe(0);
    expect(keys.out).toContain('Open and keyed mode');
  });
});

describe('configuration refusals', () => {
  it('a non-loopback HOST without API keys exits 2, in one line saying what to do', async () => {
    const refused = await weftIn(['serve'], {
      HOST: '0.0.0.0',
      DATABASE_URL: `file:${join(root, 'public.db')}`,
    });
    expect(lines(refused.err), refused.err).toHaveLength(1);
    expect(refused.err).toContain('HOST=0.0.0.0 is not a loopback address');
    expect(refused.err).toContain('weft keys create');
    expect(refused.code).toBe(2);
    // The lock was taken before the refusal; the refused start removes its file.
    expect(lockFiles()).toEqual([]);
  });

  it('a REDIS_URL nothing answers on exits 2, in one line naming it', {
    timeout: 60_000,
  }, async () => {
    // Port 1: nothing listens there.
    const refused = await weftIn(['serve'], {
      DATABASE_URL: `file:${join(root, 'no-redis.db')}`,
      PORT: '0',
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(lines(refused.err), refused.err).toHaveLength(1);
    expect(refused.err).toContain('cannot subscribe to Redis at redis://127.0.0.1:1');
    expect(refused.err).toContain('check REDIS_URL');
    expect(refused.code).toBe(2);
    expect(lockFiles()).toEqual([]);
  });
});

describe('a database a newer Weft migrated', { timeout: 120_000 }, () => {
  it('migrate, serve, keys and export each refuse it in one line, exit 2', async () => {
    const path = join(root, 'newer.db');
    const DATABASE_URL = `file:${path}`;
    await migrate(DATABASE_URL);
    const db = new Database(path);
    db.prepare(`INSERT INTO ${migrationLedger.sql} VALUES ('9999_future', 'x', 'now')`).run();
    db.close();
    for (const args of [['migrate'], ['serve'], ['keys', 'list'], ['export', 't1']]) {
      const refused = await weftIn(args, { DATABASE_URL, PORT: '0' });
      expect(lines(refused.err), refused.err).toHaveLength(1);
      expect(refused.err).toContain('9999_future');
      expect(refused.err).toContain('run that version');
      expect(refused.code).toBe(2);
    }
  });
});

describe('bin/weft.js', () => {
  it('without dist/ says in one line to run npm run build, and exits non-zero', () => {
    // A copy of the package's bin with no dist/ beside it: a checkout before its first build.
    const checkout = join(root, 'checkout');
    mkdirSync(join(checkout, 'bin'), { recursive: true });
    copyFileSync(join(ROOT, 'bin/weft.js'), join(checkout, 'bin/weft.js'));
    const result = spawnSync(process.execPath, [join(checkout, 'bin/weft.js'), 'serve'], {
      encoding: 'utf8',
    });
    expect(lines(result.stderr), result.stderr).toHaveLength(1);
    expect(result.stderr).toContain('npm run build');
    expect(result.stdout).toBe('');
    expect(result.status).not.toBe(0);
  });
});

describe('the start banner', () => {
  const url = 'http://127.0.0.1:4000/graphql';

  it('names the console URL and says Redis fan-out is off without REDIS_URL', () => {
    const banner = startupBanner(loadConfig({ DATABASE_URL: 'file:/srv/weft.db' }), url).join('\n');
    // console/dist is built by `npm test`'s pretest, as by `npm start`'s prestart.
    expect(banner).toContain('console at http://127.0.0.1:4000/console/');
    expect(banner).toContain('Redis fan-out off');
  });

  it('says Redis fan-out is on, naming where, without the password', () => {
    const banner = startupBanner(
      loadConfig({ DATABASE_URL: 'file:/srv/weft.db', REDIS_URL: 'redis://:hunter2@cache:6379/0' }),
      url,
    ).join('\n');
    expect(banner).toContain('Redis fan-out on (redis://cache:6379)');
    expect(banner).not.toContain('hunter2');
  });
});
