/**
 * SQLite searches read in a thread of their own (issue 32, item 1): a statement that runs long
 * holds that thread, not the event loop, and past WEFT_QUERY_TIMEOUT_MS the search answers
 * QUERY_TIMEOUT while the statement is still running (its thread is terminated), the next search
 * served by a fresh thread. A recursive count of tens of millions of rows stands for a search
 * over hostile documents: one statement of seconds, which no deadline checked between statements
 * on the event loop could end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../src/store/migrate/database-url.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import {
  openSqliteSearcher,
  type RankRequest,
  type SqliteSearcher,
} from '../../src/store/read-model/sqlite-searcher.js';
import { freshSqliteUrl } from '../api/support.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function openSearcher(timeoutMs: number | undefined): Promise<SqliteSearcher> {
  const url = await freshSqliteUrl();
  // The store creates and migrates the file the searcher reads.
  const store = openThreadStore(url);
  await store.ready();
  const { path } = parseDatabaseUrl(url) as { path: string };
  const searcher = openSqliteSearcher(path, timeoutMs);
  closers.push(async () => {
    await searcher.close();
    await store.close();
  });
  return searcher;
}

/** One statement counting to `n`, answering one row of no text. */
const counting = (n: number): RankRequest => ({
  kind: 'rank',
  candidates: {
    text:
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) ' +
      'SELECT count(*) AS cand, 0 AS bytes FROM c',
    values: [n],
  },
  body: "SELECT '' WHERE ? IS NULL",
  maxBytes: 1,
  matcher: null,
  byThread: true,
  offset: 0,
  take: 10,
  head: 16,
});

const counted = (n: number) => [{ row: { cand: n, bytes: 0 }, score: 0, head: '', cut: false }];

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SQLite search thread', () => {
  it('runs a long statement beside the event loop, which keeps turning', async () => {
    const searcher = await openSearcher(undefined);
    let settled = false;
    const read = searcher.rank(counting(5_000_000)).finally(() => {
      settled = true;
    });
    let turns = 0;
    while (!settled) {
      await turn();
      turns++;
    }
    const rows = await read;
    expect(rows).toEqual(counted(5_000_000));
    // On the event loop the statement would have run in one turn of it.
    expect(turns).toBeGreaterThan(1);
  });

  it('answers QUERY_TIMEOUT past the deadline mid-statement, and the next search works', async () => {
    const searcher = await openSearcher(100);
    await expect(searcher.rank(counting(30_000_000))).rejects.toMatchObject({
      error: { code: 'QUERY_TIMEOUT', message: expect.stringMatching(/WEFT_QUERY_TIMEOUT_MS/) },
    });
    expect(await searcher.rank(counting(1))).toEqual(counted(1));
  });
});
