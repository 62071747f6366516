/**
 * SQLite searches read in a thread of their own (review item 1): a statement that runs long
 * holds that thread, not the event loop, and past WEFT_QUERY_TIMEOUT_MS the search answers
 * QUERY_TIMEOUT while the statement is still running (its thread is terminated), the next search
 * served by a fresh thread. A recursive count of tens of millions of rows stands for a search
 * over hostile documents: one statement of seconds, which no deadline checked between statements
 * on the event loop could end.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
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
    const read = searcher.rank(counting(1_000_000)).finally(() => {
      settled = true;
    });
    let turns = 0;
    while (!settled) {
      await turn();
      turns++;
    }
    const rows = await read;
    expect(rows).toEqual(counted(1_000_000));
    // On the event loop the statement would have run in one turn of it.
    expect(turns).toBeGreaterThan(1);
  });

  it.runIf(process.platform === 'linux')(
    'runs at the lowest CPU priority, its own thread alone (Linux)',
    async () => {
      const niceOf = (task: string) => {
        const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      };
      const lowest = () => readdirSync('/proc/self/task').filter((t) => niceOf(t) === 19);
      const before = lowest();
      const main = niceOf(String(process.pid));
      const mine = getPriority();
      const searcher = await openSearcher(undefined);
      expect(await searcher.rank(counting(1))).toEqual(counted(1));
      const after = lowest();
      expect(after.filter((t) => !before.includes(t)).length).toBe(1);
      // The process and the thread that searched keep their priority.
      expect(niceOf(String(process.pid))).toBe(main);
      expect(getPriority()).toBe(mine);
    },
  );

  it('ranks in the thread and sends back the page only, each text cut to its head', async () => {
    const searcher = await openSearcher(undefined);
    // Three candidates, newest first: their texts say the word 1, 3 and 0 times.
    const texts = ['a walrus and 😀 more', 'walrus walrus walrus', 'nothing here at all'];
    const request = (offset: number, take: number, maxBytes = 1_000_000): RankRequest => ({
      kind: 'rank',
      candidates: {
        text:
          "SELECT column1 AS cand, 't' AS rank_thread, column1 AS rank_seq, 20 AS bytes " +
          'FROM (VALUES (3), (2), (1)) ORDER BY column1 DESC',
        values: [],
      },
      // A row's text: its stored body here (a sealed payload's); else derived from `payload`.
      body: `SELECT CASE ? ${texts.map((t, i) => `WHEN ${i + 1} THEN '${t}'`).join(' ')} END AS body, NULL AS payload`,
      maxBytes,
      matcher: { source: '(walrus)', flags: 'giu' },
      byThread: true,
      offset,
      take,
      // "a walrus and " and the first half of the emoji: cut before it.
      head: 14,
    });
    const page = await searcher.rank(request(0, 10));
    expect(page.map((h) => h.row.cand)).toEqual([2, 1, 3]);
    expect(page.map((h) => h.head)).toEqual(['walrus walrus ', 'a walrus and ', 'nothing here a']);
    expect(page.map((h) => h.cut)).toEqual([true, true, true]);
    expect(page[0]!.score).toBeGreaterThan(page[1]!.score);
    expect(page[2]!.score).toBe(0);
    expect((await searcher.rank(request(1, 1))).map((h) => h.row.cand)).toEqual([1]);
    // Texts are read newest first up to maxBytes (always one): the older two are not ranked.
    expect((await searcher.rank(request(0, 10, 30))).map((h) => h.row.cand)).toEqual([3]);
  });

  it('answers QUERY_TIMEOUT past the deadline mid-statement, and the next search works', async () => {
    const searcher = await openSearcher(100);
    await expect(searcher.rank(counting(30_000_000))).rejects.toMatchObject({
      error: { code: 'QUERY_TIMEOUT', message: expect.stringMatching(/WEFT_QUERY_TIMEOUT_MS/) },
    });
    expect(await searcher.rank(counting(1))).toEqual(counted(1));
  });
});
