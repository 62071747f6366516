/** Fresh, throw-away databases for each measured run: a temp SQLite file or a new Postgres database. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Where the bench may create (and drop) its Postgres databases. */
export const ADMIN_POSTGRES_URL =
  process.env.WEFT_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface Scratch {
  /** SQLite: a file path; Postgres: a connection string. */
  location: string;
  drop(): Promise<void>;
}

/** Why Postgres cannot be used, or undefined when it answers (one attempt, 2 s timeout). */
export async function postgresUnavailable(): Promise<string | undefined> {
  const client = new pg.Client({
    connectionString: ADMIN_POSTGRES_URL,
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `cannot connect to ${ADMIN_POSTGRES_URL}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function scratchSqlite(name: string): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'weft-peers-'));
  return {
    location: join(dir, `${name}.db`),
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function scratchPostgres(): Promise<Scratch> {
  const name = `weft_peers_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(ADMIN_POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    location: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}
