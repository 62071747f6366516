/**
 * The audit trail as a connection, on SQLite and Postgres: newest first by default, paged
 * forward and backward with no duplicate or gap (entries recorded at the same instant are ordered
 * by id), counted, filtered by thread and action, oldest first on request, and bad cursors or
 * filters answered with a typed error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedClock } from '../../src/core/ports.js';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

const PAGE = `totalCount edges { cursor node { id threadId action actor recordedAt logLength } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;

type Page = {
  totalCount: number;
  edges: Array<{ cursor: string; node: { id: string; threadId: string; recordedAt: string } }>;
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
};

function suite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  // A clock that stands still unless advanced: several deletions share an instant.
  const clock = createSimulatedClock('2026-03-01T00:00:00.000Z', 0);
  const threads = ['t0', 't1', 't2', 't3', 't4', 't5', 't6'];

  const ok = async (query: string, variables?: Record<string, unknown>) => {
    const r = await t.gql(query, variables);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data;
  };
  const page = async (args: string): Promise<Page> =>
    (await ok(`{ auditEntries(${args}) { ${PAGE} } }`)).auditEntries;

  beforeAll(async () => {
    t = await createTestApp({ backend, engine: { clock } });
    for (const [i, id] of threads.entries()) {
      await ok(`mutation { createThread(input: { threadId: "${id}" }) { __typename } }`);
      const deleted = await ok(
        `mutation { deleteThread(input: { threadId: "${id}", idempotencyKey: "d-${id}" }) { __typename } }`,
      );
      expect(deleted.deleteThread.__typename).toBe('DeleteThreadSuccess');
      if (i % 3 === 2) clock.advance(1000);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('pages newest first, forward and backward, with no duplicate or gap', async () => {
    const all = await page('first: 100');
    expect(all.totalCount).toBe(threads.length);
    const ids = all.edges.map((e) => e.node.id);
    expect(new Set(all.edges.map((e) => e.node.threadId))).toEqual(new Set(threads));
    const times = all.edges.map((e) => Date.parse(e.node.recordedAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // Ties at one instant exist, and are ordered by id.
    expect(new Set(times).size).toBeLessThan(times.length);

    const forward: string[] = [];
    let after: string | null = null;
    for (let n = 0; n < 10; n++) {
      const p: Page = await page(after === null ? 'first: 2' : `first: 2, after: "${after}"`);
      forward.push(...p.edges.map((e) => e.node.id));
      expect(p.pageInfo.hasPreviousPage).toBe(after !== null);
      if (!p.pageInfo.hasNextPage) break;
      after = p.pageInfo.endCursor;
    }
    expect(forward).toEqual(ids);

    const backward: string[] = [];
    let before: string | null = null;
    for (let n = 0; n < 10; n++) {
      const p: Page = await page(before === null ? 'last: 3' : `last: 3, before: "${before}"`);
      backward.unshift(...p.edges.map((e) => e.node.id));
      if (!p.pageInfo.hasPreviousPage) break;
      before = p.pageInfo.startCursor;
    }
    expect(backward).toEqual(ids);

    const oldest = await page('first: 100, orderBy: { direction: ASC }');
    expect(oldest.edges.map((e) => e.node.id)).toEqual([...ids].reverse());
  });

  it('filters by thread and action, and counts what matches', async () => {
    const one = await page('filter: { threadId: "t3" }');
    expect(one.totalCount).toBe(1);
    expect(one.edges.map((e) => e.node.threadId)).toEqual(['t3']);
    const deletions = await page('first: 1, filter: { action: "thread_deleted" }');
    expect(deletions.totalCount).toBe(threads.length);
    expect(deletions.edges).toHaveLength(1);
    const none = await page('filter: { action: "nothing_like_this" }');
    expect(none).toMatchObject({ totalCount: 0, edges: [] });
    const nul = await t.gql(
      'query($a: String) { auditEntries(filter: { action: $a }) { totalCount } }',
      {
        a: 'bad\u0000action',
      },
    );
    expect(nul.errors, JSON.stringify(nul.errors)).toBeUndefined();
    expect(nul.data.auditEntries.totalCount).toBe(0);
  });

  it('answers bad paging with BAD_USER_INPUT', async () => {
    const cursor = (await page('first: 1')).pageInfo.endCursor;
    for (const args of [
      'first: 1, after: "not-a-cursor"',
      'first: 1, last: 1',
      `first: 1, orderBy: { direction: ASC }, after: "${cursor}"`,
      'first: 100000',
      'first: -1',
    ]) {
      const r = await t.gql(`{ auditEntries(${args}) { totalCount } }`);
      expect(r.errors?.[0]?.extensions?.code, args).toBe('BAD_USER_INPUT');
    }
  });
}

describe('audit trail (SQLite)', () => suite('sqlite'));
describeWithPostgres('audit trail (Postgres)', () => suite('postgres'));
