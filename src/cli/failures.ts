/**
 * Failures that come from the configuration or the environment rather than from Weft: an
 * unreachable or missing database, a login Postgres refuses, a missing or wrong encryption key,
 * a Redis that REDIS_URL names but that cannot be reached or refuses the login.
 * Each becomes one line saying what to do (exit 2), never a stack trace.
 */

const UNREACHABLE: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
]);

interface Detail {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  address?: unknown;
  hostname?: unknown;
  port?: unknown;
  syscall?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error and what it wraps (`cause`, the attempts of an AggregateError), outermost first. */
function* chain(error: unknown, depth = 0): Generator<Detail> {
  if (typeof error !== 'object' || error === null || depth > 8) return;
  const e = error as Detail;
  yield e;
  if (Array.isArray(e.errors)) for (const inner of e.errors) yield* chain(inner, depth + 1);
  if (e.cause !== undefined) yield* chain(e.cause, depth + 1);
}

const text = (value: unknown) => (typeof value === 'string' ? value : String(value ?? ''));

/** One line saying what is wrong and what to do, or undefined for any other error. */
export function configurationFailure(error: unknown): string | undefined {
  for (const e of chain(error)) {
    const code = text(e.code);
    // src/events/redis.ts: REDIS_URL names a Redis that cannot be subscribed to (unreachable, or
    // refusing the login); the message says what to do, with the password masked.
    if (code === 'REDIS_UNAVAILABLE') return text(e.message);
    if (e.name === 'EncryptionError' && code.startsWith('ENCRYPTION_KEY_')) {
      return `${text(e.message)} (${code})`;
    }
    // Postgres: 3D000 invalid_catalog_name; Prisma's P1003 is the same.
    if (code === '3D000' || code === 'P1003') {
      return `${text(e.message)}: create that database (e.g. createdb <name>) or point DATABASE_URL at an existing one`;
    }
    // 28P01 invalid_password, 28000 invalid_authorization_specification; Prisma's P1000.
    if (code === '28P01' || code === '28000' || code === 'P1000') {
      return `Postgres refused the login (${text(e.message)}): fix the user or password in DATABASE_URL`;
    }
    if (UNREACHABLE.has(code) || code === 'P1001') {
      const host = text(e.address ?? e.hostname);
      const where =
        host === '' ? 'the database server' : `${host}${e.port ? `:${text(e.port)}` : ''}`;
      return `cannot reach the database at ${where} (${code}): start Postgres there, or fix the host and port in DATABASE_URL`;
    }
    const fileSystem = ['ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'EISDIR'].includes(code);
    if (code === 'SQLITE_CANTOPEN' || (fileSystem && e.syscall !== 'listen')) {
      return `cannot open the SQLite database (${text(e.message)}): fix the path in DATABASE_URL or the directory's permissions`;
    }
  }
  return undefined;
}

/**
 * The exit code of a migration error: 2 for a database another Weft migrated (a configuration
 * refusal: run that version or point DATABASE_URL elsewhere), 1 for a migration that failed.
 */
export const migrationExitCode = (error: { code: string }): 1 | 2 =>
  error.code === 'MIGRATION_UNKNOWN' ? 2 : 1;
