/**
 * `Thread.nodes` as views of a graph use it, on SQLite and Postgres: newest first or oldest
 * first, paged forward and backward with no duplicate or gap, filtered by kind, taint, run and
 * resource key (each alone and with paging), and counted by the same filter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

interface Page {
  totalCount: number;
  edges: Array<{ node: { sequence: number } }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

const PAGE = `totalCount edges { node { sequence } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;

function suite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  let runId: string;

  beforeAll(async () => {
    t = await createTestApp({ backend });
    await t.gql('mutation { createThread(input: { threadId: "g" }) { __typename } }');
    const started = await t.gql(
      'mutation { startRun(input: { threadId: "g", goal: "g" }) { ... on StartRunSuccess { run { id } } } }',
    );
    runId = started.data.startRun.run.id;
    // Twelve more nodes: kinds alternate, every third tainted, every fourth the run's, two
    // versions of one resource key.
    const nodes = Array.from({ length: 12 }, (_, i) => {
      const parts = [`kind: ${i % 2 === 0 ? 'INFERENCE' : 'TOOL_RESULT'}`, `payload: { i: ${i} }`];
      if (i % 3 === 0) parts.push('taint: { source: "tool", toolName: "web" }');
      if (i % 4 === 0) parts.push(`runId: "${runId}"`);
      if (i === 5 || i === 9) parts.push('resourceKey: "file:a.txt"');
      return `{ ${parts.join(', ')} }`;
    });
    const r = await t.gql(
      `mutation { appendNodes(input: { threadId: "g", nodes: [${nodes.join(', ')}] }) { __typename ... on Error { message } } }`,
    );
    expect(r.data?.appendNodes.__typename, JSON.stringify(r)).toBe('AppendNodesSuccess');
  });
  afterAll(async () => {
    await t?.close();
  });

  const nodes = async (args: string): Promise<Page> => {
    const r = await t.gql(
      `{ thread(id: "g") { nodes${args === '' ? '' : `(${args})`} { ${PAGE} } } }`,
    );
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data.thread.nodes;
  };
  const sequences = (page: Page) => page.edges.map((e) => e.node.sequence);

  it('lists newest first with direction: DESC, and counts', async () => {
    const asc = await nodes('');
    const desc = await nodes('direction: DESC');
    expect(sequences(desc)).toEqual([...sequences(asc)].reverse());
    expect(desc.totalCount).toBe(asc.edges.length);
    expect((await nodes('direction: DESC, first: 3')).totalCount).toBe(asc.edges.length);
  });

  it('filters by kind, taint, run and resource key, and counts by the filter', async () => {
    // What each filter must return, worked out from the full list.
    const full = await t.gql(
      '{ thread(id: "g") { nodes { edges { node { sequence kind taint { source } run { id } resourceKey } } } } }',
    );
    const every = full.data.thread.nodes.edges.map(
      (e: {
        node: {
          sequence: number;
          kind: string;
          taint: unknown;
          run: { id: string } | null;
          resourceKey: string | null;
        };
      }) => e.node,
    );
    const pick = (test: (n: (typeof every)[number]) => boolean) =>
      every.filter(test).map((n: { sequence: number }) => n.sequence);
    for (const [args, expected] of [
      ['kinds: [TOOL_RESULT]', pick((n) => n.kind === 'TOOL_RESULT')],
      ['tainted: true', pick((n) => n.taint !== null)],
      ['tainted: false', pick((n) => n.taint === null)],
      [`runId: "${runId}"`, pick((n) => n.run?.id === runId)],
      ['resourceKey: "file:a.txt"', pick((n) => n.resourceKey === 'file:a.txt')],
      [
        'tainted: true, kinds: [INFERENCE]',
        pick((n) => n.taint !== null && n.kind === 'INFERENCE'),
      ],
    ] as const) {
      expect(expected.length, args).toBeGreaterThan(0);
      expect(expected.length, args).toBeLessThan(every.length);
      const page = await nodes(args);
      expect(sequences(page), args).toEqual(expected);
      expect(page.totalCount, args).toBe(expected.length);
      const desc = await nodes(`${args}, direction: DESC, first: 2`);
      expect(sequences(desc), args).toEqual([...expected].reverse().slice(0, 2));
      expect(desc.totalCount, args).toBe(expected.length);
    }
  });

  for (const direction of ['ASC', 'DESC']) {
    it(`pages forward and backward with no duplicate or gap (${direction})`, async () => {
      const expected = sequences(await nodes(`direction: ${direction}`));
      const forward: number[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 20; pages++) {
        const page = await nodes(
          `direction: ${direction}, first: 4${after === null ? '' : `, after: "${after}"`}`,
        );
        forward.push(...sequences(page));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(forward).toEqual(expected);
      const backward: number[][] = [];
      let before: string | null = null;
      for (let pages = 0; pages < 20; pages++) {
        const page = await nodes(
          `direction: ${direction}, last: 5${before === null ? '' : `, before: "${before}"`}`,
        );
        backward.unshift(sequences(page));
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      expect(backward.flat()).toEqual(expected);
    });
  }

  it('keeps afterSequence as a lower bound, and refuses mixed paging', async () => {
    const page = await nodes('afterSequence: 5, first: 2');
    expect(sequences(page)[0]).toBe(6);
    expect(page.pageInfo.hasPreviousPage).toBe(true);
    const r = await t.gql('{ thread(id: "g") { nodes(first: 2, last: 2) { totalCount } } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
}

describe('node lists [sqlite]', () => suite('sqlite'));
describeWithPostgres('node lists', () => suite('postgres'));
