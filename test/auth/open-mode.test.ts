/**
 * The move from open mode to keyed mode and back, as a user meets it: the first key says that the
 * database is keyed now and that open-mode data belongs to tenant `default`; a running open
 * server logs that it became keyed; revoking every key keeps the server keyed; `weft keys purge`
 * (refused while a key is active) followed by a restart is the way back to open mode.
 */
import { describe, expect, it } from 'vitest';
import { openEngine } from '../../src/engine/index.js';
import { apiKeys, createAuthenticator } from '../../src/server/auth/index.js';
import { KEYED_NOW } from '../../src/server/auth/startup.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { weftIn } from '../cli/support.js';
import { postJson, spawnServe } from '../integration/support.js';
import { freshDatabase, serverAuthAt } from './support.js';

/** A read that needs a caller (`__typename` alone is answered for anyone). */
const QUERY = '{ thread(id: "t") { id } }';

const keyIdOf = (key: string) => key.slice(5, 21);

async function openAt(databaseUrl: string) {
  const auth = await serverAuthAt({ host: '127.0.0.1', databaseUrl, allowOpen: false });
  if ('refused' in auth) throw new Error(auth.refused);
  return auth;
}

describe('weft keys create: the first key', () => {
  it('says the database is keyed now, that existing threads are tenant default, and how to keep them', async () => {
    const DATABASE_URL = await freshDatabase();
    const engine = await openEngine(DATABASE_URL);
    expect((await engine.createThread({ threadId: 'written-open' })).ok).toBe(true);
    await engine.close();

    const first = await weftIn(['keys', 'create', '--tenant', 'acme', '--scopes', 'read'], {
      DATABASE_URL,
    });
    expect(first.code).toBe(0);
    expect(first.err).toContain('this is the first API key, so this database is now KEYED');
    expect(first.err).toContain('The 1 thread(s) already here');
    expect(first.err).toContain('belong to tenant "default"');
    expect(first.err).toContain('This key (tenant acme) does not see them');
    expect(first.err).toContain('create a key with --tenant default');
    expect(first.err).toContain('weft keys --help');

    const second = await weftIn(['keys', 'create', '--tenant', 'default', '--scopes', 'read'], {
      DATABASE_URL,
    });
    expect(second.code).toBe(0);
    expect(second.err).not.toContain('first API key');
  });

  it('for tenant default, says that this key sees the open-mode data', async () => {
    const DATABASE_URL = await freshDatabase();
    const created = await weftIn(['keys', 'create', '--tenant', 'default', '--scopes', 'read'], {
      DATABASE_URL,
    });
    expect(created.err).toContain('now KEYED');
    expect(created.err).toContain('This key is for tenant "default", so it sees them');
  });
});

describe('going back to open mode', () => {
  it('revoking every key keeps the server keyed; purge, then a start, runs open again', async () => {
    const DATABASE_URL = await freshDatabase();
    const created = await weftIn(['keys', 'create', '--tenant', 'acme', '--scopes', 'read'], {
      DATABASE_URL,
    });
    const id = keyIdOf(created.out.trim());

    const refused = await weftIn(['keys', 'purge'], { DATABASE_URL });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('still active, so nothing was purged');

    expect((await weftIn(['keys', 'revoke', id], { DATABASE_URL })).code).toBe(0);
    const revokedOnly = await openAt(DATABASE_URL);
    expect(revokedOnly.authenticator.mode).toBe('keys');
    expect(revokedOnly.banner).toContain('all 1 are revoked: every request is refused');
    expect((await revokedOnly.authenticator.authenticate(undefined)).authenticated).toBe(false);
    await revokedOnly.authenticator.close();
    // Also on a public HOST: a keyed server with only revoked keys is closed, not open.
    const publicHost = await serverAuthAt({
      host: '0.0.0.0',
      databaseUrl: DATABASE_URL,
      allowOpen: false,
    });
    expect('authenticator' in publicHost && publicHost.authenticator.mode).toBe('keys');
    if ('authenticator' in publicHost) await publicHost.authenticator.close();

    const purged = await weftIn(['keys', 'purge'], { DATABASE_URL });
    expect(purged.code).toBe(0);
    expect(purged.out).toContain('deleted 1 revoked key(s)');
    expect(purged.out).toContain('runs open');
    expect((await weftIn(['keys', 'list'], { DATABASE_URL })).out).not.toContain(id);

    const open = await openAt(DATABASE_URL);
    expect(open.authenticator.mode).toBe('open');
    expect((await open.authenticator.authenticate(undefined)).tenant).toBe('default');
    await open.authenticator.close();
  });

  it('a running open server that saw a key stays keyed after it is revoked, and says so once', async () => {
    const databaseUrl = await freshDatabase();
    const db = createPrisma(databaseUrl);
    const keys = apiKeys(db);
    let announced = 0;
    const authenticator = createAuthenticator({
      keys,
      mode: 'open',
      openCheckMs: 0,
      onKeyed: () => announced++,
    });
    try {
      expect((await authenticator.authenticate(undefined)).tenant).toBe('default');
      const created = await keys.create({ tenant: 'acme', scopes: ['read'] });
      expect((await authenticator.authenticate(undefined)).authenticated).toBe(false);
      await keys.revoke(created.id);
      expect((await authenticator.authenticate(undefined)).authenticated).toBe(false);
      expect(authenticator.mode).toBe('keys');
      expect(announced).toBe(1);
    } finally {
      await db.prisma.$disconnect();
    }
  });
});

describe('a running weft serve', { timeout: 120_000 }, () => {
  it('logs that open mode ended once the first key is created', async () => {
    const DATABASE_URL = await freshDatabase();
    const server = await spawnServe({ DATABASE_URL, WEFT_REQUEST_LOG: 'false' });
    try {
      const before = await postJson(server.url, { query: QUERY });
      expect(before).toMatchObject({ ok: true, status: 200, body: { data: { thread: null } } });
      const created = await weftIn(['keys', 'create', '--tenant', 'acme', '--scopes', 'read'], {
        DATABASE_URL,
      });
      expect(created.code).toBe(0);
      // The server re-reads "no keys exist" at most once a second: ask until it has.
      for (;;) {
        const after = await postJson(server.url, { query: QUERY });
        if (after.ok && JSON.stringify(after.body).includes('UNAUTHENTICATED')) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      await server.waitForLine((line) => line === KEYED_NOW);
    } finally {
      server.process.kill('SIGTERM');
      await server.exited;
    }
  });
});
