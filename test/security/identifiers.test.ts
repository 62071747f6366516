/**
 * Identifiers and text that could not be stored and read back exactly — a lone UTF-16 surrogate
 * (both databases store UTF-8) or a NUL (Postgres text refuses it) — are refused with a typed
 * VALIDATION_FAILED naming the field, the same way on SQLite and Postgres, through the server.
 * Nothing is written, and every later read still answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../api/support.js';
import { postgresAvailable } from '../support/services.js';

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`identifiers: Postgres cases skipped (${pg.reason})`);
}

const LONE = 'lone\ud800surrogate';
const NUL = 'nul\u0000byte';

const REFUSAL = `... on ValidationError { code issues { path message } }`;
const CREATE = `mutation($input: CreateThreadInput!) { createThread(input: $input) {
  __typename ${REFUSAL} } }`;
const APPEND = `mutation($input: AppendNodesInput!) { appendNodes(input: $input) {
  __typename ${REFUSAL} } }`;
const REMEMBER = `mutation($input: RememberInput!) { remember(input: $input) {
  __typename ${REFUSAL} } }`;
const START = `mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename ${REFUSAL} } }`;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pg.available)(`identifiers on ${backend}`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ backend });
      const made = await t.gql(CREATE, { input: { threadId: 'ok' } });
      expect(made.data.createThread.__typename).toBe('CreateThreadSuccess');
    });
    afterAll(() => t?.close());

    function expectRefused(
      result: { __typename: string; code: string; issues: Array<{ path: string }> },
      field: string,
    ) {
      expect(result.__typename).toBe('ValidationError');
      expect(result.code).toBe('VALIDATION_FAILED');
      expect(result.issues[0]!.path).toContain(field);
    }

    async function threadIds(): Promise<string[]> {
      const read = await t.gql('{ threads { edges { node { id } } } }');
      expect(read.errors).toBeUndefined();
      return read.data.threads.edges.map((e: { node: { id: string } }) => e.node.id);
    }

    it('refuses a thread id with a lone surrogate or a NUL, and creates nothing', async () => {
      for (const threadId of [LONE, NUL]) {
        const created = await t.gql(CREATE, { input: { threadId } });
        expect(created.errors).toBeUndefined();
        expectRefused(created.data.createThread, 'threadId');
      }
      expect(await threadIds()).toEqual(['ok']);
    });

    it('refuses a lone surrogate or a NUL in a resource key, a memory key, a goal and an idempotency key', async () => {
      for (const bad of [LONE, NUL]) {
        const node = { kind: 'GOAL', payload: { text: 'x' }, resourceKey: bad };
        const appended = await t.gql(APPEND, { input: { threadId: 'ok', nodes: [node] } });
        expect(appended.errors).toBeUndefined();
        expectRefused(appended.data.appendNodes, 'resourceKey');

        const remembered = await t.gql(REMEMBER, {
          input: { threadId: 'ok', type: 'memory', key: bad, content: 1 },
        });
        expect(remembered.errors).toBeUndefined();
        expectRefused(remembered.data.remember, 'key');

        const started = await t.gql(START, { input: { threadId: 'ok', goal: bad } });
        expect(started.errors).toBeUndefined();
        expectRefused(started.data.startRun, 'goal');

        const keyed = await t.gql(CREATE, { input: { threadId: 'fresh', idempotencyKey: bad } });
        expect(keyed.errors).toBeUndefined();
        expectRefused(keyed.data.createThread, 'idempotencyKey');
      }
      const log = await t.gql('{ thread(id: "ok") { logLength } }');
      expect(log.data.thread.logLength).toBe(1);
      expect(await threadIds()).toEqual(['ok']);
    });

    it('refuses a lone surrogate or a NUL inside a payload, naming its path', async () => {
      for (const bad of [LONE, NUL]) {
        const node = { kind: 'GOAL', payload: { deep: [{ text: bad }] } };
        const appended = await t.gql(APPEND, { input: { threadId: 'ok', nodes: [node] } });
        expect(appended.errors).toBeUndefined();
        expectRefused(appended.data.appendNodes, 'payload.deep[0].text');
      }
    });

    it('answers BAD_USER_INPUT, not an internal error, for such a thread id or cursor on a read', async () => {
      for (const bad of [LONE, NUL]) {
        const read = await t.gql('query($id: ID!) { thread(id: $id) { id } }', { id: bad });
        expect(read.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(read.errors?.[0]?.message).toContain('$.id');

        const cursor = Buffer.from(
          JSON.stringify({ k: 'threads', v: { c: '2026-03-01T00:00:00.000Z', id: bad } }),
          'utf8',
        ).toString('base64url');
        const page = await t.gql(
          'query($after: String) { threads(after: $after) { edges { node { id } } } }',
          {
            after: cursor,
          },
        );
        expect(page.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      }
    });

    it('answers reads by such a run id, node id or filter without an internal error', async () => {
      for (const bad of [LONE, NUL]) {
        const run = await t.gql('query($v: ID!) { run(id: $v) { id } }', { v: bad });
        expect(run.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        const inThread = await t.gql('query($v: ID!) { run(id: "r", threadId: $v) { id } }', {
          v: bad,
        });
        expect(inThread.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

        const node = await t.gql(
          'query($v: ID!) { thread(id: "ok") { causalNode(id: $v) { id } } }',
          {
            v: bad,
          },
        );
        expect(node.errors?.[0]?.extensions?.code ?? 'none').not.toBe('INTERNAL_SERVER_ERROR');
        expect(node.data?.thread?.causalNode ?? null).toBeNull();

        const runs = await t.gql(
          'query($v: ID) { runs(filter: { threadId: $v }) { edges { cursor } } }',
          {
            v: bad,
          },
        );
        expect(runs.errors).toBeUndefined();
        expect(runs.data.runs.edges).toEqual([]);
        const forks = await t.gql(
          'query($v: ID) { threads(filter: { forkedFrom: $v }) { edges { cursor } } }',
          { v: bad },
        );
        expect(forks.errors).toBeUndefined();
        expect(forks.data.threads.edges).toEqual([]);
      }
    });

    it('refuses startRun with an empty or blank goal', async () => {
      for (const goal of ['', '   ']) {
        const started = await t.gql(START, { input: { threadId: 'ok', goal } });
        expect(started.errors).toBeUndefined();
        expectRefused(started.data.startRun, 'goal');
      }
    });
  });
}
