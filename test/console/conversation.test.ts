/**
 * A thread read as a conversation, in headless Chromium against a real keyed server: a LangGraph
 * agent checkpointed by WeftSaver (in this process, on the server's SQLite file) shows as
 * messages — the user's Markdown rendered (its HTML as text), the assistant's tool call with
 * its arguments folded, the tool's JSON result folded, the answer with its token usage — beside
 * the causal graph; a message selects its node; a message appended later arrives live.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import { describeWithBrowser, type LaunchedBrowser, launchChromium } from '../support/browser.js';
import {
  axeViolations,
  type ConsoleServer,
  signIn,
  startConsoleServer,
  type Watched,
  watch,
} from './support.js';

const USER_TEXT = 'Find **weft** docs, use `search`. <img src=x onerror="window.pwned=1">';

/** One scripted turn: a tool call, its JSON result, and an answer with usage. */
function agent(state: typeof MessagesAnnotation.State) {
  if (state.messages.length > 1) return {};
  return {
    messages: [
      new AIMessage({
        id: 'ai-1',
        content: 'Searching.',
        tool_calls: [
          { id: 'call-1', name: 'search', args: { query: 'weft docs' }, type: 'tool_call' },
        ],
      }),
      new ToolMessage({
        id: 'tool-1',
        tool_call_id: 'call-1',
        content: JSON.stringify({ hits: [{ title: 'Weft', url: 'https://example.com/weft' }] }),
      }),
      new AIMessage({
        id: 'ai-2',
        content: 'Here are the docs:\n\n- [Weft](https://example.com/weft)',
        usage_metadata: { input_tokens: 120, output_tokens: 34, total_tokens: 154 },
      }),
    ],
  };
}

describeWithBrowser('Weft Console conversation view', () => {
  let dir: string;
  let s: ConsoleServer;
  let chromium: LaunchedBrowser;
  let page: Page;
  let threadId: string;
  const watched: Watched = { foreign: [], errors: [] };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'weft-conversation-'));
    const url = `file:${join(dir, 'weft.db')}`;
    s = await startConsoleServer(url);
    const engine = await openEngine(url);
    const saver = new WeftSaver({ engine });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', agent)
      .addEdge(START, 'agent')
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: 'chat' } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'h-1', content: USER_TEXT })] }, config);
    threadId = saver.weftThreadId(config);
    await engine.close();
    chromium = await launchChromium({ viewport: { width: 1400, height: 900 } });
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    await watch(page, s.base, watched);
    await page.goto(`${s.base}/console/`, { waitUntil: 'load' });
    await signIn(page, s.admin, watched);
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows a WeftSaver thread as messages, beside its causal graph', async () => {
    await page.goto(`${s.base}/console/#/thread/${threadId}`);
    const messages = page.locator('.conversation .messages > li.message');
    await messages.nth(4).waitFor({ timeout: 15_000 });
    expect(
      await messages.evaluateAll((els) => els.map((e) => e.getAttribute('data-message-kind'))),
    ).toEqual(['GOAL', 'INFERENCE', 'TOOL_CALL', 'TOOL_RESULT', 'ANSWER']);
    const user = messages.nth(0);
    expect(await user.locator('strong').allTextContents()).toContain('weft');
    expect(await user.locator('code').allTextContents()).toContain('search');
    // The message's HTML is text: no element, no handler ran.
    expect(await user.locator('.markdown img').count()).toBe(0);
    expect(await user.locator('.markdown').textContent()).toContain('<img src=x');
    expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
    // The tool call's arguments and the tool's JSON result are folded.
    const call = messages.nth(2);
    expect(await call.locator('summary').textContent()).toBe('search(…)');
    await call.locator('summary').click();
    expect(await call.locator('pre').textContent()).toContain('"query": "weft docs"');
    expect(await messages.nth(3).locator('summary').textContent()).toBe('JSON');
    // The answer: its link rendered, its usage shown.
    const answer = messages.nth(4);
    expect(await answer.locator('.markdown a').getAttribute('href')).toBe(
      'https://example.com/weft',
    );
    expect(await answer.locator('[data-usage]').textContent()).toContain('120 in · 34 out');
    expect(await page.locator('.thread-grid.with-conversation .graph-panel').count()).toBe(1);
    // The run WeftSaver started for the invocation shows where it began, not as a user message.
    expect(await page.locator('.conversation .run-start').textContent()).toContain(
      'started: LangGraph thread chat',
    );
    expect(await axeViolations(page)).toEqual([]);
  });

  it('selects a message’s node in the graph', async () => {
    const answer = page.locator('.conversation [data-message-kind="ANSWER"]');
    const nodeId = await answer.getAttribute('data-node-id');
    await answer.getByRole('button', { name: 'in the graph' }).click();
    await page.locator(`.conversation li.selected[data-node-id="${nodeId}"]`).waitFor();
    await page.locator(`.details [data-node-id="${nodeId}"]`).waitFor({ timeout: 10_000 });
  });

  it('shows a message appended later, live', async () => {
    const r = await s.gql(
      `mutation ($input: AppendNodesInput!) { appendNodes(input: $input) { __typename } }`,
      {
        input: {
          threadId,
          nodes: [{ kind: 'ANSWER', payload: { role: 'ai', content: 'One more thing.' } }],
        },
      },
    );
    expect(r.appendNodes.__typename).toBe('AppendNodesSuccess');
    await page.locator('.conversation .messages > li.message').nth(5).waitFor({ timeout: 15_000 });
    expect(
      await page.locator('.conversation .messages > li.message').nth(5).textContent(),
    ).toContain('One more thing.');
  });

  it('shows a message redacted while the page is open as redacted, never its content', async () => {
    const result = page.locator('.conversation [data-message-kind="TOOL_RESULT"]');
    const nodeId = await result.getAttribute('data-node-id');
    const r = await s.gql(
      `mutation ($input: RedactNodesInput!) { redactNodes(input: $input) { __typename } }`,
      { input: { threadId, nodeIds: [nodeId], reason: 'leaked url' } },
    );
    expect(r.redactNodes.__typename).toBe('RedactNodesSuccess');
    await result.locator('[data-redacted="true"]').waitFor({ timeout: 15_000 });
    expect(await result.textContent()).toContain('leaked url');
    expect(await result.textContent()).not.toContain('hits');
  });

  it('has a dark theme, from the system or chosen, that stays readable', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${s.base}/console/#/thread/${threadId}`);
    await page.locator('.conversation .messages > li.message').first().waitFor({ timeout: 15_000 });
    const background = () =>
      page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(await background()).toBe('rgb(11, 17, 32)');
    expect(await axeViolations(page)).toEqual([]);
    // Chosen in the header, the theme overrides the system's and survives a reload.
    const toggle = page.locator('button.theme');
    await toggle.click(); // system → dark
    await toggle.click(); // dark → light
    expect(await toggle.getAttribute('data-theme-choice')).toBe('light');
    await page.reload();
    await page.locator('.conversation .messages > li.message').first().waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    expect(await background()).toBe('rgb(248, 250, 252)');
    expect(await axeViolations(page)).toEqual([]);
    await toggle.click(); // light → system
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('logged no error in the page and sent nothing to another origin', () => {
    expect(watched).toEqual({ foreign: [], errors: [] });
  });
});
