/**
 * Gates for tests that need external services. A test run must pass on SQLite alone (a fresh
 * machine may have no Postgres), and say what it skipped; CI sets REQUIRE_POSTGRES=1 so that a
 * missing Postgres fails the run instead of silently skipping.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe } from 'vitest';

/** Where Postgres tests connect (a database they may create other databases from). */
export const POSTGRES_URL =
  process.env.WEFT_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const CONNECT_TIMEOUT_MS = 2000;

export type Availability = { available: true } | { available: false; reason: string };

let postgresCheck: Promise<Availability> | undefined;

/** One real connection attempt (2 s timeout) per test file, cached. */
export function postgresAvailable(): Promise<Availability> {
  postgresCheck ??= (async (): Promise<Availability> => {
    const client = new pg.Client({
      connectionString: POSTGRES_URL,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return { available: true };
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return { available: false, reason: `cannot connect to ${POSTGRES_URL}: ${why}` };
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return postgresCheck;
}

const postgres = await postgresAvailable();
if (!postgres.available) {
  if (process.env.REQUIRE_POSTGRES === '1') {
    throw new Error(`REQUIRE_POSTGRES=1 but Postgres is unavailable: ${postgres.reason}`);
  }
  console.warn(
    `[weft tests] Postgres tests SKIPPED: ${postgres.reason} ` +
      '(set WEFT_TEST_POSTGRES_URL, or REQUIRE_POSTGRES=1 to fail instead)',
  );
}

/**
 * `describe` for Postgres suites: runs when Postgres answers, is reported as skipped (with the
 * reason printed once per file) when it does not, and fails the file under REQUIRE_POSTGRES=1.
 */
export function describeWithPostgres(name: string, body: () => void): void {
  describe.skipIf(!postgres.available)(`${name} [postgres]`, body);
}

/** The URL of another database on the server behind POSTGRES_URL. */
export function postgresUrlFor(database: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database `weft_test_<random>`; `drop()` removes it (even with open sessions). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `weft_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  return {
    name,
    url: postgresUrlFor(name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Where Redis tests connect. */
export const REDIS_URL = process.env.WEFT_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let redisCheck: Promise<Availability> | undefined;

/** One real PING (2 s timeout, no retries) per test file, cached. */
export function redisAvailable(): Promise<Availability> {
  redisCheck ??= (async (): Promise<Availability> => {
    const client = new Redis(REDIS_URL, {
      lazyConnect: true,
      connectTimeout: CONNECT_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return { available: true };
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return { available: false, reason: `cannot connect to ${REDIS_URL}: ${why}` };
    } finally {
      client.disconnect();
    }
  })();
  return redisCheck;
}

const redis = await redisAvailable();
if (!redis.available) {
  if (process.env.REQUIRE_REDIS === '1') {
    throw new Error(`REQUIRE_REDIS=1 but Redis is unavailable: ${redis.reason}`);
  }
  console.warn(
    `[weft tests] Redis tests SKIPPED: ${redis.reason} ` +
      '(set WEFT_TEST_REDIS_URL, or REQUIRE_REDIS=1 to fail instead)',
  );
}

/**
 * `describe` for Redis suites: runs when Redis answers, is reported as skipped (with the reason
 * printed once per file) when it does not, and fails the file under REQUIRE_REDIS=1.
 */
export function describeWithRedis(name: string, body: () => void): void {
  describe.skipIf(!redis.available)(`${name} [redis]`, body);
}

/** `describe` for suites that need both Postgres and Redis (scale-out). */
export function describeWithPostgresAndRedis(name: string, body: () => void): void {
  describe.skipIf(!postgres.available || !redis.available)(`${name} [postgres+redis]`, body);
}
