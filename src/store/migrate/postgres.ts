import pg from 'pg';
import { migrationLedger } from '../tables/index.js';
import { POSTGRES_APPLICATION_NAME } from './database-url.js';
import { asMigrationFailure } from './errors.js';
import { type AppliedMigration, type Migration, pendingMigrations } from './migration-files.js';

/** pg_advisory_xact_lock(int4, int4) key: 'weft' in ASCII, then 1 (the migrations lock). */
const LOCK_KEY: readonly [number, number] = [0x77656674, 1];

const M = migrationLedger.c;

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${migrationLedger.sql} (
  ${M.name} TEXT NOT NULL PRIMARY KEY,
  ${M.checksum} TEXT NOT NULL,
  ${M.appliedAt} TIMESTAMPTZ NOT NULL DEFAULT now()
)`;

/**
 * Applies pending migrations to a Postgres database, one transaction each. Every transaction
 * first takes a transaction-scoped advisory lock, so concurrent migrators (several instances
 * starting at once) queue; each then re-reads the applied list, so none applies twice and all
 * succeed. The table is created under the lock too: concurrent `CREATE TABLE IF NOT EXISTS` can
 * otherwise fail on a catalog unique index.
 */
export async function migratePostgres(
  url: string,
  migrations: readonly Migration[],
  log: (message: string) => void,
): Promise<string[]> {
  const client = new pg.Client({
    connectionString: url,
    application_name: POSTGRES_APPLICATION_NAME,
  });
  await client.connect();
  const applied: string[] = [];
  try {
    for (;;) {
      await client.query('BEGIN');
      let next: Migration | undefined;
      try {
        await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...LOCK_KEY]);
        await client.query(CREATE_TABLE);
        const { rows } = await client.query<AppliedMigration>(
          `SELECT ${M.name}, ${M.checksum} FROM ${migrationLedger.sql} ORDER BY ${M.name}`,
        );
        next = pendingMigrations(migrations, rows)[0];
        if (next === undefined) {
          await client.query('COMMIT');
          return applied;
        }
        // No parameters: pg uses the simple protocol, which runs a multi-statement script.
        await client.query(next.sql);
        await client.query(
          `INSERT INTO ${migrationLedger.sql} (${M.name}, ${M.checksum}) VALUES ($1, $2)`,
          [next.name, next.checksum],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw asMigrationFailure(error, next?.name);
      }
      applied.push(next.name);
      log(`applied migration ${next.name}`);
    }
  } finally {
    await client.end();
  }
}
