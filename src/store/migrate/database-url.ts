import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MigrationError } from './errors.js';

export type DatabaseTarget =
  /** `path` is absolute (relative `file:` URLs are resolved against the cwd at parse time). */
  { provider: 'sqlite'; path: string } | { provider: 'postgres'; url: string };

const ACCEPTED =
  'use file:./relative/path.db (relative to the working directory), file:/absolute/path.db, ' +
  'or postgres://user@host:port/database (postgresql:// also works)';

function invalid(url: string, why: string): MigrationError {
  return new MigrationError(
    'DATABASE_URL_INVALID',
    `DATABASE_URL ${JSON.stringify(url)} ${why}: ${ACCEPTED}`,
  );
}

/**
 * Reads a DATABASE_URL. Pure apart from resolving a relative SQLite path against `cwd`.
 * Throws MigrationError(DATABASE_URL_INVALID) with the accepted forms for anything else.
 */
export function parseDatabaseUrl(url: string, cwd: string = process.cwd()): DatabaseTarget {
  const trimmed = url.trim();
  if (trimmed === '') throw invalid(url, 'is empty');
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return parsePostgres(trimmed);
  if (/^file:/i.test(trimmed)) return { provider: 'sqlite', path: parseSqlitePath(trimmed, cwd) };
  throw invalid(url, 'has an unsupported scheme');
}

function parsePostgres(url: string): DatabaseTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(url, 'is not a valid URL');
  }
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) {
    throw invalid(url, 'names no host');
  }
  if (parsed.searchParams.has('schema')) {
    // Prisma's `?schema=` is not honoured by our runner or by pg; refusing beats writing to public.
    throw invalid(url, 'uses ?schema=, which Weft does not support (use a separate database)');
  }
  return { provider: 'postgres', url };
}

function parseSqlitePath(url: string, cwd: string): string {
  let rest: string;
  if (/^file:\/\//i.test(url)) {
    try {
      rest = fileURLToPath(url);
    } catch {
      throw invalid(url, 'is not a valid file URL');
    }
  } else {
    rest = decodeURIComponent(url.slice('file:'.length));
  }
  if (rest.includes('?')) throw invalid(url, 'has query parameters, which SQLite URLs do not take');
  if (rest === '' || rest.endsWith('/')) throw invalid(url, 'names no file');
  if (rest === ':memory:' || rest.startsWith(':memory:')) {
    throw invalid(url, 'is in-memory; every connection would see a different empty database');
  }
  return isAbsolute(rest) ? resolve(rest) : resolve(cwd, rest);
}

/**
 * What every Postgres connection Weft opens calls itself (`application_name`): a client's pool,
 * its read pool and the migrations', so that an operator finds them in pg_stat_activity.
 */
export const POSTGRES_APPLICATION_NAME = 'weft';
