/**
 * Retention in `weft serve`: WEFT_RETENTION_DAYS, WEFT_RETENTION_SWEEP_MS and
 * WEFT_RETENTION_BATCH parsed (bad values refused with their names), the default applied to new
 * threads, and the sweeper's counters on /metrics moving as it deletes expired threads.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';
import { startServer } from '../../src/server/serve.js';
import { freshSqliteUrl } from '../api/support.js';
import { postJson as post } from '../integration/support.js';

const quiet = () => undefined;

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('WEFT_RETENTION_*', () => {
  it('off by default; a number of days, a sweep interval (0: off) and a batch size', () => {
    expect(loadConfig({}).retention).toEqual({ days: undefined, sweepMs: 60_000, batch: 100 });
    expect(
      loadConfig({
        WEFT_RETENTION_DAYS: '30',
        WEFT_RETENTION_SWEEP_MS: '0',
        WEFT_RETENTION_BATCH: '500',
      }).retention,
    ).toEqual({ days: 30, sweepMs: 0, batch: 500 });
    expect(loadConfig({ WEFT_RETENTION_DAYS: '0.5' }).retention.days).toBe(0.5);
    for (const bad of ['0', '-1', 'forever', '30d']) {
      expect(problems({ WEFT_RETENTION_DAYS: bad })).toEqual([
        `WEFT_RETENTION_DAYS must be a number of days above 0 (got "${bad}")`,
      ]);
    }
    expect(problems({ WEFT_RETENTION_BATCH: '0' })).toHaveLength(1);
    expect(problems({ WEFT_RETENTION_SWEEP_MS: '-5' })).toHaveLength(1);
  });
});

describe('/metrics: retention', () => {
  it('counts the sweeps and the expired threads the sweeper deleted', async () => {
    const config = {
      ...loadConfig({
        DATABASE_URL: await freshSqliteUrl(),
        PORT: '0',
        WEFT_RETENTION_DAYS: '30',
        WEFT_RETENTION_SWEEP_MS: '50',
      }),
      requestLog: false,
    };
    const app = await startServer(config, quiet);
    const url = app.url!;
    const scrape = async () => {
      const text = await (await fetch(url.replace('/graphql', '/metrics'))).text();
      const value = (name: string) => {
        const line = text.split('\n').find((l) => l.startsWith(`${name} `));
        expect(line, `${name} is exposed`).toBeDefined();
        return Number(line!.split(' ').at(-1));
      };
      return {
        text,
        deleted: value('weft_retention_threads_deleted_total'),
        skipped: value('weft_retention_threads_skipped_total'),
        sweeps: value('weft_retention_sweeps_total'),
        errors: value('weft_retention_sweep_errors_total'),
      };
    };
    try {
      const before = await scrape();
      expect(before).toMatchObject({ deleted: 0, errors: 0 });
      expect(before.text).toMatch(/# TYPE weft_retention_threads_deleted_total counter/);
      const created = await post(url, {
        query: `mutation { a: createThread(input: { threadId: "old", expiresAt: "2001-01-01T00:00:00Z" }) { __typename }
          b: createThread(input: { threadId: "new" }) { __typename ... on CreateThreadSuccess { thread { createdAt expiresAt } } } }`,
      });
      if (!created.ok) throw new Error(created.error);
      const body = created.body as {
        data: { b: { thread: { createdAt: string; expiresAt: string } } };
      };
      const thread = body.data.b.thread;
      // WEFT_RETENTION_DAYS applies to the new thread.
      expect(Date.parse(thread.expiresAt) - Date.parse(thread.createdAt)).toBe(30 * 86_400_000);
      await expect.poll(async () => (await scrape()).deleted, { timeout: 10_000 }).toBe(1);
      const after = await scrape();
      expect(after.sweeps).toBeGreaterThan(before.sweeps);
      expect(after.errors).toBe(0);
      const gone = await post(url, {
        query: '{ old: thread(id: "old") { id } new: thread(id: "new") { id } }',
      });
      if (!gone.ok) throw new Error(gone.error);
      const read = gone.body as { data: { new: { id: string } }; errors: unknown[] };
      expect(read.data.new).toEqual({ id: 'new' });
      expect(read.errors).toHaveLength(1);
    } finally {
      await app.close();
    }
  });
});
