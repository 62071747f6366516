/**
 * A conversation an instrumented agent sent over OTLP shows in the console as messages: the OTel
 * SDK's exporter writes an agent turn into a real keyed `weft serve`, and headless Chromium opens
 * the thread: its conversation shows the assistant's calls and answer, and its last inference
 * node's details list its input and output messages.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { emitAgentTurn, otlpClient } from '../otlp/support.js';
import { describeWithBrowser, type LaunchedBrowser, launchChromium } from '../support/browser.js';
import {
  axeViolations,
  type ConsoleServer,
  signIn,
  startConsoleServer,
  type Watched,
  watch,
} from './support.js';

describeWithBrowser('Weft Console on a conversation sent over OTLP', () => {
  let s: ConsoleServer;
  let chromium: LaunchedBrowser;
  let page: Page;
  const watched: Watched = { foreign: [], errors: [] };

  beforeAll(async () => {
    s = await startConsoleServer();
    const client = otlpClient(s.base, {
      encoding: 'protobuf',
      headers: { authorization: `Bearer ${s.admin}` },
    });
    emitAgentTurn(client.tracer, { conversationId: 'otel-chat' });
    await client.close();
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

  it('lists an inference node’s input and output messages', async () => {
    const thread = await s.gql(
      '{ thread(id: "otel-chat") { nodes(first: 10, kinds: [INFERENCE]) { edges { node { id } } } } }',
    );
    const reply: string = thread.thread.nodes.edges[1].node.id;
    await page.goto(`${s.base}/console/#/thread/otel-chat`);
    await signIn(page, s.admin, watched);
    await page.locator('.graph[data-graph-state="ready"]').waitFor({ timeout: 20_000 });
    await page.locator(`[data-frontier-id="${reply}"]`).click();
    const details = page.locator(`[aria-label="Node details"] [data-node-id="${reply}"]`);
    await details.locator('[data-messages]').waitFor({ timeout: 10_000 });
    expect(await details.getByRole('list', { name: 'Input messages' }).textContent()).toBe(
      'tool tool result: {"temperature":21}',
    );
    expect(await details.getByRole('list', { name: 'Output messages' }).textContent()).toBe(
      'assistant It is 21°C in Paris.',
    );
    // The conversation beside the graph reads the same nodes as messages.
    const said = page.locator('li[data-message-kind="INFERENCE"]');
    await expect.poll(() => said.count()).toBe(2);
    expect(await said.nth(0).locator('.calls').textContent()).toBe('Calls: get_weather');
    expect(await said.nth(1).locator('.markdown').textContent()).toContain('It is 21°C in Paris.');
    expect(await axeViolations(page)).toEqual([]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreign).toEqual([]);
  });
});
