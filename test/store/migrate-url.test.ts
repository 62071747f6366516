import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MigrationError, parseDatabaseUrl } from '../../src/store/migrate/index.js';

describe('parseDatabaseUrl', () => {
  const cwd = '/srv/weft';

  it.each([
    ['file:./data/weft.db', join(cwd, 'data/weft.db')],
    ['file:data/weft.db', join(cwd, 'data/weft.db')],
    ['file:/var/lib/weft/weft.db', '/var/lib/weft/weft.db'],
    ['file:///var/lib/weft/weft.db', '/var/lib/weft/weft.db'],
    ['file:./my%20data/weft.db', join(cwd, 'my data/weft.db')],
    ['  file:./data/weft.db  ', join(cwd, 'data/weft.db')],
  ])('%s is SQLite at an absolute path', (url, path) => {
    expect(parseDatabaseUrl(url, cwd)).toEqual({ provider: 'sqlite', path });
  });

  it.each([
    'postgres://postgres@127.0.0.1:5432/test',
    'postgresql://user:secret@db.internal/weft?sslmode=require',
    'POSTGRES://postgres@localhost/test',
  ])('%s is Postgres, passed through unchanged', (url) => {
    expect(parseDatabaseUrl(url, cwd)).toEqual({ provider: 'postgres', url });
  });

  it.each([
    ['', /is empty/],
    ['   ', /is empty/],
    ['mysql://root@localhost/weft', /unsupported scheme/],
    ['./data/weft.db', /unsupported scheme/],
    ['sqlite:./weft.db', /unsupported scheme/],
    ['file:', /names no file/],
    ['file:./data/', /names no file/],
    ['file::memory:', /in-memory/],
    ['file:./weft.db?mode=ro', /query parameters/],
    ['postgres://', /not a valid URL|names no host/],
    ['postgres://postgres@localhost/test?schema=weft', /\?schema=/],
  ])('rejects %j with DATABASE_URL_INVALID and the accepted forms', (url, why) => {
    let error: unknown;
    try {
      parseDatabaseUrl(url, cwd);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MigrationError);
    expect(error).toMatchObject({ code: 'DATABASE_URL_INVALID' });
    expect((error as Error).message).toMatch(why);
    expect((error as Error).message).toMatch(/file:\.\/relative\/path\.db/);
  });
});
