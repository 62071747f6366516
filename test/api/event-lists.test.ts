/**
 * `Thread.events` in both directions, on SQLite and Postgres: newest first with `direction:
 * DESC`, paged forward and backward with no duplicate or gap (also after `afterIndex`), and
 * counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

interface Page {
  totalCount: number;
  edges: Array<{ node: { index: number } }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

const PAGE = `totalCount edges { node { index } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;

function suite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ backend });
    await t.gql('mutation { createThread(input: { threadId: "e" }) { __typename } }');
    for (let i = 0; i < 10; i++) {
      const r = await t.gql(
        `mutation { appendNodes(input: { threadId: "e", nodes: [{ kind: SYSTEM, payload: ${i} }] }) { __typename } }`,
      );
      expect(r.data?.appendNodes.__typename).toBe('AppendNodesSuccess');
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  const events = async (args: string): Promise<Page> => {
    const r = await t.gql(
      `{ thread(id: "e") { events${args === '' ? '' : `(${args})`} { ${PAGE} } } }`,
    );
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data.thread.events;
  };
  const indices = (page: Page) => page.edges.map((e) => e.node.index);
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

  it('lists oldest first by default and newest first with direction: DESC', async () => {
    expect(indices(await events(''))).toEqual(range(0, 11));
    const newest = await events('direction: DESC, first: 3');
    expect(indices(newest)).toEqual([10, 9, 8]);
    expect(newest.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(newest.totalCount).toBe(11);
    expect((await events('afterIndex: 6')).totalCount).toBe(4);
  });

  for (const [direction, lowerArgs] of [
    ['ASC', ''],
    ['DESC', ''],
    ['ASC', ', afterIndex: 3'],
    ['DESC', ', afterIndex: 3'],
  ] as const) {
    it(`pages forward and backward with no duplicate or gap (${direction}${lowerArgs})`, async () => {
      const expected = indices(await events(`direction: ${direction}${lowerArgs}`));
      expect(expected.length).toBeGreaterThan(5);
      const forward: number[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 20; pages++) {
        const page = await events(
          `direction: ${direction}${lowerArgs}, first: 3${after === null ? '' : `, after: "${after}"`}`,
        );
        forward.push(...indices(page));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(forward).toEqual(expected);
      const backward: number[][] = [];
      let before: string | null = null;
      for (let pages = 0; pages < 20; pages++) {
        const page = await events(
          `direction: ${direction}${lowerArgs}, last: 4${before === null ? '' : `, before: "${before}"`}`,
        );
        backward.unshift(indices(page));
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      expect(backward.flat()).toEqual(expected);
    });
  }
}

describe('event lists [sqlite]', () => suite('sqlite'));
describeWithPostgres('event lists', () => suite('postgres'));
