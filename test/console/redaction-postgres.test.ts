/**
 * Redaction in the console on Postgres (the main browser suite runs on SQLite): a node redacted
 * through the API reads as redacted with its reason in the graph, the details and the timeline,
 * and its payload is on no page.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate/index.js';
import { describeWithBrowser, type LaunchedBrowser, launchChromium } from '../support/browser.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import { type ConsoleServer, signIn, startConsoleServer, type Watched, watch } from './support.js';

describeWithBrowser('Weft Console', () => {
  describeWithPostgres('redaction', () => {
    let db: TestDatabase;
    let s: ConsoleServer;
    let chromium: LaunchedBrowser;
    const watched: Watched = { foreign: [], errors: [] };

    beforeAll(async () => {
      db = await createTestDatabase();
      await migrate(db.url);
      s = await startConsoleServer(db.url);
      chromium = await launchChromium({ viewport: { width: 1280, height: 900 } });
    });
    afterAll(async () => {
      await chromium?.close();
      await s?.close();
      await db?.drop();
    });

    it('shows a redacted node as redacted with its reason, never its payload', async () => {
      const secret = 'passport X7654321';
      await s.gql('mutation { createThread(input: { threadId: "pg-secrets" }) { __typename } }');
      const appended = await s.gql(
        `mutation ($input: AppendNodesInput!) { appendNodes(input: $input) {
          ... on AppendNodesSuccess { nodes { id } } } }`,
        {
          input: {
            threadId: 'pg-secrets',
            nodes: [
              { kind: 'GOAL', payload: 'Renew the passport' },
              { kind: 'TOOL_RESULT', payload: { document: secret } },
            ],
          },
        },
      );
      const leak = appended.appendNodes.nodes[1].id as string;
      const redacted = await s.gql(
        `mutation ($input: RedactNodesInput!) { redactNodes(input: $input) {
          __typename ... on RedactNodesSuccess { logLength } } }`,
        { input: { threadId: 'pg-secrets', nodeIds: [leak], reason: 'user asked to forget' } },
      );
      expect(redacted.redactNodes.__typename).toBe('RedactNodesSuccess');
      const page = chromium.context.pages()[0] ?? (await chromium.context.newPage());
      await watch(page, s.base, watched);
      await page.goto(`${s.base}/console/#/thread/pg-secrets`, { waitUntil: 'load' });
      await signIn(page, s.admin, watched);
      await page.locator('.graph[data-graph-state="ready"]').waitFor({ timeout: 20_000 });
      await page.locator(`[data-redacted-node-id="${leak}"]`).click();
      const details = page.locator(`[aria-label="Node details"] [data-node-id="${leak}"]`);
      await details.locator('[data-redacted]').waitFor({ timeout: 10_000 });
      expect(await details.locator('[data-redacted]').textContent()).toMatch(
        /^redacted user asked to forget/,
      );
      const entry = page.locator(`[data-event-index="${redacted.redactNodes.logLength - 1}"]`);
      // A listed entry's body (what its summary says) is read after the list.
      await entry.filter({ hasText: 'node redacted' }).waitFor({ timeout: 10_000 });
      expect(await entry.textContent()).toContain('1 node redacted: user asked to forget');
      const text = await page.evaluate(() => document.body.textContent ?? '');
      expect(text).not.toContain(secret);
      expect(watched).toEqual({ foreign: [], errors: [] });
    });
  });
});
