/**
 * The Weft Console in headless Chromium against a real keyed server on SQLite: the
 * thread list is live, a thread draws one graph element per node, the time-travel slider shows
 * exactly the nodes of `state(atIndex: k)` and the runs of `runsAt(atIndex: k)`, a node redacted
 * through the API (before the page opened, or while it shows the node) reads as redacted with its
 * reason in the graph, the details, the timeline and strict verify, its payload on no page (issue
 * 19), an approval requested through the API appears in the inbox live and approving it in the
 * page moves the run on, a read-only key gets no approve
 * control, a 10,000-node thread opens and pans and zooms, a server restart shows as reconnecting
 * and the page resumes with no gap and no repeat, no request leaves the origin, and
 * axe-core finds no serious or critical violation. The run writes the screenshots of
 * docs/console.md.
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

const APPEND = `mutation ($input: AppendNodesInput!) { appendNodes(input: $input) {
  __typename ... on AppendNodesSuccess { logIndex nodes { id } } ... on Error { code message } } }`;

const REDACT = `mutation ($input: RedactNodesInput!) { redactNodes(input: $input) {
  __typename ... on RedactNodesSuccess { redactedNodeIds } ... on Error { code message } } }`;

type Drawn = () => string[];

describeWithBrowser('Weft Console', () => {
  let s: ConsoleServer;
  let chromium: LaunchedBrowser;
  let page: Page;
  const watched: Watched = { foreign: [], errors: [] };

  const append = async (threadId: string, nodes: unknown[]) => {
    const r = await s.gql(APPEND, { input: { threadId, nodes } });
    expect(r.appendNodes.__typename, JSON.stringify(r)).toBe('AppendNodesSuccess');
    return r.appendNodes.nodes.map((n: { id: string }) => n.id) as string[];
  };
  const createThread = async (threadId: string, metadata: unknown) => {
    const r = await s.gql(
      `mutation ($id: ID!, $m: JSON) { createThread(input: { threadId: $id, metadata: $m }) { __typename } }`,
      { id: threadId, m: metadata },
    );
    expect(r.createThread.__typename).toBe('CreateThreadSuccess');
  };
  const drawn = (p: Page) =>
    p.evaluate(() =>
      (
        (
          window as unknown as { weftConsole: { graph: { drawnNodeIds: Drawn } } }
        ).weftConsole.graph.drawnNodeIds() as string[]
      ).sort(),
    );
  const redactedInGraph = (p: Page) =>
    p.evaluate(() =>
      (
        (
          window as unknown as { weftConsole: { graph: { redactedNodeIds: Drawn } } }
        ).weftConsole.graph.redactedNodeIds() as string[]
      ).sort(),
    );
  const stateIds = async (threadId: string, atIndex?: number) => {
    const r = await s.gql('query ($id: ID!, $k: Int) { thread(id: $id) { state(atIndex: $k) } }', {
      id: threadId,
      k: atIndex,
    });
    return (r.thread.state.nodes as Array<{ id: string }>).map((n) => n.id).sort();
  };
  const waitingRun = async (threadId: string, runId: string) => {
    await s.gql(
      'mutation ($t: ID!, $r: ID!) { startRun(input: { threadId: $t, goal: "publish the report", runId: $r }) { __typename } }',
      { t: threadId, r: runId },
    );
    const r = await s.gql(
      `mutation ($r: ID!, $t: ID!) { dispatch(input: { runId: $r, threadId: $t, action: { type: REQUEST_HUMAN_INPUT,
        payload: { pending_approval: { question: "Publish the report?" } } } }) { __typename } }`,
      { r: runId, t: threadId },
    );
    expect(r.dispatch.__typename).toBe('DispatchSuccess');
  };

  beforeAll(async () => {
    s = await startConsoleServer();
    await createThread('research', { team: 'ops' });
    const [system, goal] = await append('research', [
      { kind: 'SYSTEM', payload: 'You are a careful researcher.' },
      { kind: 'GOAL', payload: 'Summarise the rain report' },
    ]);
    const [call] = await append('research', [
      {
        kind: 'TOOL_CALL',
        parents: [goal, system],
        payload: { tool: 'fetch', url: 'https://example.test/rain' },
      },
    ]);
    const [result] = await append('research', [
      {
        kind: 'TOOL_RESULT',
        parents: [call],
        payload: 'It rains 300 days a year.',
        taint: { source: 'tool_output', toolName: 'fetch' },
      },
    ]);
    await append('research', [
      { kind: 'RESOURCE', resourceKey: 'file:report.md', payload: 'draft 1' },
    ]);
    await append('research', [
      { kind: 'INFERENCE', parents: [result], payload: 'Rain is frequent.' },
      { kind: 'RESOURCE', resourceKey: 'file:report.md', payload: 'draft 2' },
    ]);
    await s.gql(
      'mutation { remember(input: { threadId: "research", type: "memory", key: "tone", content: "concise" }) { __typename } }',
    );
    // A run started at index 7 and cancelled at 8: as of 8 it is running, now it is not.
    await s.gql(
      'mutation { startRun(input: { threadId: "research", goal: "check the forecast", runId: "run-early" }) { __typename } }',
    );
    const cancelled = await s.gql(
      'mutation { cancelRun(input: { runId: "run-early", threadId: "research", reason: "superseded" }) { __typename } }',
    );
    expect(cancelled.cancelRun.__typename).toBe('CancelRunSuccess');
    chromium = await launchChromium({
      viewport: { width: 1280, height: 900 },
      extraArgs: [`--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE ${new URL(s.base).hostname}`],
    });
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    // The console hands its graph to automation only when asked (see views/thread.tsx).
    await page.addInitScript(() => {
      (window as unknown as { weftConsoleAutomation: boolean }).weftConsoleAutomation = true;
    });
    await watch(page, s.base, watched);
  });

  afterAll(async () => {
    await chromium?.close();
    await s?.close();
  });

  it('asks for the key once, then lists threads made through the API and shows a new one live', async () => {
    const response = await page.goto(`${s.base}/`, { waitUntil: 'load' });
    expect(new URL(page.url()).pathname).toBe('/console/');
    expect(response?.headers()['content-security-policy']).toContain("connect-src 'self'");
    await signIn(page, s.admin, watched);
    await page.locator('[data-thread-id="research"]').waitFor();
    await createThread('fresh-thread', { team: 'ops', tier: 2 });
    await page.locator('[data-thread-id="fresh-thread"]').waitFor({ timeout: 10_000 });
    // Newest activity first.
    const first = await page.locator('tbody tr').first().getAttribute('data-thread-id');
    expect(first).toBe('fresh-thread');
    await shoot(page, 'threads.png');
    // The key is held for this tab: a reload does not ask again.
    await page.reload();
    await page.locator('[data-thread-id="research"]').waitFor();
    expect(await page.locator('#api-key').count()).toBe(0);
  });

  const runsAt = async (threadId: string, atIndex: number) =>
    (
      (
        await s.gql(
          'query ($id: ID!, $k: Int!) { thread(id: $id) { runsAt(atIndex: $k) { id status } } }',
          {
            id: threadId,
            k: atIndex,
          },
        )
      ).thread.runsAt as Array<{ id: string; status: string }>
    ).map((r) => [r.id, r.status]);

  it('draws one graph element per node, live, and the slider shows exactly state(atIndex: k) and its runs', async () => {
    await page.goto(`${s.base}/console/#/thread/research`);
    const graph = page.locator('.graph[data-graph-state="ready"]');
    await graph.waitFor({ timeout: 20_000 });
    expect(await drawn(page)).toEqual(await stateIds('research'));
    // A node appended through the API is drawn without a reload.
    const [late] = await append('research', [{ kind: 'ANSWER', payload: 'It rains a lot.' }]);
    await expect.poll(() => drawn(page), { timeout: 10_000 }).toContain(late);
    const length = (await s.gql('{ thread(id: "research") { logLength } }')).thread.logLength;
    await page.locator(`[data-event-index="${length - 1}"]`).waitFor();
    expect(await drawn(page)).toEqual(await stateIds('research'));
    await shoot(page, 'thread.png', true);

    const slider = page.locator('#travel');
    const shownRuns = (k: number) =>
      page
        .locator(`[data-runs-at="${k}"] [data-run-id]`)
        .evaluateAll((cards) =>
          cards.map((c) => [
            (c as HTMLElement).dataset.runId,
            (c as HTMLElement).dataset.runStatus,
          ]),
        );
    for (const k of [1, 3, 5, 8]) {
      await slider.fill(String(k));
      await page.locator(`#travel[data-shown-index="${k}"]`).waitFor({ timeout: 10_000 });
      expect(await drawn(page), `index ${k}`).toEqual(await stateIds('research', k));
      await page.locator(`[data-runs-at="${k}"]`).waitFor({ timeout: 10_000 });
      expect(await shownRuns(k), `runs at ${k}`).toEqual(await runsAt('research', k));
    }
    // As of 8 the run had started and not yet been cancelled.
    expect(await shownRuns(8)).toEqual([['run-early', 'RUNNING']]);
    await shoot(page, 'time-travel.png', true);
    await page.getByRole('button', { name: 'Back to now' }).click();
    await page.locator('#travel[data-shown-index="live"]').waitFor();
    expect(await drawn(page)).toEqual(await stateIds('research'));

    await page.getByRole('button', { name: 'Verify the log (strict)' }).click();
    await page.locator('[data-verify="ok"]').waitFor({ timeout: 10_000 });
  });

  it('shows a redacted node as redacted with its reason, live, and never its payload', async () => {
    const secret = 'passport X1234567';
    const card = 'card 4111 1111 1111 1111';
    await createThread('secrets', { team: 'ops' });
    const [goal] = await append('secrets', [{ kind: 'GOAL', payload: 'Book the flight' }]);
    const [leak, other] = await append('secrets', [
      { kind: 'TOOL_RESULT', parents: [goal], payload: { document: secret } },
      { kind: 'INFERENCE', parents: [goal], payload: `Pay with ${card}` },
    ]);
    const redact = async (nodeId: string, reason: string) => {
      const r = await s.gql(REDACT, { input: { threadId: 'secrets', nodeIds: [nodeId], reason } });
      expect(r.redactNodes, JSON.stringify(r)).toEqual({
        __typename: 'RedactNodesSuccess',
        redactedNodeIds: [nodeId],
      });
      return (await s.gql('{ thread(id: "secrets") { logLength } }')).thread.logLength - 1;
    };
    const text = () => page.evaluate(() => document.body.textContent ?? '');
    const redactedAt = await redact(leak!, 'user asked to forget');

    await page.goto(`${s.base}/console/#/thread/secrets`);
    await page.locator('.graph[data-graph-state="ready"]').waitFor({ timeout: 20_000 });
    await page.locator(`[data-redacted-node-id="${leak}"]`).click();
    const details = page.locator(`[aria-label="Node details"] [data-node-id="${leak}"]`);
    await details.locator('[data-redacted]').waitFor({ timeout: 10_000 });
    expect(await details.locator('[data-redacted]').textContent()).toMatch(
      /^redacted user asked to forget \(withheld at .+\)$/,
    );
    expect(await redactedInGraph(page)).toEqual([leak]);
    // A listed entry's body (what its summary says) is read after the list.
    const entry = page.locator(`[data-event-index="${redactedAt}"]`);
    await entry.filter({ hasText: 'node redacted' }).waitFor({ timeout: 10_000 });
    expect(await entry.textContent()).toContain(
      'nodes_redacted 1 node redacted: user asked to forget',
    );
    expect(await text()).not.toContain(secret);
    expect(await text()).not.toContain('weft:redacted');

    // Live: the other node, open in the details panel, is redacted while the page shows it.
    await page.locator(`[data-frontier-id="${other}"]`).click();
    await page.locator(`.details [data-node-id="${other}"]`).waitFor();
    expect(await text()).toContain(card);
    const second = await redact(other!, 'held a card number');
    await page.locator(`[data-event-index="${second}"]`).waitFor({ timeout: 10_000 });
    expect(await page.locator(`[data-event-index="${second}"]`).textContent()).toContain(
      '1 node redacted: held a card number',
    );
    await page.locator(`[data-redacted-node-id="${other}"]`).waitFor({ timeout: 10_000 });
    await page
      .locator(`.details [data-node-id="${other}"] [data-redacted]`)
      .waitFor({ timeout: 10_000 });
    await expect.poll(redactedInGraph.bind(null, page)).toEqual([leak, other].sort());
    expect(await text()).not.toContain(card);

    await page.getByRole('button', { name: 'Verify the log (strict)' }).click();
    await page.locator('[data-verify="ok"]').waitFor({ timeout: 10_000 });
    for (const id of [leak, other]) await page.locator(`[data-verify-redacted="${id}"]`).waitFor();
    expect(await text()).not.toContain('weft:redacted');
    await shoot(page, 'redaction.png', true);
  });

  it('shows an approval requested through the API live, and approving it moves the run on', async () => {
    await page.goto(`${s.base}/console/#/approvals`);
    await page.getByText('Nothing is waiting for a human.').waitFor();
    await waitingRun('research', 'run-approve');
    const item = page.locator('[data-approval-run="run-approve"]');
    await item.waitFor({ timeout: 10_000 });
    await shoot(page, 'approvals.png');
    await item.getByLabel('Response (optional)').fill('ship it');
    await item.locator('[data-action="approve"]').click();
    await expect
      .poll(
        async () =>
          (await s.gql('{ run(id: "run-approve", threadId: "research") { status memory } }')).run,
        { timeout: 10_000 },
      )
      .toMatchObject({ status: 'RUNNING', memory: { human_decision: 'approved' } });
    await item.waitFor({ state: 'detached', timeout: 10_000 });
  });

  it('gives a read-only key no approve control', async () => {
    const reader = await chromium.context.newPage();
    const mine: Watched = { foreign: [], errors: [] };
    await watch(reader, s.base, mine);
    await waitingRun('research', 'run-readonly');
    await reader.goto(`${s.base}/console/#/approvals`);
    await signIn(reader, s.reader, mine);
    await reader.locator('[data-approval-run="run-readonly"]').waitFor({ timeout: 10_000 });
    expect(await reader.locator('[data-action="approve"]').count()).toBe(0);
    expect(await reader.locator('[data-action="reject"]').count()).toBe(0);
    await reader.goto(`${s.base}/console/#/thread/research`);
    await reader.locator('.graph[data-graph-state="ready"]').waitFor({ timeout: 20_000 });
    expect(await reader.getByRole('button', { name: /^Fork at index/ }).count()).toBe(0);
    // A page not driven as automation gets no handle on the console's internals.
    expect(await reader.evaluate(() => 'weftConsole' in window)).toBe(false);
    expect(mine).toEqual({ foreign: [], errors: [] });
    await reader.close();
  });

  it('shows runs with their status and budget, a page at a time', async () => {
    await page.goto(`${s.base}/console/#/runs`);
    await page.locator('[data-run-id="run-approve"][data-run-status="RUNNING"]').waitFor();
    await page.locator('[data-run-id="run-readonly"][data-run-status="WAITING"]').waitFor();
    await shoot(page, 'runs.png');
    // Past one page (20 runs with their breakdowns is near the complexity limit): Show more.
    await createThread('many-runs', null);
    for (let i = 0; i < 21; i++) {
      await s.gql(
        'mutation ($r: ID!) { startRun(input: { threadId: "many-runs", goal: "g", runId: $r }) { __typename } }',
        { r: `many-${i}` },
      );
    }
    const total = (await s.gql('{ runs(first: 1) { totalCount } }')).runs.totalCount;
    expect(total).toBeGreaterThan(20);
    await page.reload();
    await page.locator('[data-run-id="many-20"]').waitFor();
    expect(await page.locator('[data-run-id]').count()).toBe(20);
    await page.getByRole('button', { name: 'Show 20 more runs' }).click();
    await expect.poll(() => page.locator('[data-run-id]').count()).toBe(total);
  });

  it('opens a 10,000-node thread grouped by step, expands a step, travels, pans and zooms', async () => {
    await createThread('big', { size: 'large' });
    const total = 10_000;
    const batch = 500;
    let previous: string[] = [];
    for (let start = 0; start < total; start += batch) {
      const nodes = Array.from({ length: batch }, (_, i) => {
        const n = start + i;
        const parents: string[] = [];
        return { kind: n % 7 === 0 ? 'TOOL_CALL' : 'INFERENCE', payload: { step: n }, parents };
      });
      // Each batch's nodes hang off the previous batch's (a wide, layered DAG).
      nodes.forEach((node, i) => {
        const parent = previous[i % Math.max(previous.length, 1)];
        if (parent !== undefined) node.parents = [parent];
      });
      previous = await append('big', nodes);
    }
    await page.goto(`${s.base}/console/#/thread/big`);
    await page.locator('.graph[data-graph-state="ready"]').waitFor({ timeout: 90_000 });
    // One node per step: the twenty appends of 500 nodes (entries 1–20).
    const steps = Array.from({ length: total / batch }, (_, k) => `step:${k + 1}`).sort();
    expect(await drawn(page)).toEqual(steps);
    expect(await page.locator('.graph').getAttribute('data-node-count')).toBe(String(total));
    await page.locator('[data-graph-grouped]').waitFor();
    // A head selected, its step expands into its 500 nodes in place of the step.
    const head = await page.locator('[data-frontier-id]').first().getAttribute('data-frontier-id');
    await page.locator(`[data-frontier-id="${head}"]`).click();
    await page.locator('[data-expand-step="20"]').click();
    await expect.poll(async () => (await drawn(page)).length).toBe(steps.length - 1 + batch);
    expect(await drawn(page)).toContain(head);
    expect(await drawn(page)).not.toContain('step:20');
    await page.locator('.graph-selection[data-node-id]').waitFor({ state: 'visible' });
    expect(await page.locator('.graph-selection').getAttribute('data-node-id')).toBe(head);
    // Travelling to index 12 shows the steps before it, not the expanded one's nodes.
    const slider = page.locator('#travel');
    await slider.focus();
    await slider.evaluate((el: HTMLInputElement) => {
      el.value = '12';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.locator('#travel[data-shown-index="12"]').waitFor();
    const before12 = Array.from({ length: 11 }, (_, k) => `step:${k + 1}`).sort();
    await expect.poll(() => drawn(page)).toEqual(before12);
    await page.getByRole('button', { name: 'Back to now' }).click();
    await page.getByRole('button', { name: 'Collapse steps' }).click();
    await expect.poll(() => drawn(page)).toEqual(steps);
    const camera = () =>
      page.evaluate(() =>
        (
          window as unknown as { weftConsole: { graph: { cameraState(): unknown } } }
        ).weftConsole.graph.cameraState(),
      );
    const before = (await camera()) as { x: number; y: number; ratio: number };
    await page.locator('.graph').focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(async () => ((await camera()) as { x: number }).x).not.toBe(before.x);
    const box = (await page.locator('.graph').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -400);
    await expect
      .poll(async () => ((await camera()) as { ratio: number }).ratio, { timeout: 10_000 })
      .toBeLessThan(before.ratio);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 120, box.y + box.height / 2 + 40, { steps: 5 });
    await page.mouse.up();
    await shoot(page, 'large-thread.png');
    expect(watched.errors).toEqual([]);
  }, 180_000);

  it('shows the reconnecting state across a server restart and resumes with no gap', async () => {
    await page.goto(`${s.base}/console/#/thread/research`);
    await page.locator('.graph[data-graph-state="ready"]').waitFor({ timeout: 20_000 });
    const before = (await s.gql('{ thread(id: "research") { logLength } }')).thread.logLength;
    await page.locator(`[data-event-index="${before - 1}"]`).waitFor();
    const restarted = s.restart();
    await page.locator('[data-live="reconnecting"]').waitFor({ timeout: 20_000 });
    await restarted;
    // Committed as the server comes back, while the page may still be reconnecting: it must show
    // up exactly once, whether it arrives live or on resume.
    const [late] = await append('research', [{ kind: 'INFERENCE', payload: 'after the restart' }]);
    await page.locator('[data-live="connected"]').waitFor({ timeout: 30_000 });
    await page.locator(`[data-event-index="${before}"]`).waitFor({ timeout: 20_000 });
    await expect.poll(() => drawn(page), { timeout: 20_000 }).toContain(late);
    expect(await page.locator(`[data-event-index="${before}"]`).count()).toBe(1);
    expect(await drawn(page)).toEqual(await stateIds('research'));
    // The socket's failures while the server was down are the browser's own reports, not the page's.
    watched.errors.splice(
      0,
      watched.errors.length,
      ...watched.errors.filter((e) => !e.startsWith('WebSocket connection to')),
    );
  });

  it('has no serious or critical accessibility violation in any view', async () => {
    for (const hash of [
      '#/threads',
      '#/thread/research',
      '#/thread/secrets',
      '#/approvals',
      '#/runs',
      '#/diff/research/fresh-thread',
      '#/projection/research',
    ]) {
      await page.goto(`${s.base}/console/${hash}`);
      await page.locator('[data-live="connected"]').waitFor();
      await page.waitForLoadState('networkidle');
      expect(await axeViolations(page), hash).toEqual([]);
    }
  });

  it('sent no request to any other origin and logged no error', () => {
    expect(watched.foreign).toEqual([]);
    expect(watched.errors).toEqual([]);
  });
});
