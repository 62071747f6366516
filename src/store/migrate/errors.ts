/**
 * Failures of the database URL parser and the migration runner, keyed by `code` (the message is
 * presentation and says what to do). Thrown: these happen at startup or in `weft migrate`, where
 * the process cannot go on anyway.
 */
export type MigrationErrorCode =
  /** DATABASE_URL is empty, of an unsupported scheme, or malformed. */
  | 'DATABASE_URL_INVALID'
  /** An applied migration's file changed since it was applied. */
  | 'MIGRATION_CHECKSUM_MISMATCH'
  /** The database has applied a migration this build does not ship (a newer Weft migrated it). */
  | 'MIGRATION_UNKNOWN'
  /** The migrations directory is missing or holds a malformed entry. */
  | 'MIGRATIONS_INVALID'
  /** A migration's SQL failed; its transaction was rolled back. */
  | 'MIGRATION_FAILED';

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  readonly code: MigrationErrorCode;
  /** The migration concerned, when there is one. */
  readonly migration: string | undefined;

  constructor(
    code: MigrationErrorCode,
    message: string,
    options: { migration?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.migration = options.migration;
  }
}

export function isMigrationError(error: unknown): error is MigrationError {
  return error instanceof MigrationError;
}

/** Wraps a driver error raised while applying `migration` (other errors pass through). */
export function asMigrationFailure(error: unknown, migration: string | undefined): unknown {
  if (error instanceof MigrationError || migration === undefined) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new MigrationError(
    'MIGRATION_FAILED',
    `migration ${migration} failed and was rolled back (the database is as it was before it): ` +
      reason,
    { migration, cause: error },
  );
}
