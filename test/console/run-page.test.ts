/**
 * A run's page, in headless Chromium against a real keyed server: its card and its step
 * timeline — one row per log entry of the run, in order, each a bar from when it happened to the
 * next (waits, approvals and the end told apart), with the tokens spent so far — reached from the
 * run's id in the thread page.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBrowser, type LaunchedBrowser, launchChromium } from '../support/browser.js';
import {
  axeViolations,
  type ConsoleServer,
  shoot,
  signIn,
  startConsoleServer,
  type Watched,
  watch,
} from './support.js';

describeWithBrowser('Weft Console run page', () => {
  let s: ConsoleServer;
  let chromium: LaunchedBrowser;
  let page: Page;
  const watched: Watched = { foreign: [], errors: [] };

  const ok = async (query: string, typename: string) => {
    const r = await s.gql(query);
    const [field] = Object.keys(r);
    expect(r[field!].__typename, JSON.stringify(r)).toBe(typename);
  };

  beforeAll(async () => {
    s = await startConsoleServer();
    await ok(
      'mutation { createThread(input: { threadId: "t" }) { __typename } }',
      'CreateThreadSuccess',
    );
    // Another run's entries in between must not show in this run's steps.
    await ok(
      'mutation { startRun(input: { threadId: "t", goal: "other", runId: "other" }) { __typename } }',
      'StartRunSuccess',
    );
    await ok(
      'mutation { startRun(input: { threadId: "t", goal: "write the report", runId: "r1" }) { __typename } }',
      'StartRunSuccess',
    );
    await ok(
      'mutation { dispatch(input: { runId: "r1", threadId: "t", action: { type: SET_STATUS, payload: { status: "running" } } }) { __typename } }',
      'DispatchSuccess',
    );
    await ok(
      'mutation { recordUsage(input: { runId: "r1", threadId: "t", model: "gpt-4o", inputTokens: 100, outputTokens: 20 }) { __typename } }',
      'RecordUsageSuccess',
    );
    await ok(
      'mutation { dispatch(input: { runId: "other", threadId: "t", action: { type: SET_STATUS, payload: { status: "running" } } }) { __typename } }',
      'DispatchSuccess',
    );
    await ok(
      `mutation { dispatch(input: { runId: "r1", threadId: "t", action: { type: REQUEST_HUMAN_INPUT,
        payload: { pending_approval: { question: "Send it?" } } } }) { __typename } }`,
      'DispatchSuccess',
    );
    await ok(
      'mutation { resolveApproval(input: { runId: "r1", threadId: "t", decision: "approved" }) { __typename } }',
      'ResolveApprovalSuccess',
    );
    await ok(
      'mutation { recordUsage(input: { runId: "r1", threadId: "t", model: "gpt-4o", inputTokens: 50, outputTokens: 30 }) { __typename } }',
      'RecordUsageSuccess',
    );
    await ok(
      'mutation { dispatch(input: { runId: "r1", threadId: "t", action: { type: SET_STATUS, payload: { status: "completed" } } }) { __typename } }',
      'DispatchSuccess',
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

  it('shows the run’s steps in order, told apart, with the tokens spent so far', async () => {
    await page.goto(`${s.base}/console/#/thread/t`);
    await page.locator('[data-run-id="r1"] h3 a').click();
    await page.waitForURL(/#\/run\/t\/r1$/);
    const rows = page.locator('table.steps tbody tr');
    await rows.first().waitFor({ timeout: 15_000 });
    const steps = await rows.evaluateAll((trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-step-kind'),
        tr.children[1]!.textContent,
        tr.children[4]!.textContent,
      ]),
    );
    expect(steps).toEqual([
      ['start', 'started: write the report', '0'],
      ['status', 'status → running', '0'],
      ['usage', 'usage: 120 tokens (gpt-4o)', '120'],
      ['wait', 'waiting for a human', '120'],
      ['approval', 'approval: approved', '120'],
      ['usage', 'usage: 80 tokens (gpt-4o)', '200'],
      ['end', 'status → completed', '200'],
    ]);
    // Every bar is drawn, each starting no earlier than the one before it.
    const lefts = await page
      .locator('table.steps .bar')
      .evaluateAll((bars) => bars.map((b) => (b as HTMLElement).getBoundingClientRect().left));
    expect(lefts).toHaveLength(7);
    for (let i = 1; i < lefts.length; i++) expect(lefts[i]!).toBeGreaterThanOrEqual(lefts[i - 1]!);
    expect(await page.locator('[data-run-id="r1"]').getAttribute('data-run-status')).toBe(
      'COMPLETED',
    );
    // Its nodes, beginning with the goal that started it.
    await page.locator('.run-nodes li').first().waitFor({ timeout: 15_000 });
    expect(await page.locator('.run-nodes li').first().textContent()).toContain(
      'goal · write the report',
    );
    await shoot(page, 'run.png', true);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('links a node made in a run to the run’s page from its details', async () => {
    await ok(
      'mutation { createThread(input: { threadId: "linked" }) { __typename } }',
      'CreateThreadSuccess',
    );
    await ok(
      'mutation { startRun(input: { threadId: "linked", goal: "draft", runId: "r2" }) { __typename } }',
      'StartRunSuccess',
    );
    const appended = await s.gql(
      'mutation { appendNodes(input: { threadId: "linked", nodes: [{ kind: INFERENCE, runId: "r2", payload: { text: "a draft" } }] }) { ... on AppendNodesSuccess { nodes { id } } } }',
    );
    const id = appended.appendNodes.nodes[0].id as string;
    await page.goto(`${s.base}/console/#/thread/linked`);
    await page.locator(`[data-frontier-id="${id}"]`).click();
    const details = page.locator(`.details [data-node-id="${id}"]`);
    await details.waitFor({ timeout: 15_000 });
    await details.getByRole('link', { name: 'r2' }).click();
    await page.waitForURL(/#\/run\/linked\/r2$/);
    await page.locator('table.steps tbody tr[data-step-kind="start"]').waitFor({ timeout: 15_000 });
    // The run's page lists the nodes it wrote: its goal, then the draft.
    const listed = page.locator(`.run-nodes li[data-node-id="${id}"]`);
    await listed.waitFor({ timeout: 15_000 });
    expect(await listed.textContent()).toContain('a draft');
    expect(await page.locator('.run-nodes li').count()).toBe(2);
  });

  it('says so for a run that does not exist', async () => {
    await page.goto(`${s.base}/console/#/run/t/nope`);
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 15_000 });
    expect(await alert.textContent()).toMatch(
      /^Cannot show run nope on thread t: .*(no such run|not)/i,
    );
  });

  it('filters the runs list by status, with the count', async () => {
    await page.goto(`${s.base}/console/#/runs`);
    await page.locator('[data-run-id="r1"]').waitFor({ timeout: 15_000 });
    const filter = page.locator('[data-filter="run-status"]');
    await filter.selectOption('COMPLETED');
    await page.locator('[data-run-count="1"]').waitFor({ timeout: 15_000 });
    expect(
      await page
        .locator('[data-run-id]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-run-id'))),
    ).toEqual(['r1']);
    await filter.selectOption('RUNNING');
    await page.locator('[data-run-id="other"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-run-id="r1"]').count()).toBe(0);
    await filter.selectOption('FAILED');
    await page.getByText('No failed runs.').waitFor({ timeout: 15_000 });
  });

  it('filters a thread’s timeline by kind of entry', async () => {
    await page.goto(`${s.base}/console/#/thread/t`);
    await page.locator('.timeline li').first().waitFor({ timeout: 15_000 });
    await page.locator('[data-filter="event-type"]').selectOption('usage_recorded');
    await expect.poll(() => page.locator('.timeline li').count()).toBe(2);
    expect(await page.locator('.timeline li .type').allTextContents()).toEqual([
      'usage_recorded',
      'usage_recorded',
    ]);
  });

  it('offers recent threads to pick in Diff and Projection', async () => {
    await page.goto(`${s.base}/console/#/diff`);
    const options = page.locator('datalist[data-picker="Thread A"] option');
    await expect.poll(() => options.count()).toBeGreaterThan(0);
    expect(
      await options.evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).toContain('t');
    expect(await axeViolations(page)).toEqual([]);
  });

  it('searches the text of every node from the threads list, and filters by activity', async () => {
    await page.goto(`${s.base}/console/#/threads`);
    await page.locator('[data-thread-id="t"]').waitFor({ timeout: 15_000 });
    const search = page.locator('form[aria-label="Search node text"]');
    await search.getByLabel('Text in any node').fill('report');
    await search.getByRole('button', { name: 'Search' }).click();
    const hit = page.locator('.search-results [data-hit-thread="t"]').first();
    await hit.waitFor({ timeout: 15_000 });
    expect(await hit.locator('mark').first().textContent()).toMatch(/report/i);
    await search.getByLabel('Text in any node').fill('zebra');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.getByText("No node's text matches.").waitFor({ timeout: 15_000 });
    await search.getByLabel('Text in any node').fill('report');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.locator('.search-results mark').first().waitFor({ timeout: 15_000 });
    await shoot(page, 'search.png', true);
    await page.locator('[data-filter="active-within"]').selectOption('the last hour');
    await page.locator('[data-thread-id="t"]').waitFor({ timeout: 15_000 });
    expect(await axeViolations(page)).toEqual([]);
  });

  it('logged no error in the page and sent nothing to another origin', () => {
    expect(watched).toEqual({ foreign: [], errors: [] });
  });
});
