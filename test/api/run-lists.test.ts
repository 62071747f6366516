/**
 * `runs` and `Thread.runs` as list views use them, on SQLite and Postgres: ordered by start or by
 * last change in either direction, paged forward and backward with no duplicate or gap, counted
 * (by status and thread too), and refusing cursors of another order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

interface Page {
  totalCount: number;
  edges: Array<{ node: { id: string; updatedAt: string } }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

const PAGE = `totalCount edges { node { id updatedAt } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;

function suite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  const runs: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ backend });
    for (const threadId of ['a', 'b']) {
      const r = await t.gql(
        `mutation { createThread(input: { threadId: "${threadId}" }) { __typename } }`,
      );
      expect(r.data?.createThread.__typename).toBe('CreateThreadSuccess');
    }
    // Six runs over two threads, started one after another; then later changes to some.
    for (let i = 0; i < 6; i++) {
      const r = await t.gql(
        `mutation { startRun(input: { threadId: "${i % 2 === 0 ? 'a' : 'b'}", goal: "g${i}" }) { ... on StartRunSuccess { run { id } } } }`,
      );
      runs.push(r.data.startRun.run.id);
    }
    for (const i of [1, 4]) {
      const r = await t.gql(
        `mutation($r: ID!) { dispatch(input: { runId: $r, action: { type: UPDATE_MEMORY, payload: { updates: { n: ${i} } } } }) { __typename } }`,
        { r: runs[i] },
      );
      expect(r.data?.dispatch.__typename, JSON.stringify(r)).toBe('DispatchSuccess');
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const list = async (query: string) => {
    const r = await t.gql(query);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data;
  };

  it('orders by last change, newest first, and counts', async () => {
    const data = await list(
      `{ runs(orderBy: { field: UPDATED_AT, direction: DESC }) { ${PAGE} } all: runs { ${PAGE} } }`,
    );
    const ids = (data.runs as Page).edges.map((e) => e.node.id);
    expect(ids.slice(0, 2)).toEqual([runs[4], runs[1]]);
    expect([...ids].sort()).toEqual([...runs].sort());
    expect((data.all as Page).edges.map((e) => e.node.id)).toEqual(runs);
    expect((data.runs as Page).totalCount).toBe(6);
  });

  it('filters by a time range of start and of last change, and counts by it', async () => {
    const all = await list('{ runs { edges { node { id createdAt updatedAt } } } }');
    const at = new Map<string, { createdAt: string; updatedAt: string }>(
      all.runs.edges.map((e: { node: { id: string; createdAt: string; updatedAt: string } }) => [
        e.node.id,
        e.node,
      ]),
    );
    const started = await t.gql(
      'query ($a: DateTime, $b: DateTime) { runs(filter: { createdAfter: $a, createdBefore: $b }) { totalCount edges { node { id } } } }',
      { a: at.get(runs[1]!)!.createdAt, b: at.get(runs[4]!)!.createdAt },
    );
    expect(started.errors).toBeUndefined();
    expect(started.data.runs.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([
      runs[2],
      runs[3],
    ]);
    expect(started.data.runs.totalCount).toBe(2);
    const changed = await t.gql(
      `query ($a: DateTime) { runs(filter: { updatedAfter: $a }, orderBy: { field: UPDATED_AT, direction: ASC }) {
        totalCount edges { node { id } } } }`,
      { a: at.get(runs[5]!)!.updatedAt },
    );
    expect(changed.data.runs.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([
      runs[1],
      runs[4],
    ]);
    const before = await t.gql(
      'query ($b: DateTime) { runs(filter: { updatedBefore: $b }) { totalCount } }',
      { b: at.get(runs[1]!)!.updatedAt },
    );
    expect(before.data.runs.totalCount).toBe(4);
    const bad = await t.gql('{ runs(filter: { createdAfter: "yesterday" }) { totalCount } }');
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('counts by thread and by status', async () => {
    const data = await list(`{ thread(id: "a") { runs(first: 1) { totalCount } }
      none: runs(filter: { status: [COMPLETED] }) { totalCount edges { node { id } } } }`);
    expect(data.thread.runs.totalCount).toBe(3);
    expect(data.none.totalCount).toBe(0);
  });

  for (const orderBy of [
    '{ field: UPDATED_AT, direction: DESC }',
    '{ field: CREATED_AT, direction: ASC }',
  ]) {
    it(`pages forward and backward with no duplicate or gap (${orderBy})`, async () => {
      const expected = (
        (await list(`{ runs(orderBy: ${orderBy}) { ${PAGE} } }`)).runs as Page
      ).edges.map((e) => e.node.id);
      const forward: string[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 10; pages++) {
        const page: Page = (
          await list(
            `{ runs(orderBy: ${orderBy}, first: 4${after === null ? '' : `, after: "${after}"`}) { ${PAGE} } }`,
          )
        ).runs;
        forward.push(...page.edges.map((e) => e.node.id));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(forward).toEqual(expected);
      const backward: string[][] = [];
      let before: string | null = null;
      for (let pages = 0; pages < 10; pages++) {
        const page: Page = (
          await list(
            `{ runs(orderBy: ${orderBy}, last: 4${before === null ? '' : `, before: "${before}"`}) { ${PAGE} } }`,
          )
        ).runs;
        backward.unshift(page.edges.map((e) => e.node.id));
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      expect(backward.flat()).toEqual(expected);
    });
  }

  it('refuses a cursor of another order', async () => {
    const page: Page = (
      await list(`{ runs(orderBy: { field: UPDATED_AT, direction: DESC }, first: 2) { ${PAGE} } }`)
    ).runs;
    const r = await t.gql(`{ runs(first: 2, after: "${page.pageInfo.endCursor}") { totalCount } }`);
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
}

describe('run lists [sqlite]', () => suite('sqlite'));
describeWithPostgres('run lists', () => suite('postgres'));
