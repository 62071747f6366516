/**
 * With encryption at rest, an API key's name (the one field of a key a user writes) is sealed
 * like every other user-supplied value: `weft keys create --name` stores no plain text, `weft
 * keys list` shows the name, and a wrong key is refused before anything is read or written.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { weftIn } from '../cli/support.js';

const dir = mkdtempSync(join(tmpdir(), 'weft-key-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MARKER = `name-marker-${randomBytes(6).toString('hex')}`;

describe('weft keys with WEFT_ENCRYPTION_KEY', () => {
  const env = {
    DATABASE_URL: `file:${join(dir, 'weft.db')}`,
    WEFT_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };

  it('stores the name sealed, lists it in the clear, and refuses another key', async () => {
    const created = await weftIn(
      ['keys', 'create', '--tenant', 'acme', '--scopes', 'read', '--name', MARKER],
      env,
    );
    expect(created.code, created.err).toBe(0);
    for (const file of readdirSync(dir)) {
      expect(readFileSync(join(dir, file)).includes(MARKER), file).toBe(false);
    }
    const listed = await weftIn(['keys', 'list'], env);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toContain(MARKER);
    const wrong = await weftIn(['keys', 'list'], {
      ...env,
      WEFT_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/ENCRYPTION_KEY_MISMATCH|encryption key/i);
    expect(wrong.out).not.toContain(MARKER);
  });
});
