/**
 * Pages at the documented maximum (first: 1,000) on threads larger than that, on SQLite and on
 * Postgres, through the server: every query built with one bound value per key (node pages with
 * their parent edges, children, resource versions, resource heads, runs by id, threads by id)
 * must stay under the driver's bound-parameter limit however many keys one request gathers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../api/support.js';
import { postgresAvailable } from '../support/services.js';

const NODES = 1_200;
const KEYS = 600;
const RUNS = 600;
const BATCH = 100;

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`large-pages: Postgres cases skipped (${pg.reason})`);
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pg.available)(`large pages on ${backend}`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ backend });
      const ok = async (query: string, variables?: Record<string, unknown>) => {
        const res = await t.gql(query, variables);
        expect(res.errors).toBeUndefined();
        const [payload] = Object.values(res.data) as Array<{ __typename: string }>;
        expect(payload!.__typename).toMatch(/Success$/);
      };
      await ok('mutation { createThread(input: { threadId: "big" }) { __typename } }');
      for (let r = 0; r < RUNS; r++) {
        await ok(
          `mutation { startRun(input: { threadId: "big", goal: "g", runId: "r${r}" }) { __typename } }`,
        );
      }
      // A chain: every node's parent is the one before (the default frontier), and each
      // resource key gets two versions.
      for (let from = 0; from < NODES; from += BATCH) {
        const nodes = Array.from({ length: BATCH }, (_, k) => {
          const i = from + k;
          return {
            kind: 'ANSWER',
            payload: { i },
            resourceKey: `k${i % KEYS}`,
            runId: `r${i % RUNS}`,
          };
        });
        await ok(
          'mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "big", nodes: $n }) { __typename } }',
          { n: nodes },
        );
      }
    }, 600_000);
    afterAll(() => t?.close());

    it('nodes(first: 1000) on a 1,200-node thread answers with parents and children', async () => {
      const res =
        await t.gql(`{ thread(id: "big") { nodeCount nodes(first: 1000, afterSequence: ${RUNS}) {
        edges { node { sequence payload parents { sequence } } }
        pageInfo { hasNextPage } } } }`);
      expect(res.errors).toBeUndefined();
      // startRun writes one node per run: the thread holds those, then the chain.
      expect(res.data.thread.nodeCount).toBe(RUNS + NODES);
      const page = res.data.thread.nodes;
      expect(page.pageInfo.hasNextPage).toBe(true);
      expect(page.edges).toHaveLength(1000);
      for (const [k, { node: n }] of page.edges.entries()) {
        expect(n.payload).toEqual({ i: k });
        expect(n.sequence).toBe(RUNS + k + 1);
        // A new version of a resource key also has the previous version as a parent.
        const previous = k < KEYS ? [] : [{ sequence: n.sequence - KEYS }];
        const parents = [...n.parents].sort(
          (a: { sequence: number }, b: { sequence: number }) => a.sequence - b.sequence,
        );
        if (k > 0) expect(parents).toEqual([...previous, { sequence: n.sequence - 1 }]);
      }
      const kids = await t.gql(`{ thread(id: "big") { nodes(first: 1000, afterSequence: ${RUNS}) {
        edges { node { sequence children { sequence } } } } } }`);
      expect(kids.errors).toBeUndefined();
      for (const { node: n } of kids.data.thread.nodes.edges) {
        const i = n.sequence - RUNS - 1;
        const next = i + KEYS < NODES ? [{ sequence: n.sequence + KEYS }] : [];
        expect(n.children).toEqual([{ sequence: n.sequence + 1 }, ...next]);
      }
    });

    it("nodes(first: 1000) answers with each node's versions and its run (600 runs)", async () => {
      const res = await t.gql(`{ thread(id: "big") { nodes(first: 1000, afterSequence: ${RUNS}) {
        edges { node { sequence payload supersedes { sequence } supersededBy { sequence } run { id } } } } } }`);
      expect(res.errors).toBeUndefined();
      for (const { node: n } of res.data.thread.nodes.edges) {
        const i = n.payload.i as number;
        expect(n.supersedes).toEqual(i < KEYS ? null : { sequence: n.sequence - KEYS });
        expect(n.supersededBy).toEqual(i + KEYS < NODES ? { sequence: n.sequence + KEYS } : null);
        expect(n.run).toEqual({ id: `r${i % RUNS}` });
      }
    });

    it('the second page (afterSequence) and a kinds filter answer as well', async () => {
      const res =
        await t.gql(`{ thread(id: "big") { nodes(first: 1000, afterSequence: 150, kinds: [ANSWER]) {
        edges { node { sequence parents { sequence } } } } } }`);
      expect(res.errors).toBeUndefined();
      expect(res.data.thread.nodes.edges).toHaveLength(1000);
    });

    it('resources with 600 resource keys answer with their versions and edges', async () => {
      const res = await t.gql(`{ thread(id: "big") { resources { resourceKey sequence
        supersedes { sequence } parents { sequence } children { sequence } } } }`);
      expect(res.errors).toBeUndefined();
      const heads = res.data.thread.resources;
      expect(heads).toHaveLength(KEYS);
      for (const h of heads) expect(h.supersedes.sequence).toBe(h.sequence - KEYS);
    });
  });
}
