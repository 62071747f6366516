/**
 * Acting from the console, in headless Chromium against a real keyed server: create a thread,
 * start a run on a thread, approve a waiting run on its thread page (with a structured response), cancel a run (asked why first), redact a
 * node (a reason required), edit a memory value as of a past index and fork there in one step,
 * delete a thread (its id typed out first); a read-only key is offered
 * none of it. Each action's effect is checked through the API, not only on the page.
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

describeWithBrowser('Weft Console actions', () => {
  let s: ConsoleServer;
  let chromium: LaunchedBrowser;
  let page: Page;
  const watched: Watched = { foreign: [], errors: [] };

  const runsOf = async (threadId: string) => {
    const r = await s.gql(
      'query ($t: ID!) { thread(id: $t) { runs { edges { node { id goal status } } } } }',
      { t: threadId },
    );
    return r.thread.runs.edges.map((e: { node: unknown }) => e.node) as Array<{
      id: string;
      goal: string;
      status: string;
    }>;
  };

  beforeAll(async () => {
    s = await startConsoleServer();
    for (const id of ['work', 'doomed']) {
      await s.gql('mutation ($id: ID!) { createThread(input: { threadId: $id }) { __typename } }', {
        id,
      });
    }
    await s.gql(
      `mutation { appendNodes(input: { threadId: "work", nodes: [{ kind: INFERENCE, payload: { note: "secret 42" } }] }) { __typename } }`,
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

  it('creates a thread from the threads list and opens it; a taken id is refused, said, and writes nothing', async () => {
    await page.goto(`${s.base}/console/#/threads`);
    const form = page.locator('form[data-action="create-thread"]');
    await form.waitFor({ timeout: 15_000 });
    await form.getByLabel(/^New thread/).fill('work');
    await form.getByRole('button', { name: 'Create thread' }).click();
    await expect.poll(async () => form.getByRole('status').textContent()).toContain('work');
    const count = async () =>
      (await s.gql('{ threads(first: 100) { totalCount } }')).threads.totalCount;
    expect(await count()).toBe(2);
    await form.getByLabel(/^New thread/).fill('made-here');
    await form.getByRole('button', { name: 'Create thread' }).click();
    await page.waitForURL(/#\/thread\/made-here$/, { timeout: 15_000 });
    expect((await s.gql('{ thread(id: "made-here") { id logLength } }')).thread).toEqual({
      id: 'made-here',
      logLength: 1,
    });
    expect(await count()).toBe(3);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('starts a run from the thread page', async () => {
    await page.goto(`${s.base}/console/#/thread/work`);
    const form = page.locator('form[data-action="start-run"]');
    await form.waitFor({ timeout: 15_000 });
    await form.getByRole('button', { name: 'Start run' }).click();
    expect(await form.getByRole('status').textContent()).toContain('Say what the run is for.');
    expect(await runsOf('work')).toEqual([]);
    await form.getByLabel('Start a run with the goal').fill('summarise the findings');
    await form.getByRole('button', { name: 'Start run' }).click();
    await expect
      .poll(async () => (await runsOf('work')).map((r) => r.goal))
      .toEqual(['summarise the findings']);
    const [run] = await runsOf('work');
    await page.locator(`[data-run-id="${run!.id}"]`).waitFor({ timeout: 15_000 });
    expect(await axeViolations(page)).toEqual([]);
  });

  it('approves a waiting run in place, on its thread page', async () => {
    const [run] = await runsOf('work');
    const r = await s.gql(
      `mutation ($r: ID!) { dispatch(input: { runId: $r, threadId: "work", action: { type: REQUEST_HUMAN_INPUT,
        payload: { pending_approval: { question: "Go on?" } } } }) { __typename } }`,
      { r: run!.id },
    );
    expect(r.dispatch.__typename).toBe('DispatchSuccess');
    await page.reload();
    const card = page.locator(`[data-run-id="${run!.id}"][data-run-status="WAITING"]`);
    await card.waitFor({ timeout: 15_000 });
    // A JSON object typed as the response reaches the agent as one, not as its text.
    await card.getByLabel(/^Response/).fill('{"amount": 120, "note": "ok"}');
    await card.locator('[data-action="approve"]').click();
    await expect.poll(async () => (await runsOf('work'))[0]!.status).toBe('RUNNING');
    const answered = await s.gql(
      '{ approvals(filter: { threadId: "work" }) { edges { node { decision response } } } }',
    );
    expect(answered.approvals.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { decision: 'approved', response: { amount: 120, note: 'ok' } },
    ]);
  });

  it('cancels a run only once asked why, and says so', async () => {
    const [run] = await runsOf('work');
    const card = page.locator(`[data-run-id="${run!.id}"]`);
    await card.locator('[data-action="cancel-run"]').click();
    expect((await runsOf('work'))[0]!.status, 'asking writes nothing').toBe('RUNNING');
    await card.getByLabel('Why cancel?').fill('not needed any more');
    await card.locator('[data-action="confirm-cancel-run"]').click();
    await expect.poll(async () => (await runsOf('work'))[0]!.status).toBe('CANCELLED');
    await page.locator(`[data-run-id="${run!.id}"][data-run-status="CANCELLED"]`).waitFor({
      timeout: 15_000,
    });
  });

  it('redacts a node from its details only with a reason', async () => {
    const r = await s.gql(
      '{ thread(id: "work") { nodes(kinds: [INFERENCE]) { edges { node { id } } } } }',
    );
    const nodeId = r.thread.nodes.edges[0].node.id as string;
    await page.goto(`${s.base}/console/#/thread/work`);
    await page.locator('.graph[data-graph-state="ready"]').waitFor({ timeout: 15_000 });
    await page
      .locator(`.conversation [data-node-id="${nodeId}"]`)
      .getByRole('button', { name: 'in the graph' })
      .click();
    const details = page.locator(`.details [data-node-id="${nodeId}"]`);
    await details.waitFor({ timeout: 10_000 });
    await details.locator('[data-action="redact"]').click();
    const confirm = details.locator('[data-action="confirm-redact"]');
    expect(await confirm.isDisabled()).toBe(true);
    await details.getByLabel('Reason (required)').fill('contains a secret');
    await confirm.click();
    await details.locator('[data-redacted="true"]').waitFor({ timeout: 15_000 });
    const after = await s.gql(
      'query ($t: ID!, $id: ID!) { causalNode(threadId: $t, id: $id) { redaction { reason } payload } }',
      {
        t: 'work',
        id: nodeId,
      },
    );
    expect(after.causalNode.redaction.reason).toBe('contains a secret');
    expect(JSON.stringify(after.causalNode.payload)).not.toContain('secret 42');
  });

  it('writes a new memory version, and edits a fork made at an earlier index', async () => {
    const memoryOf = async (threadId: string) => {
      const r = await s.gql(
        'query ($t: ID!) { thread(id: $t) { memory { type key content history { id } } } }',
        { t: threadId },
      );
      const all = r.thread.memory as Array<{ key: string; content: unknown; history: unknown[] }>;
      return all.filter((m) => m.key === 'tone');
    };
    const r = await s.gql(
      'mutation { remember(input: { threadId: "work", type: "preference", key: "tone", content: "verbose" }) { __typename ... on RememberSuccess { logIndex } } }',
    );
    const before = r.remember.logIndex as number;
    await page.goto(`${s.base}/console/#/thread/work`);
    const item = page.locator('.memory li', { hasText: 'preference:tone' });
    await item.locator('summary').click();
    const form = item.locator('[data-action="edit-memory"]');
    await form.getByLabel('New value (JSON)').fill('not json');
    await form.getByRole('button', { name: 'Save new version' }).click();
    expect(await form.getByRole('status').textContent()).toContain('Not JSON');
    await form.getByLabel('New value (JSON)').fill('"concise"');
    await form.getByRole('button', { name: 'Save new version' }).click();
    await expect.poll(async () => (await memoryOf('work'))[0]?.content).toBe('concise');
    expect((await memoryOf('work'))[0]!.history).toHaveLength(2);
    // Edit and re-run from here: fork as of the first version, then change the fork only.
    await page.locator('#travel').fill(String(before + 1));
    await page.getByRole('button', { name: `Fork at index ${before + 1}` }).click();
    await page.waitForURL((url) => !url.hash.endsWith('/work'), { timeout: 15_000 });
    const fork = decodeURIComponent(new URL(page.url()).hash.replace('#/thread/', ''));
    expect((await memoryOf(fork))[0]!.content).toBe('verbose');
    const forked = page.locator('.memory li', { hasText: 'preference:tone' });
    await forked.locator('summary').click();
    await forked.getByLabel('New value (JSON)').fill('"playful"');
    await forked.getByRole('button', { name: 'Save new version' }).click();
    await expect.poll(async () => (await memoryOf(fork))[0]?.content).toBe('playful');
    expect((await memoryOf('work'))[0]!.content, 'the source keeps its own').toBe('concise');
  });

  it('edits a memory value as of an earlier index and forks there in one step', async () => {
    const styleOf = async (threadId: string) => {
      const r = await s.gql(
        'query ($t: ID!) { thread(id: $t) { forkedFrom { upToIndex thread { id } } memory { key content } } }',
        { t: threadId },
      );
      const tone = (r.thread.memory as Array<{ key: string; content: unknown }>).find(
        (m) => m.key === 'style',
      );
      return { content: tone?.content, forkedFrom: r.thread.forkedFrom };
    };
    await s.gql('mutation { createThread(input: { threadId: "rerun" }) { __typename } }');
    const first = await s.gql(
      'mutation { remember(input: { threadId: "rerun", type: "preference", key: "style", content: "formal" }) { __typename ... on RememberSuccess { logIndex } } }',
    );
    const second = await s.gql(
      'mutation { remember(input: { threadId: "rerun", type: "preference", key: "style", content: "casual" }) { __typename ... on RememberSuccess { logIndex } } }',
    );
    const at = (first.remember.logIndex as number) + 1;
    const length = (second.remember.logIndex as number) + 1;
    await page.goto(`${s.base}/console/#/thread/rerun`);
    // The slider knows the whole log before it is moved (else the index is clamped), and the
    // memory panel shows that index before the form is looked for.
    await page.locator(`#travel[max="${length}"]`).waitFor({ timeout: 20_000 });
    await page.locator('#travel').fill(String(at));
    await page.locator(`#travel[data-shown-index="${at}"]`).waitFor({ timeout: 20_000 });
    const item = page.locator('.memory li', { hasText: 'semantic:preference:style' });
    await item
      .locator('summary', { hasText: 'Edit and fork from here' })
      .click({ timeout: 20_000 });
    const form = item.locator('[data-action="edit-and-fork"]');
    // As of that index the value was the first one, and that is what the form starts from.
    expect(await form.getByLabel('New value (JSON)').inputValue()).toBe('"formal"');
    await form.getByLabel('New value (JSON)').fill('{ not json');
    await form.getByRole('button', { name: `Fork at index ${at} with this value` }).click();
    expect(await form.getByRole('status').textContent()).toContain('Not JSON');
    await form.getByLabel('New value (JSON)').fill('"terse"');
    await form.getByRole('button', { name: `Fork at index ${at} with this value` }).click();
    await page.waitForURL((url) => !url.hash.endsWith('/rerun'), { timeout: 15_000 });
    const fork = decodeURIComponent(new URL(page.url()).hash.replace('#/thread/', ''));
    const forked = await styleOf(fork);
    expect(forked.content).toBe('terse');
    expect(forked.forkedFrom).toEqual({ upToIndex: at, thread: { id: 'rerun' } });
    expect((await styleOf('rerun')).content, 'the thread itself is untouched').toBe('casual');
    await page.locator('.memory li', { hasText: 'preference:style' }).first().waitFor();
    expect(await axeViolations(page)).toEqual([]);
  });

  it('deletes a thread only once its id is typed out', async () => {
    await page.goto(`${s.base}/console/#/thread/doomed`);
    await page.locator('[data-action="delete-thread"]').click();
    const confirm = page.locator('[data-action="confirm-delete"]');
    await page.getByLabel('Thread id').fill('doome');
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByLabel('Thread id').fill('doomed');
    await confirm.click();
    await page.waitForURL(/#\/threads$/, { timeout: 15_000 });
    await expect(s.gql('{ thread(id: "doomed") { id } }')).rejects.toThrow('does not exist');
  });

  it('offers a read-only key none of these actions', async () => {
    await page.evaluate(() => sessionStorage.clear());
    await page.reload({ waitUntil: 'load' });
    await signIn(page, s.reader, watched);
    await page.goto(`${s.base}/console/#/thread/work`);
    await page.locator('.graph[data-graph-state="ready"]').waitFor({ timeout: 15_000 });
    for (const action of ['start-run', 'cancel-run', 'delete-thread', 'redact', 'approve']) {
      expect(await page.locator(`[data-action="${action}"]`).count(), action).toBe(0);
    }
    await page.goto(`${s.base}/console/#/threads`);
    await page.locator('tr[data-thread-id="work"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-action="create-thread"]').count()).toBe(0);
  });

  it('logged no error in the page and sent nothing to another origin', () => {
    expect(watched).toEqual({ foreign: [], errors: [] });
  });
});
