/**
 * `threads` as list views use it, on SQLite and Postgres: ordered by creation or by last
 * activity in either direction, paged forward and backward with no duplicate or gap, counted,
 * filtered by last activity, and refusing cursors of another order or mixed paging arguments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

interface ThreadRow {
  id: string;
  createdAt: string;
  updatedAt: string;
}

interface Page {
  totalCount: number;
  edges: Array<{ cursor: string; node: ThreadRow }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

const PAGE = `totalCount edges { cursor node { id createdAt updatedAt } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;

function suite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  /** Every thread with its times, as the API reports them. */
  let all: ThreadRow[];

  beforeAll(async () => {
    t = await createTestApp({ backend });
    // Seven threads, created one after another (the test clock ticks a second per reading);
    // then entries on some of them in another order, so last activity orders them differently.
    for (let i = 0; i < 7; i++) {
      const r = await t.gql(
        `mutation { createThread(input: { threadId: "t${i}" }) { __typename } }`,
      );
      expect(r.data?.createThread.__typename).toBe('CreateThreadSuccess');
    }
    for (const i of [2, 5, 0, 2]) {
      const r = await t.gql(
        `mutation { appendNodes(input: { threadId: "t${i}", nodes: [{ kind: SYSTEM, payload: ${i} }] }) { __typename } }`,
      );
      expect(r.data?.appendNodes.__typename).toBe('AppendNodesSuccess');
    }
    const r = await t.gql<{ threads: Page }>(`{ threads(first: 100) { ${PAGE} } }`);
    all = r.data!.threads.edges.map((e) => e.node);
  });
  afterAll(async () => {
    await t?.close();
  });

  const list = async (args: string) => {
    const r = await t.gql<{ threads: Page }>(`{ threads(${args}) { ${PAGE} } }`);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data!.threads;
  };

  const byUpdatedDesc = () =>
    [...all]
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.id.localeCompare(a.id))
      .map((x) => x.id);

  it('lists oldest first by default and counts every thread', async () => {
    expect(all.map((x) => x.id)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
    expect((await list('first: 2')).totalCount).toBe(7);
  });

  it('orders by last activity, newest first, one argument away', async () => {
    const page = await list('orderBy: { field: UPDATED_AT, direction: DESC }');
    const ids = page.edges.map((e) => e.node.id);
    expect(ids).toEqual(byUpdatedDesc());
    expect(ids.slice(0, 3)).toEqual(['t2', 't0', 't5']);
    const newestCreated = await list('orderBy: { field: CREATED_AT, direction: DESC }, first: 3');
    expect(newestCreated.edges.map((e) => e.node.id)).toEqual(['t6', 't5', 't4']);
  });

  for (const orderBy of [
    '{ field: UPDATED_AT, direction: DESC }',
    '{ field: UPDATED_AT, direction: ASC }',
    '{ field: CREATED_AT, direction: DESC }',
  ]) {
    it(`pages forward and backward with no duplicate or gap (${orderBy})`, async () => {
      const expected = (await list(`orderBy: ${orderBy}`)).edges.map((e) => e.node.id);
      // Forward, two at a time.
      const forward: string[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 10; pages++) {
        const page: Page = await list(
          `orderBy: ${orderBy}, first: 2${after === null ? '' : `, after: "${after}"`}`,
        );
        forward.push(...page.edges.map((e) => e.node.id));
        expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(forward).toEqual(expected);
      // Backward from the end, three at a time: each page keeps the list's order.
      const backward: string[][] = [];
      let before: string | null = null;
      for (let pages = 0; pages < 10; pages++) {
        const page: Page = await list(
          `orderBy: ${orderBy}, last: 3${before === null ? '' : `, before: "${before}"`}`,
        );
        backward.unshift(page.edges.map((e) => e.node.id));
        expect(page.pageInfo.hasNextPage).toBe(before !== null);
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      expect(backward.flat()).toEqual(expected);
      expect(backward[backward.length - 1]).toEqual(expected.slice(-3));
    });
  }

  it('filters by last activity, and counts what the filter holds', async () => {
    const touched = all.filter((x) => x.updatedAt !== x.createdAt);
    const since = [...all].sort((a, b) => a.createdAt.localeCompare(b.createdAt)).at(-1)!.createdAt;
    const page = await list(`filter: { updatedAfter: "${since}" }`);
    expect(page.edges.map((e) => e.node.id).sort()).toEqual(touched.map((x) => x.id).sort());
    expect(page.totalCount).toBe(touched.length);
    expect(touched.length).toBe(3);
  });

  it('refuses a cursor of another order and mixed paging arguments, with the argument named', async () => {
    const page = await list('orderBy: { field: UPDATED_AT, direction: DESC }, first: 2');
    const cursor = page.pageInfo.endCursor!;
    for (const [args, path] of [
      [`first: 2, after: "${cursor}"`, '$.after'],
      [`orderBy: { field: UPDATED_AT }, first: 2, after: "${cursor}"`, '$.after'],
      ['first: 2, last: 2', '$.last'],
      [`last: 2, after: "${cursor}"`, '$.after'],
      [`before: "${cursor}"`, '$.before'],
      ['last: -1', '$.last'],
    ] as const) {
      const r = await t.gql(`{ threads(${args}) { edges { cursor } } }`);
      expect(r.errors?.[0]?.extensions?.code, args).toBe('BAD_USER_INPUT');
      expect(JSON.stringify(r.errors?.[0]?.extensions), args).toContain(path);
    }
  });
}

/** `hasPendingApproval`: threads with a run waiting for a human, and those without. */
function pendingSuite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
    for (const id of ['p0', 'p1', 'p2', 'p3']) {
      await t.gql(`mutation { createThread(input: { threadId: "${id}" }) { __typename } }`);
    }
    // Runs on p1 and p3; only p1's asks for approval, p3's is still running.
    for (const id of ['p1', 'p3']) {
      const started = await t.gql(
        `mutation { startRun(input: { threadId: "${id}", goal: "g" }) { ... on StartRunSuccess { run { id } } } }`,
      );
      if (id === 'p3') continue;
      const r = await t.gql(
        `mutation($r: ID!) { dispatch(input: { runId: $r, action: { type: REQUEST_HUMAN_INPUT,
          payload: { pending_approval: { question: "ok?" } } } }) { __typename } }`,
        { r: started.data.startRun.run.id },
      );
      expect(r.data?.dispatch.__typename, JSON.stringify(r)).toBe('DispatchSuccess');
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists and counts the threads waiting for a human, and the others', async () => {
    const r = await t.gql(`{
      waiting: threads(filter: { hasPendingApproval: true }) { totalCount edges { node { id } } }
      others: threads(filter: { hasPendingApproval: false }) { totalCount edges { node { id } } }
    }`);
    expect(r.errors).toBeUndefined();
    expect(r.data.waiting.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(['p1']);
    expect(r.data.waiting.totalCount).toBe(1);
    expect(r.data.others.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([
      'p0',
      'p2',
      'p3',
    ]);
    expect(r.data.others.totalCount).toBe(3);
  });
}

describe('thread lists [sqlite]', () => {
  suite('sqlite');
  pendingSuite('sqlite');
});
describeWithPostgres('thread lists', () => {
  suite('postgres');
  pendingSuite('postgres');
});
