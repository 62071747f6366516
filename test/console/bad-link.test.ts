/**
 * Review item 7: the console threw on a malformed link (`#/thread/%E0%A4%A`: decodeURIComponent
 * throws a URIError), leaving a blank page. A link the console cannot read — a broken %-escape,
 * opened directly or reached by a hash change, or a page it does not have — shows a "Bad link"
 * state naming the link, with a way back to the thread list, and the page logs no error (and
 * axe-core finds no serious or critical violation in it).
 * Headless Chromium against a real keyed server on SQLite.
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

describeWithBrowser('Weft Console on a malformed link', () => {
  let s: ConsoleServer;
  let chromium: LaunchedBrowser;
  let page: Page;
  const watched: Watched = { foreign: [], errors: [] };

  /** The bad-link state for `problem` is shown, naming `link`. */
  async function showsBadLink(problem: 'escape' | 'page', link: string) {
    const state = page.locator(`[data-bad-link="${problem}"]`);
    await state.waitFor({ timeout: 30_000 });
    expect(await state.getByRole('heading').textContent()).toBe('Bad link');
    const alert = await state.getByRole('alert').textContent();
    expect(alert).toContain(link);
    expect(alert).toMatch(problem === 'escape' ? /broken %-escape/ : /no page at this link/);
  }

  beforeAll(async () => {
    s = await startConsoleServer();
    await s.gql('mutation { createThread(input: { threadId: "research" }) { __typename } }');
    chromium = await launchChromium({
      extraArgs: [`--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE ${new URL(s.base).hostname}`],
    });
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    await watch(page, s.base, watched);
  });

  afterAll(async () => {
    await chromium?.close();
    await s?.close();
  });

  it('opens a link with a broken %-escape as a bad link, not a page error', async () => {
    await page.goto(`${s.base}/console/#/thread/%E0%A4%A`);
    await signIn(page, s.admin, watched);
    await showsBadLink('escape', '#/thread/%E0%A4%A');
    expect(await axeViolations(page)).toEqual([]);
    expect(watched.errors).toEqual([]);
  });

  it('shows a bad link reached by a hash change, and leads back to the thread list', async () => {
    await page.goto(`${s.base}/console/#/threads`);
    await page.locator('[data-thread-id="research"]').waitFor({ timeout: 30_000 });
    await page.evaluate(() => {
      location.hash = '#/diff/%ZZ/research';
    });
    await showsBadLink('escape', '#/diff/%ZZ/research');
    await page.getByRole('link', { name: 'thread list' }).click();
    await page.locator('[data-thread-id="research"]').waitFor({ timeout: 30_000 });
    expect(watched.errors).toEqual([]);
  });

  it('names a page the console does not have', async () => {
    await page.goto(`${s.base}/console/#/no-such-view/x`);
    await showsBadLink('page', '#/no-such-view/x');
    expect(watched.errors).toEqual([]);
    expect(watched.foreign).toEqual([]);
  });
});
