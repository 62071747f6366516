/**
 * `npm run bench -- console`: the Weft Console in headless Chromium against a real server on a
 * fresh SQLite file (open mode, loopback). Prints the initial JavaScript the page loads
 * (gzipped, as served), the time from navigation to the first thread list, and commit-to-DOM
 * latency for 100 appends while a thread is open — measured from just before each appendNodes
 * request to the moment its timeline entry is in the page's DOM (a MutationObserver stamps it) —
 * against the same commit's threadEvents delivery to a plain graphql-ws client in this process.
 * Wall clocks: Chromium and this process run on the same machine.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createClient } from 'graphql-ws';
import { chromium } from 'playwright-core';
import { WebSocket } from 'ws';
import { loadConfig } from '../src/server/config.js';
import { startServer } from '../src/server/serve.js';
import { runLargeThreadBench } from './console-large.js';
import { fmt, percentile, printTable } from './harness.js';

const CHROMIUM = process.env.WEFT_TEST_CHROMIUM ?? '/usr/bin/chromium';
const APPENDS = 100;

export async function runConsoleBench(): Promise<void> {
  execFileSync('node', ['scripts/console-build.mjs'], { stdio: 'inherit' });
  const dist = join(process.cwd(), 'console', 'dist');
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script[^>]+src="\/console\/([^"]+)"/g)].map((m) => m[1]!);
  const preloads = [
    ...html.matchAll(/<link rel="modulepreload"[^>]+href="\/console\/([^"]+)"/g),
  ].map((m) => m[1]!);
  const initialJs = [...scripts, ...preloads].reduce(
    (sum, file) => sum + gzipSync(readFileSync(join(dist, file)), { level: 9 }).length,
    0,
  );

  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-console-'));
  const server = await startServer(
    loadConfig({
      DATABASE_URL: `file:${join(dir, 'weft.db')}`,
      PORT: '0',
      HOST: '127.0.0.1',
      WEFT_REQUEST_LOG: 'off',
    }),
    () => undefined,
  );
  const base = new URL(server.url!).origin;
  const gql = async (query: string, variables?: Record<string, unknown>) => {
    const r = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return (await r.json()) as { data: Record<string, { __typename: string }> };
  };
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--no-first-run',
    ],
  });
  const ws = createClient({
    url: `${base.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
  });
  try {
    for (let i = 0; i < 20; i++) {
      await gql(`mutation { createThread(input: { threadId: "bench-${i}" }) { __typename } }`);
    }
    // Time to first thread list: navigation start to the first row, five fresh pages.
    const firstList: number[] = [];
    for (let round = 0; round < 5; round++) {
      const page = await browser.newPage();
      const started = Date.now();
      await page.goto(`${base}/console/#/threads`);
      await page.locator('tbody tr').first().waitFor({ timeout: 30_000 });
      firstList.push(Date.now() - started);
      await page.close();
    }

    const page = await browser.newPage();
    // When each threadEvents message reaches the page's WebSocket, to split commit-to-DOM into
    // delivery and the page's own work.
    await page.addInitScript(() => {
      const arrived: Record<number, number> = {};
      (window as unknown as { arrived: Record<number, number> }).arrived = arrived;
      const Native = window.WebSocket;
      window.WebSocket = class extends Native {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols);
          this.addEventListener('message', (event) => {
            const match = /"threadEvents":\{[^}]*"index":(\d+)/.exec(String(event.data));
            if (match && arrived[Number(match[1])] === undefined)
              arrived[Number(match[1])] = Date.now();
          });
        }
      };
    });
    await page.goto(`${base}/console/#/thread/bench-0`);
    await page.locator('.graph').waitFor();
    await page.locator('[data-event-index="0"]').waitFor({ timeout: 30_000 });
    await page.evaluate(() => {
      const seen: Record<number, number> = {};
      (window as unknown as { seen: Record<number, number> }).seen = seen;
      new MutationObserver((records) => {
        const now = Date.now();
        for (const record of records) {
          for (const node of record.addedNodes) {
            const index = (node as HTMLElement).dataset?.eventIndex;
            if (index !== undefined && seen[Number(index)] === undefined) seen[Number(index)] = now;
          }
        }
      }).observe(document.body, { childList: true, subtree: true });
    });
    const delivered = new Map<number, number>();
    const stop = ws.subscribe(
      { query: 'subscription { threadEvents(threadId: "bench-0") { index } }' },
      {
        next: (r) => {
          const index = (r.data as { threadEvents: { index: number } } | undefined)?.threadEvents
            .index;
          if (index !== undefined) delivered.set(index, Date.now());
        },
        error: () => undefined,
        complete: () => undefined,
      },
    );
    await new Promise((r) => setTimeout(r, 500));
    const sent = new Map<number, number>();
    for (let i = 0; i < APPENDS; i++) {
      const at = Date.now();
      const r = (await gql(
        'mutation ($p: JSON!) { appendNodes(input: { threadId: "bench-0", nodes: [{ kind: INFERENCE, payload: $p }] }) { __typename ... on AppendNodesSuccess { logIndex } } }',
        { p: { step: i } },
      )) as unknown as { data: { appendNodes: { logIndex: number } } };
      sent.set(r.data.appendNodes.logIndex, at);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await page
      .locator(`[data-event-index="${Math.max(...sent.keys())}"]`)
      .waitFor({ timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 300));
    const seen = await page.evaluate(
      () => (window as unknown as { seen: Record<number, number> }).seen,
    );
    const arrived = await page.evaluate(
      () => (window as unknown as { arrived: Record<number, number> }).arrived,
    );
    stop();
    const dom: number[] = [];
    const plain: number[] = [];
    const socket: number[] = [];
    for (const [index, at] of sent) {
      if (arrived[index] !== undefined) socket.push(arrived[index]! - at);
      if (seen[index] !== undefined) dom.push(seen[index]! - at);
      if (delivered.has(index)) plain.push(delivered.get(index)! - at);
    }
    const p = (values: number[], q: number) =>
      values.length === 0 ? Number.NaN : percentile(values, q);
    printTable(
      `Weft Console (Chromium ${browser.version()}, ${APPENDS} appends, ${dom.length} seen in the DOM)`,
      [
        {
          measure: 'initial JavaScript, gzipped',
          value: `${fmt(initialJs / 1024, 1)} KiB`,
          target: '',
          verdict: '',
        },
        {
          measure: 'time to first thread list (median of 5)',
          value: `${fmt(p(firstList, 50))} ms`,
          target: '',
          verdict: '',
        },
        { measure: 'commit-to-DOM p50', value: `${fmt(p(dom, 50))} ms`, target: '', verdict: '' },
        {
          measure: 'commit-to-DOM p99',
          value: `${fmt(p(dom, 99))} ms`,
          target: '≤ 250 ms',
          verdict: p(dom, 99) <= 250 ? 'ok' : 'MISSED',
        },
        {
          measure: "commit to the page's WebSocket p50 / p99",
          value: `${fmt(p(socket, 50))} / ${fmt(p(socket, 99))} ms`,
          target: '',
          verdict: '',
        },
        {
          measure: 'threadEvents to a plain client p50',
          value: `${fmt(p(plain, 50))} ms`,
          target: '',
          verdict: '',
        },
        {
          measure: 'threadEvents to a plain client p99',
          value: `${fmt(p(plain, 99))} ms`,
          target: '',
          verdict: '',
        },
      ],
    );
  } finally {
    await ws.dispose();
    await browser.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  await runLargeThreadBench();
}
