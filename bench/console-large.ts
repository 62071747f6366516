/**
 * The console on a large thread (`npm run bench -- console`, `--console-nodes=N`, default
 * 100,000; 0 skips it): the thread is written through the API in batches of 1,000 (layers of 1,000 parallel
 * branches under a few runs, payloads of message-like text), the server is then restarted on the same SQLite file so
 * nothing of the thread is in its memory, and a fresh Chromium page opens it. Measured: the time
 * from navigation to the first useful paint (the thread's header and its latest timeline entries
 * on screen) and to the whole graph drawn; selecting a node (a frontier chip to its details) and
 * one time-travel step (the slider moved by a key to the graph shown at that index), p50/p95 of
 * 20 each; and the tab's JavaScript heap after loading (Chromium's own count, DevTools protocol).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { loadConfig } from '../src/server/config.js';
import { startServer } from '../src/server/serve.js';
import { fmt, percentile, printTable } from './harness.js';

const CHROMIUM = process.env.WEFT_TEST_CHROMIUM ?? '/usr/bin/chromium';
const BATCH = 1000;
const SAMPLES = 20;
/** How long the graph may take before the bench stops waiting and reports it as over. */
const GRAPH_WAIT_MS = 120_000;

const option = (name: string, fallback: number) => {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const value = arg === undefined ? fallback : Number(arg.slice(name.length + 3));
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} takes an integer ≥ 0`);
  return value;
};

type Gql = (query: string, variables?: Record<string, unknown>) => Promise<Record<string, never>>;

async function writeThread(gql: Gql, total: number): Promise<void> {
  await gql('mutation { createThread(input: { threadId: "large" }) { __typename } }');
  const runs: string[] = [];
  for (let r = 0; r < 4; r++) {
    const out = (await gql(
      `mutation { startRun(input: { threadId: "large", goal: "part ${r}" }) { ... on StartRunSuccess { run { id } } } }`,
    )) as unknown as { startRun: { run: { id: string } } };
    runs.push(out.startRun.run.id);
  }
  let previous: string[] = [];
  const started = Date.now();
  for (let start = 0; start < total; start += BATCH) {
    const size = Math.min(BATCH, total - start);
    const nodes = Array.from({ length: size }, (_, i) => {
      const n = start + i;
      const parent = previous[i % Math.max(previous.length, 1)];
      return {
        kind: n % 5 === 0 ? 'TOOL_CALL' : n % 5 === 1 ? 'TOOL_RESULT' : 'INFERENCE',
        payload:
          n % 5 === 0
            ? { name: 'search', args: { q: `step ${n}` } }
            : { role: 'ai', content: `Step ${n}: what the agent concluded from the last result.` },
        parents: parent === undefined ? [] : [parent],
        runId: runs[Math.floor((n / total) * runs.length)],
      };
    });
    const out = (await gql(
      'mutation ($nodes: [NodeInput!]!) { appendNodes(input: { threadId: "large", nodes: $nodes }) { __typename ... on AppendNodesSuccess { nodes { id } } ... on Error { message } } }',
      { nodes },
    )) as unknown as { appendNodes: { __typename: string; nodes?: Array<{ id: string }> } };
    if (out.appendNodes.nodes === undefined) throw new Error(JSON.stringify(out.appendNodes));
    // Each batch hangs off the previous one, node by node: layers of 1,000 (the frontier stays
    // one layer wide, as in an agent fanning out over parallel branches).
    previous = out.appendNodes.nodes.map((n) => n.id);
    if ((start / BATCH) % 20 === 19) {
      console.log(`  wrote ${(start + size).toLocaleString()} nodes (${Date.now() - started} ms)`);
    }
  }
}

export async function runLargeThreadBench(): Promise<void> {
  const total = option('console-nodes', 100_000);
  if (total === 0) {
    console.log('Console on a large thread: skipped (--console-nodes=0)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-console-large-'));
  const config = loadConfig({
    DATABASE_URL: `file:${join(dir, 'weft.db')}`,
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_REQUEST_LOG: 'off',
  });
  let server = await startServer(config, () => undefined);
  const gqlAt =
    (base: string): Gql =>
    async (query, variables) => {
      const r = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await r.json()) as { data?: Record<string, never>; errors?: unknown };
      if (body.errors !== undefined) throw new Error(JSON.stringify(body.errors));
      return body.data!;
    };
  let browser: Browser | undefined;
  try {
    console.log(`\nconsole: writing a ${total.toLocaleString()}-node thread…`);
    await writeThread(gqlAt(new URL(server.url!).origin), total);
    // A cold server: the thread is read from the database, not from a process that wrote it.
    await server.close();
    server = await startServer(config, () => undefined);
    const base = new URL(server.url!).origin;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error') console.log(`  page error: ${m.text().slice(0, 300)}`);
    });
    const started = Date.now();
    await page.goto(`${base}/console/#/thread/large`);
    await page.locator('[data-event-index]').first().waitFor({ timeout: GRAPH_WAIT_MS });
    const usefulMs = Date.now() - started;
    let graphMs: number | undefined;
    try {
      await page
        .locator('.graph[data-graph-state="ready"]')
        .waitFor({ timeout: GRAPH_WAIT_MS - usefulMs });
      graphMs = Date.now() - started;
    } catch {
      graphMs = undefined;
    }
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = (await cdp.send('Performance.getMetrics')).metrics;
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? Number.NaN;

    const select: number[] = [];
    const travel: number[] = [];
    let travelFailure: string | undefined;
    if (graphMs !== undefined) {
      // Timed inside the page, from the input to the next frame after the DOM shows its result:
      // what a person waits for, without the automation's own round trips.
      // A string: a function here would reach the page with the TypeScript loader's helpers.
      await page.evaluate(`window.settle = (done) => new Promise((resolve) => {
        const started = performance.now();
        const finish = () => requestAnimationFrame(() => resolve(performance.now() - started));
        if (done()) return finish();
        const observer = new MutationObserver(() => {
          if (!done()) return;
          observer.disconnect();
          finish();
        });
        observer.observe(document.body, { subtree: true, childList: true, attributes: true });
      })`);
      const chips = await page
        .locator('[data-frontier-id]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-frontier-id')!));
      for (let i = 0; i < SAMPLES && chips.length > 0; i++) {
        const id = chips[i % chips.length]!;
        select.push(
          await page.evaluate((id) => {
            const w = window as unknown as { settle: (done: () => boolean) => Promise<number> };
            const settled = w.settle(
              () => document.querySelector(`.details [data-node-id="${id}"]`) !== null,
            );
            (document.querySelector(`[data-frontier-id="${id}"]`) as HTMLElement).click();
            return settled;
          }, id),
        );
      }
      const length = Number(await page.locator('#travel').getAttribute('max'));
      for (let i = 1; i <= Math.min(SAMPLES, length); i++) {
        const k = length - i;
        const ms = await page.evaluate(async (k) => {
          const w = window as unknown as { settle: (done: () => boolean) => Promise<number> };
          const slider = document.querySelector('#travel') as HTMLInputElement | null;
          if (slider === null) return -2;
          const settled = w.settle(() => slider.dataset.shownIndex === String(k));
          slider.value = String(k);
          slider.dispatchEvent(new Event('input', { bubbles: true }));
          return Promise.race([
            settled,
            new Promise<number>((r) => setTimeout(() => r(-1), 20_000)),
          ]);
        }, k);
        if (ms === -2) {
          const error = page.locator('.error');
          travelFailure = `the thread view is gone: ${(await error.count()) > 0 ? await error.first().textContent() : 'no slider'}`;
          break;
        }
        if (ms < 0) {
          const alert = page.locator('[role="alert"]');
          travelFailure =
            (await alert.count()) > 0
              ? ((await alert.first().textContent()) ?? 'error')
              : `index ${k} not shown within 20 s`;
          break;
        }
        travel.push(ms);
      }
    }
    const p = (values: number[], q: number) =>
      values.length === 0 ? Number.NaN : percentile(values, q);
    const over = `> ${GRAPH_WAIT_MS / 1000} s`;
    printTable(`Weft Console on a ${total.toLocaleString()}-node thread (cold server, fresh tab)`, [
      {
        measure: 'first useful paint (header and timeline)',
        value: `${fmt(usefulMs)} ms`,
        target: '≤ 1,500 ms',
        verdict: usefulMs <= 1500 ? 'ok' : 'MISSED',
      },
      {
        measure: 'whole graph drawn',
        value: graphMs === undefined ? over : `${fmt(graphMs)} ms`,
        target: '≤ 1,500 ms',
        verdict: graphMs !== undefined && graphMs <= 1500 ? 'ok' : 'MISSED',
      },
      {
        measure: 'select a node, p50 / p95',
        value: `${fmt(p(select, 50))} / ${fmt(p(select, 95))} ms`,
        target: 'p95 ≤ 100 ms',
        verdict: p(select, 95) <= 100 ? 'ok' : 'MISSED',
      },
      {
        measure: 'time-travel step, p50 / p95',
        value:
          travelFailure === undefined
            ? `${fmt(p(travel, 50))} / ${fmt(p(travel, 95))} ms`
            : `failed: ${travelFailure.slice(0, 80)}`,
        target: 'p95 ≤ 100 ms',
        verdict: travelFailure === undefined && p(travel, 95) <= 100 ? 'ok' : 'MISSED',
      },
      {
        measure: 'tab JavaScript heap after loading',
        value: `${fmt(heap / 2 ** 20)} MiB`,
        target: '≤ 300 MB',
        verdict: heap <= 300e6 ? 'ok' : 'MISSED',
      },
    ]);
  } finally {
    await browser?.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
