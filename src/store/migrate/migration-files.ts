import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrationLedger } from '../tables/index.js';
import { MigrationError } from './errors.js';

export type Provider = 'sqlite' | 'postgres';

/** Where the runner records applied migrations (same shape on both providers). */
export const MIGRATIONS_TABLE = migrationLedger.name;

export interface Migration {
  /** Directory name, `NNNN_snake_name`; migrations apply in name order. */
  name: string;
  sql: string;
  /** SHA-256 (hex) of the SQL with line endings normalised to `\n` (a CRLF checkout is no change). */
  checksum: string;
}

/** `NNNN_name`: four digits, then lower-case snake case. */
export const MIGRATION_NAME = /^\d{4}_[a-z0-9]+(?:_[a-z0-9]+)*$/;

/**
 * `prisma/` at the package root. This file sits three levels below it both as source
 * (src/store/migrate) and when built (dist/store/migrate).
 */
export const PRISMA_DIR = fileURLToPath(new URL('../../../prisma/', import.meta.url));

export function migrationsDir(provider: Provider, prismaDir: string = PRISMA_DIR): string {
  return join(prismaDir, provider, 'migrations');
}

export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql.replace(/\r\n/g, '\n'), 'utf8').digest('hex');
}

/** Reads `<dir>/NNNN_name/migration.sql` in name order. Throws MIGRATIONS_INVALID on a bad entry. */
export function loadMigrations(dir: string): Migration[] {
  if (!existsSync(dir)) {
    throw new MigrationError('MIGRATIONS_INVALID', `migrations directory ${dir} does not exist`);
  }
  const names = readdirSync(dir)
    .filter((name) => statSync(join(dir, name)).isDirectory())
    .sort();
  return names.map((name) => {
    if (!MIGRATION_NAME.test(name)) {
      throw new MigrationError(
        'MIGRATIONS_INVALID',
        `${join(dir, name)} is not a migration directory name (expected NNNN_snake_case); ` +
          'remove it or create migrations with `npm run prisma:migration -- <name>`',
        { migration: name },
      );
    }
    const file = join(dir, name, 'migration.sql');
    if (!existsSync(file)) {
      throw new MigrationError('MIGRATIONS_INVALID', `${file} is missing`, { migration: name });
    }
    const sql = readFileSync(file, 'utf8');
    return { name, sql, checksum: checksumOf(sql) };
  });
}

export interface AppliedMigration {
  name: string;
  checksum: string;
}

/**
 * Compares what the database has applied with what this build ships and returns the pending
 * migrations, in order. Throws MIGRATION_CHECKSUM_MISMATCH or MIGRATION_UNKNOWN.
 */
export function pendingMigrations(
  migrations: readonly Migration[],
  applied: readonly AppliedMigration[],
): Migration[] {
  const known = new Map(migrations.map((m) => [m.name, m]));
  for (const row of applied) {
    const migration = known.get(row.name);
    if (migration === undefined) {
      throw new MigrationError(
        'MIGRATION_UNKNOWN',
        `the database has applied migration ${row.name}, which this build of Weft does not ship: ` +
          'it was migrated by a newer (or different) Weft; run that version, or restore a backup',
        { migration: row.name },
      );
    }
    if (migration.checksum !== row.checksum) {
      throw new MigrationError(
        'MIGRATION_CHECKSUM_MISMATCH',
        `migration ${row.name} was changed after it was applied (database checksum ` +
          `${row.checksum}, file ${migration.checksum}); never edit an applied migration: restore ` +
          'the original file and put the change in a new migration',
        { migration: row.name },
      );
    }
  }
  const done = new Set(applied.map((row) => row.name));
  return migrations.filter((m) => !done.has(m.name));
}
