/** `weft --help` and `weft keys --help`: what they must tell a user. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES } from '../../src/server/config.js';
import { weftIn } from './support.js';

describe('weft --help', () => {
  it('lists every environment variable the server reads', async () => {
    const help = await weftIn(['--help']);
    expect(help.code).toBe(0);
    // Guards the list itself: a config refactor that lost it would pass vacuously.
    expect(ENVIRONMENT_VARIABLES).toContain('WEFT_ENCRYPTION_KEY');
    expect(ENVIRONMENT_VARIABLES.length).toBeGreaterThan(20);
    const missing = ENVIRONMENT_VARIABLES.filter(
      (name) => !new RegExp(`\\b${name}\\b`).test(help.out),
    );
    expect(missing).toEqual([]);
  });

  it('weft keys --help explains open and keyed mode and the way back to open mode', async () => {
    for (const flag of ['--help', 'help', '-h']) {
      const help = await weftIn(['keys', flag]);
      expect(help.code).toBe(0);
      expect(help.out).toContain('runs open');
      expect(help.out).toContain('--tenant default');
      expect(help.out).toContain('Revoked keys keep the server keyed');
      expect(help.out).toContain('weft keys purge');
      expect(help.out).toContain('restart');
    }
  });
});

describe('weft --version', () => {
  it('prints the package version and exits 0, as --version and -v', async () => {
    const manifest = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
    for (const flag of ['--version', '-v']) {
      const shown = await weftIn([flag]);
      expect(shown.err).toBe('');
      expect(shown.out).toBe(`${manifest.version}\n`);
      expect(shown.code).toBe(0);
    }
  });

  it('is listed in weft --help and in docs/cli.md', async () => {
    expect((await weftIn(['--help'])).out).toMatch(/--version, -v\s+print the version/);
    const docs = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    expect(docs).toContain('`weft --version`');
  });
});
