/**
 * The console's lists, sorted and paged, in headless Chromium against a real keyed server: the
 * threads list a hundred at a time (with how many are shown of how many), sorted by last
 * activity or creation either way; the runs list sorted by last change or start; a thread's
 * timeline paged back to its first entry. Each order is checked against the API's own answer.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBrowser, type LaunchedBrowser, launchChromium } from '../support/browser.js';
import {
  axeViolations,
  type ConsoleServer,
  signIn,
  startConsoleServer,
  type Watched,
  watch,
} from './support.js';

const THREADS = 105;
const id = (i: number) => `list-${String(i).padStart(3, '0')}`;

describeWithBrowser('Weft Console lists', () => {
  let s: ConsoleServer;
  let chromium: LaunchedBrowser;
  let page: Page;
  const watched: Watched = { foreign: [], errors: [] };

  const ok = async (query: string, variables: Record<string, unknown> = {}) => {
    const r = await s.gql(query, variables);
    const [field] = Object.keys(r);
    expect(r[field!].__typename, JSON.stringify(r)).toMatch(/Success$/);
  };

  /** The ids the API lists first for `orderBy` (what the console must show in that order). */
  const apiOrder = async (field: string, direction: string, first: number) => {
    const r = await s.gql(
      `query ($o: ThreadOrder) { threads(first: ${first}, orderBy: $o) { edges { node { id } } } }`,
      { o: { field, direction } },
    );
    return r.threads.edges.map((e: { node: { id: string } }) => e.node.id) as string[];
  };

  const shownThreads = () =>
    page
      .locator('[data-thread-id]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-thread-id')!));

  beforeAll(async () => {
    s = await startConsoleServer();
    for (let i = 0; i < THREADS; i++) {
      await ok('mutation ($t: ID!) { createThread(input: { threadId: $t }) { __typename } }', {
        t: id(i),
      });
    }
    // The oldest thread is the latest active.
    await ok(
      `mutation { appendNodes(input: { threadId: "${id(0)}", nodes: [{ kind: INFERENCE, payload: { n: 1 } }] }) { __typename } }`,
    );
    // Two runs: r-first started first, r-second after it, then r-first changed last.
    await ok(
      `mutation { startRun(input: { threadId: "${id(1)}", goal: "one", runId: "r-first" }) { __typename } }`,
    );
    await ok(
      `mutation { startRun(input: { threadId: "${id(1)}", goal: "two", runId: "r-second" }) { __typename } }`,
    );
    await ok(
      `mutation { dispatch(input: { runId: "r-first", threadId: "${id(1)}", action: { type: SET_STATUS, payload: { status: "running" } } }) { __typename } }`,
    );
    chromium = await launchChromium({ viewport: { width: 1400, height: 900 } });
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    await watch(page, s.base, watched);
    await page.goto(`${s.base}/console/`, { waitUntil: 'load' });
    await signIn(page, s.admin, watched);
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await s?.close();
  });

  it('lists threads a hundred at a time, with how many are shown, and shows the rest on demand', async () => {
    await page.goto(`${s.base}/console/#/`);
    await expect.poll(() => page.locator('[data-thread-id]').count()).toBe(100);
    expect(await page.locator('[data-count="threads"]').textContent()).toBe(String(THREADS));
    expect(await page.locator('[data-count="shown"]').textContent()).toContain('100 shown');
    expect(await shownThreads()).toEqual(await apiOrder('UPDATED_AT', 'DESC', 100));
    await page.locator('[data-more="threads"]').click();
    await expect.poll(() => page.locator('[data-thread-id]').count()).toBe(THREADS);
    const all = await shownThreads();
    expect(new Set(all).size).toBe(THREADS);
    expect(all).toEqual(await apiOrder('UPDATED_AT', 'DESC', THREADS));
    // Everything is shown: no more button, no "shown" count.
    expect(await page.locator('[data-more="threads"]').count()).toBe(0);
    expect(await page.locator('[data-count="shown"]').count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('sorts threads by last activity or creation, either way, from the first page', async () => {
    await page.goto(`${s.base}/console/#/`);
    await page.reload();
    await expect.poll(() => page.locator('[data-thread-id]').count()).toBe(100);
    for (const [value, field, direction] of [
      ['CREATED_AT ASC', 'CREATED_AT', 'ASC'],
      ['CREATED_AT DESC', 'CREATED_AT', 'DESC'],
      ['UPDATED_AT ASC', 'UPDATED_AT', 'ASC'],
      ['UPDATED_AT DESC', 'UPDATED_AT', 'DESC'],
    ] as const) {
      await page.locator('[data-filter="thread-sort"]').selectOption(value);
      const want = await apiOrder(field, direction, 100);
      await expect.poll(shownThreads, { timeout: 10_000 }).toEqual(want);
    }
    // The orders differ where they should: created oldest first starts with the first thread
    // made; last activity newest first with the one the runs were written to last, then the
    // oldest thread, written to after all were made.
    expect((await apiOrder('CREATED_AT', 'ASC', 1))[0]).toBe(id(0));
    expect(await apiOrder('UPDATED_AT', 'DESC', 2)).toEqual([id(1), id(0)]);
    expect((await apiOrder('CREATED_AT', 'DESC', 1))[0]).toBe(id(THREADS - 1));
  });

  it('sorts runs by last change or start', async () => {
    await page.goto(`${s.base}/console/#/runs`);
    const order = () =>
      page
        .locator('[data-run-id]')
        .evaluateAll((cards) => cards.map((c) => c.getAttribute('data-run-id')));
    await expect.poll(order, { timeout: 10_000 }).toEqual(['r-first', 'r-second']);
    await page.locator('[data-filter="run-sort"]').selectOption('CREATED_AT DESC');
    await expect.poll(order, { timeout: 10_000 }).toEqual(['r-second', 'r-first']);
    await page.locator('[data-filter="run-sort"]').selectOption('CREATED_AT ASC');
    await expect.poll(order, { timeout: 10_000 }).toEqual(['r-first', 'r-second']);
    await page.locator('[data-filter="run-sort"]').selectOption('UPDATED_AT ASC');
    await expect.poll(order, { timeout: 10_000 }).toEqual(['r-second', 'r-first']);
  });

  it('pages a thread’s timeline back to its first entry, with no gap, and keeps it live', async () => {
    await ok('mutation { createThread(input: { threadId: "long" }) { __typename } }');
    const appends = Array.from(
      { length: 449 },
      (_, n) => () =>
        ok(
          `mutation { appendNodes(input: { threadId: "long", nodes: [{ kind: INFERENCE, payload: { n: ${n} } }] }) { __typename } }`,
        ),
    );
    for (let i = 0; i < appends.length; i += 25) {
      await Promise.all(appends.slice(i, i + 25).map((append) => append()));
    }
    const indexes = () =>
      page
        .locator('.timeline [data-event-index]')
        .evaluateAll((items) => items.map((li) => Number(li.getAttribute('data-event-index'))));
    const descending = (from: number, to: number) =>
      Array.from({ length: from - to + 1 }, (_, i) => from - i);
    await page.goto(`${s.base}/console/#/thread/long`);
    await expect.poll(indexes, { timeout: 15_000 }).toEqual(descending(449, 250));
    await page.getByRole('button', { name: 'Show entries #50–#249' }).click();
    await expect.poll(indexes, { timeout: 15_000 }).toEqual(descending(449, 50));
    await page.getByRole('button', { name: 'Show entries #0–#49' }).click();
    await expect.poll(indexes, { timeout: 15_000 }).toEqual(descending(449, 0));
    expect(await page.locator('[data-more="events"]').count()).toBe(0);
    // A new entry arrives at the top; the window keeps its size (the oldest can be asked again).
    await ok(
      'mutation { appendNodes(input: { threadId: "long", nodes: [{ kind: INFERENCE, payload: { n: 449 } }] }) { __typename } }',
    );
    await expect.poll(indexes, { timeout: 15_000 }).toEqual(descending(450, 1));
    await page.getByRole('button', { name: 'Show entries #0–#0' }).click();
    await expect.poll(indexes, { timeout: 15_000 }).toEqual(descending(450, 0));
  });

  it('sent no request to any other origin and logged no error', () => {
    expect(watched.foreign).toEqual([]);
    expect(watched.errors).toEqual([]);
  });
});
