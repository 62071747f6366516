/**
 * Token spend past what the API can serve: `recordUsage` (and node usage) that would take a
 * token total past 2^31 − 1 is refused with VALIDATION_FAILED before anything is written, and
 * the run, thread and run list still read back — on SQLite and on Postgres, through the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../api/support.js';
import { postgresAvailable } from '../support/services.js';

const MAX = 2_147_483_647;

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`spend-overflow: Postgres cases skipped (${pg.reason})`);
}

const READS = `query($r: ID!, $t: ID!) {
  run(id: $r) { spend { inputTokens outputTokens totalTokens calls }
    modelBreakdown { key spend { totalTokens } } }
  thread(id: $t) { logLength spend { inputTokens outputTokens totalTokens calls } }
  runs(filter: { threadId: $t }) { edges { node { id spend { totalTokens } } } }
}`;

const RECORD = `mutation($input: RecordUsageInput!) { recordUsage(input: $input) {
  __typename
  ... on RecordUsageSuccess { run { spend { totalTokens } } }
  ... on ValidationError { code issues { path message } }
} }`;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pg.available)(`token totals on ${backend}`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ backend });
    });
    afterAll(() => t?.close());

    async function startRun(threadId: string): Promise<void> {
      const created = await t.gql(
        `mutation { createThread(input: { threadId: "${threadId}" }) { __typename } }
        `,
      );
      expect(created.data.createThread.__typename).toBe('CreateThreadSuccess');
      const run = await t.gql(
        `mutation { startRun(input: { threadId: "${threadId}", goal: "g", runId: "${threadId}-r" }) { __typename } }`,
      );
      expect(run.data.startRun.__typename).toBe('StartRunSuccess');
    }

    async function readAll(threadId: string) {
      const read = await t.gql(READS, { r: `${threadId}-r`, t: threadId });
      expect(read.errors).toBeUndefined();
      return read.data;
    }

    it('accepts totals up to 2^31 − 1, refuses one token more with VALIDATION_FAILED naming the field, and every read still answers', async () => {
      await startRun('big');
      const first = await t.gql(RECORD, {
        input: { runId: 'big-r', model: 'm', inputTokens: MAX - 10, outputTokens: 5 },
      });
      expect(first.errors).toBeUndefined();
      expect(first.data.recordUsage).toEqual({
        __typename: 'RecordUsageSuccess',
        run: { spend: { totalTokens: MAX - 5 } },
      });

      const over = await t.gql(RECORD, {
        input: { runId: 'big-r', model: 'm', inputTokens: 6, outputTokens: 0 },
      });
      expect(over.errors).toBeUndefined();
      expect(over.data.recordUsage.__typename).toBe('ValidationError');
      expect(over.data.recordUsage.code).toBe('VALIDATION_FAILED');
      expect(over.data.recordUsage.issues[0].path).toContain('inputTokens');

      const overOut = await t.gql(RECORD, {
        input: { runId: 'big-r', model: 'other', inputTokens: 5, outputTokens: 1 },
      });
      expect(overOut.data.recordUsage.__typename).toBe('ValidationError');
      expect(overOut.data.recordUsage.issues[0].path).toContain('outputTokens');

      const exact = await t.gql(RECORD, {
        input: { runId: 'big-r', model: 'other', inputTokens: 3, outputTokens: 2 },
      });
      expect(exact.data.recordUsage).toEqual({
        __typename: 'RecordUsageSuccess',
        run: { spend: { totalTokens: MAX } },
      });

      const data = await readAll('big');
      expect(data.run.spend).toEqual({
        inputTokens: MAX - 7,
        outputTokens: 7,
        totalTokens: MAX,
        calls: 2,
      });
      expect(data.run.modelBreakdown).toEqual([
        { key: 'm', spend: { totalTokens: MAX - 5 } },
        { key: 'other', spend: { totalTokens: 5 } },
      ]);
      // Nothing of the refused calls was written: start, two charges.
      expect(data.thread.logLength).toBe(4);
      expect(data.thread.spend.totalTokens).toBe(MAX);
      expect(data.runs.edges).toEqual([{ node: { id: 'big-r', spend: { totalTokens: MAX } } }]);
    });

    it('refuses two calls that each fit but together pass 2^31 − 1 (the second, before writing)', async () => {
      await startRun('two');
      const half = Math.ceil(MAX / 2);
      const first = await t.gql(RECORD, {
        input: { runId: 'two-r', model: 'm', inputTokens: half, outputTokens: 0 },
      });
      expect(first.data.recordUsage.__typename).toBe('RecordUsageSuccess');
      const second = await t.gql(RECORD, {
        input: { runId: 'two-r', model: 'n', inputTokens: 0, outputTokens: half },
      });
      expect(second.errors).toBeUndefined();
      expect(second.data.recordUsage.__typename).toBe('ValidationError');
      expect(second.data.recordUsage.issues[0].path).toContain('outputTokens');
      const data = await readAll('two');
      expect(data.run.spend.totalTokens).toBe(half);
      expect(data.thread.spend.totalTokens).toBe(half);
      expect(data.thread.logLength).toBe(3);
    });

    it('refuses node usage in one append that would pass 2^31 − 1 on the thread', async () => {
      await startRun('nodes');
      const half = Math.ceil(MAX / 2);
      const appended = await t.gql(
        `mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "nodes", nodes: $n }) {
          __typename ... on ValidationError { issues { path } } } }`,
        {
          n: [
            {
              kind: 'ANSWER',
              payload: 1,
              runId: 'nodes-r',
              usage: { model: 'm', inputTokens: half, outputTokens: 0 },
            },
            {
              kind: 'ANSWER',
              payload: 2,
              usage: { model: 'm', inputTokens: half, outputTokens: 0 },
            },
          ],
        },
      );
      expect(appended.errors).toBeUndefined();
      expect(appended.data.appendNodes.__typename).toBe('ValidationError');
      expect(appended.data.appendNodes.issues[0].path).toContain('inputTokens');
      const data = await readAll('nodes');
      expect(data.thread.logLength).toBe(2);
      expect(data.thread.spend.totalTokens).toBe(0);
    });

    it('refuses an imported WorkflowState whose token totals pass 2^31 − 1, naming the field', async () => {
      await startRun('imp');
      // A state that imports cleanly but for its totals: the thread's own run, exported.
      const exported = await t.gql('{ run(id: "imp-r") { workflowState } }');
      expect(exported.errors).toBeUndefined();
      const imported = await t.gql(
        `mutation($s: JSON!) { importWorkflowState(input: { threadId: "imp", state: $s }) {
          __typename ... on ValidationError { code issues { path } } } }`,
        {
          s: {
            ...exported.data.run.workflowState,
            run_id: 'imp-big',
            total_input_tokens: MAX,
            total_output_tokens: 1,
            total_tokens_used: MAX + 1,
          },
        },
      );
      expect(imported.errors).toBeUndefined();
      expect(imported.data.importWorkflowState.__typename).toBe('ValidationError');
      expect(imported.data.importWorkflowState.issues[0].path).toContain('total_output_tokens');
      const data = await readAll('imp');
      expect(data.thread.logLength).toBe(2);
      expect(data.runs.edges).toEqual([{ node: { id: 'imp-r', spend: { totalTokens: 0 } } }]);
    });
  });
}
