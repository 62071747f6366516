/**
 * WEFT_CACHE_BYTES: parsed (a bad value refused with its name), passed to the engine, and the
 * thread cache's series on /metrics (estimated bytes under the bound, threads held, hits,
 * misses, evictions) after writes through a real server on a SQLite file.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';
import { startServer } from '../../src/server/serve.js';
import { freshSqliteUrl } from '../api/support.js';
import { postJson as post } from '../integration/support.js';

const quiet = () => undefined;

const createThread = (threadId: string) => ({
  query: `mutation { createThread(input: { threadId: "${threadId}" }) { __typename } }`,
});

const append = (threadId: string, text: string) => ({
  query:
    'mutation Append($i: AppendNodesInput!) { appendNodes(input: $i) { __typename ... on AppendNodesSuccess { logIndex } } }',
  variables: { i: { threadId, nodes: [{ kind: 'SYSTEM', payload: { text } }] } },
});

/** Every problem loadConfig reports for `env` (none: []). */
function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('WEFT_CACHE_BYTES', () => {
  it('defaults to 256 MiB and takes a positive integer of bytes', () => {
    expect(loadConfig({}).cacheBytes).toBe(268_435_456);
    expect(loadConfig({ WEFT_CACHE_BYTES: '' }).cacheBytes).toBe(268_435_456);
    expect(loadConfig({ WEFT_CACHE_BYTES: '1048576' }).cacheBytes).toBe(1_048_576);
    expect(loadConfig({ WEFT_CACHE_BYTES: '1' }).cacheBytes).toBe(1);
  });

  it('refuses anything but a positive integer, naming the variable and the value', () => {
    for (const bad of ['0', '-1', '1.5', '256MiB', 'lots', '1e9', ' 12']) {
      expect(problems({ WEFT_CACHE_BYTES: bad })).toEqual([
        `WEFT_CACHE_BYTES must be an integer from 1 to ${Number.MAX_SAFE_INTEGER} (got "${bad}")`,
      ]);
    }
    // Reported with the other problems, all at once.
    expect(problems({ WEFT_CACHE_BYTES: 'x', PORT: 'y' })).toHaveLength(2);
  });
});

describe('WEFT_HEAP_GROWTH_PERCENT', () => {
  it('defaults to 20 and takes an integer from 0 (V8 chooses) to 300', () => {
    expect(loadConfig({}).heapGrowthPercent).toBe(20);
    expect(loadConfig({ WEFT_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({ WEFT_HEAP_GROWTH_PERCENT: '300' }).heapGrowthPercent).toBe(300);
    for (const bad of ['-1', '301', '1.5', '20%']) {
      expect(problems({ WEFT_HEAP_GROWTH_PERCENT: bad })).toEqual([
        `WEFT_HEAP_GROWTH_PERCENT must be an integer from 0 to 300 (got "${bad}")`,
      ]);
    }
  });
});

describe('/metrics: the thread cache', () => {
  it('reports estimated bytes under WEFT_CACHE_BYTES, threads held, hits, misses and evictions', async () => {
    const bound = 20_000;
    const config = {
      ...loadConfig({
        DATABASE_URL: await freshSqliteUrl(),
        PORT: '0',
        WEFT_CACHE_BYTES: String(bound),
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
        bytes: value('weft_thread_cache_bytes'),
        maxBytes: value('weft_thread_cache_max_bytes'),
        threads: value('weft_thread_cache_threads'),
        hits: value('weft_thread_cache_hits_total'),
        misses: value('weft_thread_cache_misses_total'),
        evictions: value('weft_thread_cache_evictions_total'),
        oversized: value('weft_thread_cache_oversized_total'),
      };
    };
    try {
      const empty = await scrape();
      expect(empty).toMatchObject({ bytes: 0, maxBytes: bound, threads: 0, evictions: 0 });
      expect(empty.text).toMatch(/# TYPE weft_thread_cache_bytes gauge/);
      expect(empty.text).toMatch(/# TYPE weft_thread_cache_evictions_total counter/);

      // Two threads with a 1,000-character node each: a few KB of estimate apiece, so both fit.
      for (const id of ['a', 'b']) {
        expect((await post(url, createThread(id))).ok).toBe(true);
        expect((await post(url, append(id, 'x'.repeat(1000)))).ok).toBe(true);
      }
      const two = await scrape();
      expect(two.threads).toBe(2);
      expect(two.bytes).toBeGreaterThan(2 * 2000);
      expect(two.bytes).toBeLessThanOrEqual(bound);
      // Each append found its thread cached (created just before).
      expect(two.hits).toBeGreaterThanOrEqual(2);
      expect(two.evictions).toBe(0);

      // Ten more threads do not fit: the oldest go, and writing to `a` again replays it.
      for (let i = 0; i < 10; i++) {
        expect((await post(url, createThread(`c${i}`))).ok).toBe(true);
        expect((await post(url, append(`c${i}`, 'y'.repeat(1000)))).ok).toBe(true);
      }
      const body = (await post(url, append('a', 'again'))) as { ok: true; body: unknown };
      expect(JSON.stringify(body.body)).toContain('"logIndex":2');
      const full = await scrape();
      expect(full.bytes).toBeGreaterThan(0);
      expect(full.bytes).toBeLessThanOrEqual(bound);
      expect(full.evictions).toBeGreaterThan(0);
      expect(full.threads).toBeGreaterThan(0);
      expect(full.threads).toBeLessThan(12);
      expect(full.misses).toBeGreaterThan(two.misses);
      expect(full.hits).toBeGreaterThan(two.hits);
      expect(full.oversized).toBe(0);
    } finally {
      await app.close();
    }
  });
});
