import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openEngine } from '../../src/engine/index.js';
import { weftIn } from './support.js';

const ROOT = join(import.meta.dirname, '../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const MAIN = join(ROOT, 'src/cli/main.ts');
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'weft-cli-'));
  dirs.push(dir);
  return dir;
}

function weft(args: string[], env: Record<string, string> = {}, cwd = ROOT) {
  const result = spawnSync(TSX, [MAIN, ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** A database with one thread holding nodes, memory, a run and usage; returns its URL. */
async function sampleDatabase(dir: string): Promise<string> {
  const url = `file:${join(dir, 'source.db')}`;
  const engine = await openEngine(url);
  const ok = <T>(r: { ok: true; value: T } | { ok: false; error: unknown }): T => {
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    return r.value;
  };
  ok(await engine.createThread({ threadId: 't1', metadata: { name: 'démo ✓' } }));
  ok(
    await engine.appendNodes({
      threadId: 't1',
      nodes: [
        { kind: 'system', payload: { text: 'be nice', x: 1 } },
        { kind: 'tool_result', payload: { html: '<i>rain</i>' }, taint: { source: 'mcp_tool' } },
      ],
    }),
  );
  const run = ok(await engine.startRun({ threadId: 't1', goal: 'plan' }));
  ok(await engine.remember({ threadId: 't1', type: 'memory', key: 'city', content: 'Oslo' }));
  ok(
    await engine.recordUsage({
      runId: run.runId,
      model: 'gpt-4o',
      inputTokens: 5,
      outputTokens: 2,
    }),
  );
  await engine.close();
  return url;
}

// Each command is a fresh tsx process (seconds each on a loaded machine): generous timeouts.
describe('weft CLI', { timeout: 400_000 }, () => {
  it('migrate creates and migrates the default SQLite database under ./data, then is a no-op', () => {
    const dir = tempDir();
    const env = { DATABASE_URL: '' };
    const first = weft(['migrate'], env, dir);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.out).toContain('applied migration 0001_init');
    expect(existsSync(join(dir, 'data/weft.db'))).toBe(true);
    const second = weft(['migrate'], env, dir);
    expect(second.code).toBe(0);
    expect(second.out).toContain('0 applied now');
  });

  it('refuses an unsupported DATABASE_URL or a bad PORT as a configuration error (exit 2)', async () => {
    const url = await weftIn(['migrate'], { DATABASE_URL: 'mysql://localhost/weft' });
    expect(url.code).toBe(2);
    expect(url.err).toContain('unsupported scheme');
    expect(url.err).toContain('postgres://');
    const port = await weftIn(['serve'], { PORT: 'eighty' });
    expect(port.code).toBe(2);
    expect(port.err).toContain('PORT must be an integer from 0 to 65535 (got "eighty")');
  });

  it('exits 2 on an unknown command, option or keys action', async () => {
    expect((await weftIn(['frobnicate'])).code).toBe(2);
    const option = await weftIn(['verify', 't1', '--frob']);
    expect(option.code).toBe(2);
    expect(option.err).toContain('unknown option --frob');
    expect((await weftIn(['keys', 'frob'])).code).toBe(2);
  });

  it('export → import round-trips a thread byte for byte; import refuses a taken id', async () => {
    const dir = tempDir();
    const source = await sampleDatabase(dir);
    const target = `file:${join(dir, 'target.db')}`;
    const a = join(dir, 'a.jsonl');
    const b = join(dir, 'b.jsonl');
    const exported = await weftIn(['export', 't1', '--out', a], { DATABASE_URL: source });
    expect(exported.err).toContain('wrote 5 entries');
    expect(exported.code).toBe(0);
    const imported = await weftIn(['import', a], { DATABASE_URL: target });
    expect(imported.err).toBe('');
    expect(imported.out).toContain('thread t1 created with 5 entries');
    expect((await weftIn(['export', 't1', '--out', b], { DATABASE_URL: target })).code).toBe(0);
    expect(readFileSync(b)).toEqual(readFileSync(a));
    const stdout = await weftIn(['export', 't1'], { DATABASE_URL: target });
    expect(stdout.out).toBe(readFileSync(a, 'utf8'));
    expect((await weftIn(['verify', 't1'], { DATABASE_URL: target })).code).toBe(0);
    const again = await weftIn(['import', a], { DATABASE_URL: target });
    expect(again.code).toBe(1);
    expect(again.err).toContain('thread t1 already exists');
    const renamed = await weftIn(['import', a, '--thread-id', 't1-copy'], { DATABASE_URL: target });
    expect(renamed.code).toBe(0);
    const prefix = await weftIn(['export', 't1', '--at', '2'], { DATABASE_URL: source });
    expect(prefix.out.trim().split('\n')).toHaveLength(3);
  });

  it('import refuses a tampered or truncated file and writes nothing', async () => {
    const dir = tempDir();
    const source = await sampleDatabase(dir);
    const file = join(dir, 'a.jsonl');
    await weftIn(['export', 't1', '--out', file], { DATABASE_URL: source });
    const text = readFileSync(file, 'utf8');
    const tampered = join(dir, 'tampered.jsonl');
    await import('node:fs').then((fs) =>
      fs.writeFileSync(tampered, text.replace('be nice', 'be evil')),
    );
    const target = `file:${join(dir, 'target.db')}`;
    const refused = await weftIn(['import', tampered], { DATABASE_URL: target });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('refused, nothing written');
    const truncated = join(dir, 'truncated.jsonl');
    await import('node:fs').then((fs) =>
      fs.writeFileSync(truncated, text.split('\n').slice(0, 3).join('\n')),
    );
    const short = await weftIn(['import', truncated], { DATABASE_URL: target });
    expect(short.code).toBe(1);
    expect(short.err).toContain('truncated');
    expect((await weftIn(['verify'], { DATABASE_URL: target })).out).toContain('no threads');
  });

  it('verify --strict exits 1 on a tampered database and names the entry; replay agrees', async () => {
    const dir = tempDir();
    const url = await sampleDatabase(dir);
    expect((await weftIn(['verify', 't1', '--strict'], { DATABASE_URL: url })).code).toBe(0);
    const replay = await weftIn(['replay'], { DATABASE_URL: url });
    expect(replay.code).toBe(0);
    expect(replay.out).toContain('thread t1: 5 entries');
    const db = new Database(join(dir, 'source.db'));
    const row = db.prepare('SELECT entry_id FROM log_entry WHERE log_index = 1').get() as {
      entry_id: string;
    };
    db.prepare(
      "UPDATE log_entry SET entry = replace(entry, 'be nice', 'be evil') WHERE log_index = 1",
    ).run();
    db.close();
    const verify = await weftIn(['verify', 't1', '--strict'], { DATABASE_URL: url });
    expect(verify.code).toBe(1);
    expect(verify.err).toContain('TAMPERED at entry 1');
    expect(verify.err).toContain(row.entry_id);
    expect((await weftIn(['replay', 't1'], { DATABASE_URL: url })).code).toBe(1);
  });

  it('serve migrates ./data, prints the URL, answers, and stops cleanly on SIGTERM', async () => {
    const dir = tempDir();
    // Node itself (tsx as a loader), so SIGTERM reaches the server directly: the tsx CLI relays
    // signals with a 30 ms handshake and SIGKILLs a child that misses it on a loaded machine.
    const child = spawn(
      process.execPath,
      [
        '--import',
        pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href,
        MAIN,
        'serve',
      ],
      {
        cwd: dir,
        env: { ...process.env, DATABASE_URL: '', PORT: '0', HOST: '127.0.0.1' },
      },
    );
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr.on('data', (chunk) => {
      out += chunk;
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
      child.stdout.on('data', () => {
        const m = /serving (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
      expect(existsSync(join(dir, 'data/weft.db'))).toBe(true);
      expect(out).toContain('running open, bound to loopback only');
      // The banner names the console's URL and says subscriptions stay in this process.
      expect(out).toContain(`console at ${new URL(url).origin}/console/`);
      expect(out).toContain('Redis fan-out off');
    } finally {
      child.kill('SIGTERM');
    }
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toContain('weft: stopped');
  });

  it('serve refuses a non-loopback HOST without keys, saying what to do (exit 2)', async () => {
    const refused = await weftIn(['serve'], {
      HOST: '0.0.0.0',
      DATABASE_URL: `file:${join(tempDir(), 'never.db')}`,
    });
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('HOST=0.0.0.0 is not a loopback address');
    expect(refused.err).toContain('WEFT_ALLOW_OPEN');
  });
});
