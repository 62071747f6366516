/**
 * GraphiQL works offline in a real browser: the real server on a port, headless Chromium with
 * every request to another origin aborted (and counted: none may be needed), the page opened as
 * a browser navigation, a query run from the editor, and the thread created through the API seen
 * in the result pane. The query does not name the thread, so its id can only come from the server.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBrowser, type LaunchedBrowser, launchChromium } from '../support/browser.js';
import { createTestApp, type TestApp } from './support.js';

const THREAD_ID = `giql-${process.pid}-${Date.now().toString(36)}`;
const QUERY = 'query Listed { threads(first: 5) { edges { node { id logLength } } } }';
const SCREENSHOT = join(process.cwd(), 'tmp', 'graphiql.png');

describeWithBrowser('GraphiQL offline in headless Chromium', () => {
  let t: TestApp;
  let url: string;
  let threadId: string;
  let chromium: LaunchedBrowser | undefined;

  beforeAll(async () => {
    t = await createTestApp();
    const created = await t.gql(
      `mutation ($id: ID!) {
        createThread(input: { threadId: $id }) { __typename ... on CreateThreadSuccess { thread { id } } }
      }`,
      { id: THREAD_ID },
    );
    expect(created.data?.createThread.__typename, created.text).toBe('CreateThreadSuccess');
    threadId = created.data?.createThread.thread.id;
    expect(threadId).toBe(THREAD_ID);
    url = await t.app.start();
    chromium = await launchChromium({
      viewport: { width: 1280, height: 800 },
      // Offline below the routing too: no host but the server's resolves.
      extraArgs: [`--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE ${new URL(url).hostname}`],
    });
  });

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('loads with no foreign request, runs a query and shows the thread id', async () => {
    if (chromium === undefined) throw new Error('Chromium did not launch');
    const origin = new URL(url).origin;
    const page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    const blocked: Array<{ url: string; type: string }> = [];
    const failed: string[] = [];
    const pageErrors: string[] = [];
    await page.route('**', (route) => {
      const request = route.request();
      const target = new URL(request.url());
      const local = target.origin === origin || ['data:', 'blob:'].includes(target.protocol);
      if (local) return route.continue();
      blocked.push({ url: request.url(), type: request.resourceType() });
      return route.abort('internetdisconnected');
    });
    page.on('requestfailed', (r: Request) => failed.push(`${r.resourceType()} ${r.url()}`));
    page.on('pageerror', (e) => pageErrors.push(e.message));

    const response = await page.goto(`${url}?query=${encodeURIComponent(QUERY)}`, {
      waitUntil: 'load',
      timeout: 40_000,
    });
    expect(response?.request().headers().accept).toMatch(/^text\/html/);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-type']).toMatch(/text\/html/);
    expect(await page.title()).toBe('Weft');
    // Everything the page needs came with it: no script, style or font from anywhere else.
    const assets = blocked.filter((b) => ['script', 'stylesheet', 'font'].includes(b.type));
    expect(assets, 'scripts/styles/fonts requested from other origins').toEqual([]);

    await run(page);
    const result = page.locator('.graphiql-response');
    await expect.poll(() => result.textContent(), { timeout: 20_000 }).toContain(threadId);
    // The server's answer for that thread: its one log entry, the createThread.
    expect(await result.textContent()).toMatch(/"logLength":\s*1/);

    mkdirSync(join(process.cwd(), 'tmp'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });

    expect(blocked, 'requests to other origins').toEqual([]);
    expect(failed, 'failed requests').toEqual([]);
    expect(pageErrors, 'uncaught page errors').toEqual([]);
  }, 90_000); // generous: the 9 MB inline page is slow to parse on a loaded machine
});

/** Presses GraphiQL's run button once the editor shows the query from the URL. */
async function run(page: Page): Promise<void> {
  const editor = page.locator('.graphiql-query-editor');
  await expect.poll(() => editor.textContent(), { timeout: 20_000 }).toContain('threads');
  await page.locator('button.graphiql-execute-button').click();
}
