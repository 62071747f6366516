/**
 * Console approvals gate a LangGraph agent (review item 8). The documented example
 * (examples/langgraph/approval-agent.ts) runs as shipped, two agents in processes of their own on
 * the SQLite file of a keyed `weft serve`; in headless Chromium a reviewer opens the console's
 * inbox, approves one agent's tool call with the response box left empty and rejects the other's
 * with a reason. Approved, the agent resumes (no EmptyInputError), runs its tool and answers from
 * it; rejected, the tool does not run and the agent says so — in its output and in the causal
 * nodes Weft holds for its thread.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type ConsoleServer,
  signIn,
  startConsoleServer,
  type Watched,
  watch,
} from '../console/support.js';
import { describeWithBrowser, type LaunchedBrowser, launchChromium } from '../support/browser.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** One run of the example agent: its output so far, its Weft thread once it waits, its exit. */
interface Agent {
  child: ChildProcess;
  output(): string;
  /** The Weft thread id the agent prints once it waits for the review. */
  waiting: Promise<string>;
  exited: Promise<number | null>;
}

function startAgent(databaseUrl: string, threadId: string): Agent {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'examples/langgraph/approval-agent.ts', 'find weft'],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, THREAD_ID: threadId } },
  );
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const waiting = new Promise<string>((resolve, reject) => {
    const look = () => {
      const found = /Weft thread (lg_[0-9a-f]{32})/.exec(out);
      if (found) resolve(found[1]!);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      look();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    void exited.then((code) =>
      reject(new Error(`agent ${threadId} exited (${code}) before its review:\n${out}`)),
    );
  });
  waiting.catch(() => undefined); // observed by the test that awaits it
  return { child, output: () => out, waiting, exited };
}

describeWithBrowser('LangGraph approvals from the console', () => {
  let dir: string | undefined;
  let databaseUrl: string;
  let s: ConsoleServer;
  let chromium: LaunchedBrowser;
  let page: Page;
  const watched: Watched = { foreign: [], errors: [] };
  const agents: Agent[] = [];
  /** The runs of the agents that finished, for the Runs view to show as completed. */
  const finished: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'weft-lg-console-'));
    databaseUrl = `file:${join(dir, 'weft.db')}`;
    s = await startConsoleServer(databaseUrl);
    chromium = await launchChromium({ viewport: { width: 1280, height: 900 } });
    page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
    await watch(page, s.base, watched);
    await page.goto(`${s.base}/`, { waitUntil: 'load' });
    await signIn(page, s.admin, watched);
  }, 120_000);

  afterAll(async () => {
    for (const agent of agents) if (agent.child.exitCode === null) agent.child.kill('SIGKILL');
    await chromium?.close();
    await s?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the example agent and waits until the console's inbox shows its review. */
  const agentAwaitingReview = async (threadId: string) => {
    const agent = startAgent(databaseUrl, threadId);
    agents.push(agent);
    const weftId = await agent.waiting;
    const pending = await s.gql(
      'query ($t: ID!) { approvals(filter: { state: [PENDING], threadId: $t }) { edges { node { runId } } } }',
      { t: weftId },
    );
    const [edge] = pending.approvals.edges;
    expect(edge, `a pending approval on ${weftId}`).toBeDefined();
    // The agent's engine publishes no wake-ups (plain openEngine, no Redis): the inbox shows its
    // request when loaded, as it would for a reviewer who opens it now.
    await page.goto(`${s.base}/console/#/approvals`);
    await page.reload();
    const item = page.locator(`[data-approval-run="${edge.node.runId}"]`);
    await item.waitFor({ timeout: 30_000 });
    return { agent, weftId, runId: edge.node.runId as string, item };
  };

  /** What the agent's Weft thread holds: its messages as causal nodes, and the approval. */
  const threadOf = async (weftId: string) => {
    const data = await s.gql(
      `query ($t: ID!) {
        thread(id: $t) { nodes(first: 100) { edges { node { kind payload } } } }
        approvals(filter: { state: [RESOLVED], threadId: $t }) { edges { node { decision response } } }
      }`,
      { t: weftId },
    );
    const nodes = data.thread.nodes.edges.map(
      (e: { node: { kind: string; payload: { content?: unknown } } }) => e.node,
    ) as Array<{ kind: string; payload: { content?: unknown } }>;
    return {
      toolResults: nodes.filter((n) => n.kind === 'TOOL_RESULT').map((n) => n.payload.content),
      answers: nodes.filter((n) => n.kind === 'ANSWER').map((n) => n.payload.content),
      approvals: data.approvals.edges.map((e: { node: unknown }) => e.node),
    };
  };

  it('approving with an empty response resumes the agent, and its tool runs', async () => {
    const { agent, weftId, runId, item } = await agentAwaitingReview('console-approve');
    finished.push(runId);
    await item.locator('[data-action="approve"]').click();
    await item.waitFor({ state: 'detached', timeout: 30_000 });
    expect(await agent.exited, agent.output()).toBe(0);
    expect(agent.output()).toContain('Here is what I found: 3 documents about "find weft"');
    const thread = await threadOf(weftId);
    expect(thread.approvals).toEqual([{ decision: 'approved', response: null }]);
    expect(thread.toolResults).toEqual(['3 documents about "find weft"']);
    expect(thread.answers).toEqual(['Here is what I found: 3 documents about "find weft"']);
  }, 120_000);

  it('rejecting with a reason keeps the tool from running, and the agent says so', async () => {
    const { agent, weftId, runId, item } = await agentAwaitingReview('console-reject');
    finished.push(runId);
    await item.getByLabel('Response (optional)').fill('too broad');
    await item.locator('[data-action="reject"]').click();
    await item.waitFor({ state: 'detached', timeout: 30_000 });
    expect(await agent.exited, agent.output()).toBe(0);
    const said = 'I did not run the search: the reviewer\'s decision was "rejected" (too broad).';
    expect(agent.output()).toContain(said);
    expect(agent.output()).not.toContain('documents about');
    const thread = await threadOf(weftId);
    expect(thread.approvals).toEqual([{ decision: 'rejected', response: 'too broad' }]);
    // The call is answered by the refusal alone: no search result was ever written.
    expect(thread.toolResults).toEqual([`the reviewer's decision was "rejected" (too broad)`]);
    expect(thread.answers).toEqual([said]);
  }, 120_000);

  it('shows the runs of agents that reached END as completed in the Runs view', async () => {
    expect(finished).toHaveLength(2);
    await page.goto(`${s.base}/console/#/runs`);
    await page.reload();
    for (const runId of finished) {
      const row = page.locator(`[data-run-id="${runId}"]`);
      await row.waitFor({ timeout: 30_000 });
      expect(await row.getAttribute('data-run-status')).toBe('COMPLETED');
      expect(await row.locator('.status').textContent()).toBe('completed');
    }
  }, 60_000);

  it('logged no error in the page and sent nothing to another origin', () => {
    expect(watched).toEqual({ foreign: [], errors: [] });
  });
});
