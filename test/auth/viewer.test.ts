/**
 * `viewer { scopes }`: each key learns what it may do (the scopes `admin` implies listed), any
 * valid key may ask (no `read` needed), a caller without a valid key is refused, and open mode
 * holds every scope.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthApp, createAuthApp } from './support.js';

describe('viewer (keyed mode)', () => {
  let t: AuthApp;
  beforeAll(async () => {
    t = await createAuthApp();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('answers the scopes of each key, admin expanded', async () => {
    const cases: Array<[string[], string[]]> = [
      [['read'], ['READ']],
      [
        ['read', 'approve'],
        ['READ', 'APPROVE'],
      ],
      [['write'], ['WRITE']],
      [['admin'], ['READ', 'WRITE', 'APPROVE', 'ADMIN']],
    ];
    for (const [granted, expected] of cases) {
      const { key } = await t.key('acme', granted);
      const r = await t.gql(key, '{ viewer { scopes } }');
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect([...r.data.viewer.scopes].sort(), granted.join()).toEqual([...expected].sort());
    }
  });

  it('refuses a caller without a valid key', async () => {
    for (const key of [undefined, 'weft_not_a_key']) {
      const r = await t.gql(key, '{ viewer { scopes } }');
      expect(r.errors?.[0]?.extensions?.code, String(key)).toBe('UNAUTHENTICATED');
      expect(r.data?.viewer ?? null).toBeNull();
    }
  });

  it('gives a key without read nothing else of the Query type', async () => {
    const { key } = await t.key('acme', ['write']);
    const r = await t.gql(key, '{ viewer { scopes } threads(first: 1) { totalCount } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('viewer (open mode)', () => {
  let t: AuthApp;
  beforeAll(async () => {
    t = await createAuthApp({ mode: 'open' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('holds every scope', async () => {
    const r = await t.gql(undefined, '{ viewer { scopes } }');
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect([...r.data.viewer.scopes].sort()).toEqual(['ADMIN', 'APPROVE', 'READ', 'WRITE']);
  });
});
