/**
 * The tenant activity feeds behind `threadActivity` on a real SQLite file: subscribers at the
 * head share one reader (a commit costs one query, not one per subscriber), a subscriber behind
 * the shared tail catches up with its own pages and joins it with no gap or repeat, and a
 * finished subscription leaves nothing behind.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type ActivitySource, createActivityFeeds } from '../../src/events/index.js';
import { createReads } from '../../src/reads/index.js';
import { appendMany, must, openNode, sqliteDatabases, take } from './support.js';

const dbs = sqliteDatabases();
afterAll(() => dbs.cleanup());

describe('activity feeds', () => {
  it('share one reader among the subscribers of a tenant and catch up late ones exactly', async () => {
    const url = await dbs.fresh();
    const node = await openNode(url);
    const reads = createReads(node.engine, { databaseUrl: url });
    let queries = 0;
    const source: ActivitySource = {
      activity: (after, takeRows) => {
        queries++;
        return reads.activity('default', after, takeRows);
      },
      lastActivity: () => reads.lastActivity('default'),
    };
    const feeds = createActivityFeeds(node.hub, { tailSize: 8, pageSize: 5 });
    try {
      must(await node.engine.createThread({ threadId: 't' }));
      const live = Array.from({ length: 20 }, () =>
        feeds.stream(source, { tenant: 'default', afterSeq: undefined }),
      );
      // Each live stream starts after the current last entry once it is first read.
      const pending = live.map((s) => take(s, 30));
      await new Promise((r) => setTimeout(r, 100));
      expect(feeds.stats()).toEqual({ tenants: 1, subscribers: 20 });
      queries = 0;
      await appendMany(node.engine, 't', 30);
      const got = await Promise.all(pending);
      for (const events of got) {
        expect(events.map((e) => e.index)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      }
      // One reader for twenty subscribers: at most a query or two per commit, not twenty.
      expect(queries).toBeLessThanOrEqual(2 * 30);
      expect(queries).toBeGreaterThan(0);

      // From the start: 31 entries, far more than the tail keeps (8), in pages of 5.
      const late = feeds.stream(source, { tenant: 'default', afterSeq: 0 });
      const catchUp = take(late, 34);
      await appendMany(node.engine, 't', 3, 'late');
      const all = await catchUp;
      expect(all.map((e) => e.index)).toEqual(Array.from({ length: 34 }, (_, i) => i));
      expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 34 }, (_, i) => i + 1));
      for (const s of [...live, late]) await s.return?.();
      expect(feeds.stats()).toEqual({ tenants: 0, subscribers: 0 });
    } finally {
      await reads.close();
      await node.close();
    }
  });
});
