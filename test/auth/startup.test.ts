/**
 * Open mode and keys at startup, and the `weft keys` command: no keys and a loopback
 * HOST runs open as tenant `default` (and stops being open once a key exists); no keys on another
 * HOST refuses to start, saying how to create one; a created key is printed once, listed without
 * its secret, and revoked.
 */
import { describe, expect, it } from 'vitest';
import { apiKeys, createAuthenticator } from '../../src/server/auth/index.js';
import { createPrisma, type SqlitePrismaClient } from '../../src/store/prisma/index.js';
import { weftIn } from '../cli/support.js';
import { freshDatabase, serverAuthAt } from './support.js';

describe('startup', () => {
  it('no keys + loopback: open as tenant default, until a key exists', async () => {
    const databaseUrl = await freshDatabase();
    const auth = await serverAuthAt({ host: '127.0.0.1', databaseUrl, allowOpen: false });
    if ('refused' in auth) throw new Error(auth.refused);
    expect(auth.banner).toContain('running open, bound to loopback only');
    await auth.authenticator.close();

    const db = createPrisma(databaseUrl);
    const keys = apiKeys(db);
    const authenticator = createAuthenticator({ keys, mode: 'open', openCheckMs: 0 });
    const open = await authenticator.authenticate(undefined);
    expect(open).toMatchObject({ authenticated: true, tenant: 'default', keyId: null });
    expect([...open.scopes].sort()).toEqual(['admin', 'approve', 'read', 'write']);
    const created = await keys.create({ tenant: 'acme', scopes: ['read'] });
    expect(await authenticator.stillValid(open)).toBe(false);
    expect((await authenticator.authenticate(undefined)).authenticated).toBe(false);
    expect(await authenticator.authenticate(`Bearer ${created.key}`)).toMatchObject({
      authenticated: true,
      tenant: 'acme',
      keyId: created.id,
    });
    await db.prisma.$disconnect();

    const withKeys = await serverAuthAt({ host: '0.0.0.0', databaseUrl, allowOpen: false });
    if ('refused' in withKeys) throw new Error(withKeys.refused);
    expect(withKeys.authenticator.mode).toBe('keys');
    expect(withKeys.banner).toContain('API keys required (1 active)');
    expect((await withKeys.authenticator.authenticate(undefined)).authenticated).toBe(false);
    await withKeys.authenticator.close();
  });

  it('no keys + a non-loopback HOST: refuses, saying how to create a key', async () => {
    const databaseUrl = await freshDatabase();
    const auth = await serverAuthAt({ host: '0.0.0.0', databaseUrl, allowOpen: false });
    expect('refused' in auth && auth.refused).toContain(
      'weft keys create --tenant <name> --scopes read,write',
    );
    const allowed = await serverAuthAt({ host: '0.0.0.0', databaseUrl, allowOpen: true });
    if ('refused' in allowed) throw new Error(allowed.refused);
    expect(allowed.banner).toContain('WARNING');
    await allowed.authenticator.close();
  });
});

describe('weft keys', () => {
  it('create prints the key once; list shows no secret; revoke stops it', async () => {
    const DATABASE_URL = await freshDatabase();
    const created = await weftIn(
      ['keys', 'create', '--tenant', 'acme', '--scopes', 'write,read', '--name', 'ci'],
      { DATABASE_URL },
    );
    expect(created.code).toBe(0);
    const key = created.out.trim();
    expect(key).toMatch(/^weft_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const id = key.slice(5, 21);
    expect(created.err).toContain(`created key ${id} for tenant acme with scopes read,write`);

    const listed = await weftIn(['keys', 'list'], { DATABASE_URL });
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`${id}\tacme\tread,write\tactive`);
    expect(listed.out).not.toContain(key.slice(22));

    const db = createPrisma(DATABASE_URL);
    try {
      const stored = await (db.prisma as SqlitePrismaClient).apiKey.findUnique({ where: { id } });
      expect(stored?.tenantId).toBe('acme');
      expect(JSON.stringify(stored)).not.toContain(key.slice(22));
      const authenticator = createAuthenticator({ keys: apiKeys(db), mode: 'keys' });
      expect((await authenticator.authenticate(`Bearer ${key}`)).tenant).toBe('acme');
      expect((await weftIn(['keys', 'revoke', id], { DATABASE_URL })).code).toBe(0);
      expect((await authenticator.authenticate(`Bearer ${key}`)).authenticated).toBe(false);
    } finally {
      await db.prisma.$disconnect();
    }
    expect((await weftIn(['keys', 'list', '--tenant', 'acme'], { DATABASE_URL })).out).toMatch(
      new RegExp(`${id}\\tacme\\tread,write\\trevoked `),
    );
    expect((await weftIn(['keys', 'revoke', 'nope'], { DATABASE_URL })).code).toBe(1);
    const bad = await weftIn(['keys', 'create', '--tenant', 'acme', '--scopes', 'root'], {
      DATABASE_URL,
    });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("unknown scope 'root'");
    expect((await weftIn(['keys', 'create', '--scopes', 'read'], { DATABASE_URL })).code).toBe(2);
  });
});
