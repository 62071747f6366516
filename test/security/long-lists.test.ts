/**
 * Lists without `first` cannot make one request read a whole wide graph: `frontier` and
 * `children` answer at most a page (1,000 nodes) and refuse a longer list with a typed error that
 * names the paged field, which serves it in pages. On SQLite and Postgres, on a thread and on a
 * fork of it (whose nodes are read through the source's rows).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../api/support.js';
import { postgresAvailable } from '../support/services.js';

/** One more than a list answers. */
const LEAVES = 1_001;

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`long-lists: Postgres cases skipped (${pg.reason})`);
}

interface Page {
  totalCount: number;
  edges: Array<{ cursor: string; node: { id: string; sequence: number } }>;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string | null };
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pg.available)(`long lists on ${backend}`, () => {
    let t: TestApp;
    let root: string;
    const leaves: string[] = [];

    beforeAll(async () => {
      t = await createTestApp({ backend });
      const append = async (nodes: unknown[]) => {
        const res = await t.gql(
          'mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "wide", nodes: $n }) { ... on AppendNodesSuccess { nodes { id } } } }',
          { n: nodes },
        );
        expect(res.errors).toBeUndefined();
        return (res.data.appendNodes.nodes as Array<{ id: string }>).map((n) => n.id);
      };
      await t.gql('mutation { createThread(input: { threadId: "wide" }) { __typename } }');
      root = (await append([{ kind: 'SYSTEM', payload: 'root' }]))[0]!;
      // Every leaf names the root as its parent: the root has LEAVES children, and the leaves
      // are the frontier.
      for (let from = 0; from < LEAVES; from += 500) {
        const count = Math.min(500, LEAVES - from);
        const batch = Array.from({ length: count }, (_, k) => ({
          kind: 'ANSWER',
          payload: { i: from + k },
          parents: [root],
        }));
        leaves.push(...(await append(batch)));
      }
      const fork = await t.gql(
        'mutation { forkThread(input: { threadId: "wide", newThreadId: "fork" }) { __typename } }',
      );
      expect(fork.data.forkThread.__typename).toBe('ForkThreadSuccess');
    }, 120_000);
    afterAll(() => t?.close());

    for (const threadId of ['wide', 'fork']) {
      it(`${threadId}: frontier and children over a page are refused, naming the paged field`, async () => {
        const frontier = await t.gql(`{ thread(id: "${threadId}") { frontier { id } } }`);
        expect(frontier.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(frontier.errors?.[0]?.message).toContain(`has ${LEAVES} nodes`);
        expect(frontier.errors?.[0]?.message).toContain('frontierNodes(first');
        const children = await t.gql(
          `{ causalNode(threadId: "${threadId}", id: "${root}") { children { id } } }`,
        );
        expect(children.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(children.errors?.[0]?.message).toContain('childNodes(first');
        // Lists within the cap still answer: a leaf's parents, and a leaf's (empty) children.
        const small = await t.gql(
          `{ causalNode(threadId: "${threadId}", id: "${leaves[0]}") { parents { id } children { id } } }`,
        );
        expect(small.errors).toBeUndefined();
        expect(small.data.causalNode).toEqual({ parents: [{ id: root }], children: [] });
      });

      it(`${threadId}: frontierNodes pages through every head in frontier order`, async () => {
        const seen: string[] = [];
        let after: string | null = null;
        let pages = 0;
        for (;;) {
          const res: { data?: { thread: { frontierNodes: Page } } | null; errors?: unknown } =
            await t.gql(
              'query($t: ID!, $after: String) { thread(id: $t) { frontierNodes(first: 400, after: $after) { totalCount edges { cursor node { id sequence } } pageInfo { hasNextPage hasPreviousPage endCursor } } } }',
              { t: threadId, after },
            );
          expect(res.errors).toBeUndefined();
          const page: Page = res.data!.thread.frontierNodes;
          expect(page.totalCount).toBe(LEAVES);
          expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
          seen.push(...page.edges.map((e) => e.node.id));
          pages++;
          if (!page.pageInfo.hasNextPage) break;
          after = page.pageInfo.endCursor;
        }
        expect(pages).toBe(Math.ceil(LEAVES / 400));
        expect(seen).toEqual(leaves);
        const over = await t.gql(
          `{ thread(id: "${threadId}") { frontierNodes(first: 1001) { totalCount } } }`,
        );
        expect(over.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      });

      it(`${threadId}: childNodes pages through every child, oldest first, both ways`, async () => {
        const query =
          'query($t: ID!, $id: ID!, $first: Int, $after: String, $last: Int, $before: String) { causalNode(threadId: $t, id: $id) { childNodes(first: $first, after: $after, last: $last, before: $before) { totalCount edges { cursor node { id sequence } } pageInfo { hasNextPage hasPreviousPage endCursor } } } }';
        const page = async (args: Record<string, unknown>) => {
          const res = await t.gql<{ causalNode: { childNodes: Page } }>(query, {
            t: threadId,
            id: root,
            ...args,
          });
          expect(res.errors).toBeUndefined();
          return res.data!.causalNode.childNodes;
        };
        const first = await page({ first: 1000 });
        expect(first.totalCount).toBe(LEAVES);
        expect(first.edges).toHaveLength(1000);
        expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
        const rest = await page({ first: 1000, after: first.pageInfo.endCursor });
        expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
        const ids = [...first.edges, ...rest.edges].map((e) => e.node.id);
        expect(ids).toEqual(leaves);
        const sequences = [...first.edges, ...rest.edges].map((e) => e.node.sequence);
        expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
        const last = await page({ last: 2 });
        expect(last.edges.map((e) => e.node.id)).toEqual(leaves.slice(-2));
        expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
        const before = await page({ last: 1, before: last.edges[0]!.cursor });
        expect(before.edges.map((e) => e.node.id)).toEqual(leaves.slice(-3, -2));
      });
    }
  });
}
