import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');

function weft(args: string[], env: Record<string, string> = {}, cwd = ROOT) {
  const result = spawnSync(TSX, [join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe('weft CLI', () => {
  it('migrate creates and migrates the default SQLite database under ./data, then is a no-op', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-cli-'));
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

  it('migrate refuses an unsupported DATABASE_URL with a message naming the accepted forms', () => {
    const result = weft(['migrate'], { DATABASE_URL: 'mysql://localhost/weft' });
    expect(result.code).toBe(1);
    expect(result.err).toContain('unsupported scheme');
    expect(result.err).toContain('postgres://');
  });

  it('exits 2 on an unknown command and 1 on a command that is not built yet', () => {
    expect(weft(['frobnicate']).code).toBe(2);
    const serve = weft(['serve']);
    expect(serve.code).toBe(1);
    expect(serve.err).toContain('not built yet');
  });
});
