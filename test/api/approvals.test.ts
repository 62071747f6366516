/**
 * The approvals inbox and the list filters frontends use, on SQLite and Postgres: `approvals`
 * across threads by state and thread (pending, resolved with the decision, expired), paged both
 * ways with no duplicate or gap and counted; `runs(filter: { waitingFor })`; `threads(filter:
 * { metadata })` as a subset match; `nodeCount` from the thread row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

const INBOX = `totalCount edges { cursor node { threadId runId state waitingFor prompt requestIndex
  requestedAt expiresAt resolvedAt resolvedIndex decision response run { id status } thread { id } } }
  pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`;

function suite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  /** Runs by name: a* in thread a, b* in thread b. */
  const runs: Record<string, string> = {};

  const ok = async (query: string, variables?: Record<string, unknown>) => {
    const r = await t.gql(query, variables);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data;
  };
  const dispatch = async (runId: string, action: string) => {
    const data = await ok(
      `mutation($r: ID!) { dispatch(input: { runId: $r, action: ${action} }) { __typename ... on Error { message } } }`,
      { r: runId },
    );
    expect(data.dispatch.__typename, JSON.stringify(data)).toBe('DispatchSuccess');
  };
  const ask = (runId: string, question: string, extra = '') =>
    dispatch(
      runId,
      `{ type: REQUEST_HUMAN_INPUT, payload: { pending_approval: { question: "${question}" } ${extra} } }`,
    );

  beforeAll(async () => {
    t = await createTestApp({ backend });
    for (const [id, metadata] of [
      ['a', '{ team: "ops", tier: 1, tags: ["x", "y"], owner: { name: "ana", org: "n" } }'],
      ['b', '{ team: "research", tier: 1 }'],
      ['c', '{}'],
    ] as const) {
      await ok(
        `mutation { createThread(input: { threadId: "${id}", metadata: ${metadata} }) { __typename } }`,
      );
    }
    for (const name of ['a1', 'a2', 'a3', 'b1', 'b2']) {
      const data = await ok(
        `mutation { startRun(input: { threadId: "${name[0]}", goal: "${name}" }) { ... on StartRunSuccess { run { id } } } }`,
      );
      runs[name] = data.startRun.run.id;
    }
    await ask(runs.a1!, 'ship a1?');
    await ask(runs.a2!, 'ship a2?');
    await ask(runs.b1!, 'ship b1?');
    await dispatch(
      runs.b2!,
      '{ type: REQUEST_HUMAN_INPUT, payload: { waiting_for: "external_event", timeout_ms: 10 } }',
    );
    // a1 is approved with a response, then asks again; b2's wait runs out.
    await dispatch(
      runs.a1!,
      '{ type: RESUME_FROM_HUMAN, payload: { decision: "approved", response: { note: "go" } } }',
    );
    await ask(runs.a1!, 'ship a1 again?');
    const sweep = await t.engine.fireDueDeadlines();
    expect(sweep.ok).toBe(true);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists pending requests across threads, newest first, with their prompt and run', async () => {
    const data = await ok(`{ approvals(filter: { state: [PENDING] }) { ${INBOX} } }`);
    const page = data.approvals;
    expect(page.totalCount).toBe(3);
    const names = page.edges.map((e: { node: { runId: string } }) =>
      Object.keys(runs).find((k) => runs[k] === e.node.runId),
    );
    // Requested in the order a1, a2, b1, b2 (expired, not pending), a1 again: newest first.
    expect(names).toEqual(['a1', 'b1', 'a2']);
    const first = page.edges[0].node;
    expect(first).toMatchObject({
      threadId: 'a',
      state: 'PENDING',
      waitingFor: 'HUMAN_APPROVAL',
      prompt: { question: 'ship a1 again?' },
      run: { id: runs.a1, status: 'WAITING' },
      thread: { id: 'a' },
      resolvedAt: null,
      decision: null,
    });
    expect(Date.parse(first.expiresAt)).toBeGreaterThan(Date.parse(first.requestedAt));
  });

  it('keeps resolved requests with their decision, and expired ones', async () => {
    const data = await ok(`{
      resolved: approvals(filter: { state: [RESOLVED] }) { ${INBOX} }
      expired: approvals(filter: { state: [EXPIRED] }) { ${INBOX} }
      all: approvals { totalCount }
      none: approvals(filter: { state: [] }) { totalCount edges { cursor } }
    }`);
    expect(data.resolved.totalCount).toBe(1);
    const resolved = data.resolved.edges[0].node;
    expect(resolved).toMatchObject({
      runId: runs.a1,
      state: 'RESOLVED',
      prompt: { question: 'ship a1?' },
      decision: 'approved',
      response: { note: 'go' },
    });
    expect(resolved.resolvedIndex).toBeGreaterThan(resolved.requestIndex);
    expect(data.expired.edges.map((e: { node: { runId: string } }) => e.node.runId)).toEqual([
      runs.b2,
    ]);
    expect(data.expired.edges[0].node).toMatchObject({
      waitingFor: 'EXTERNAL_EVENT',
      prompt: null,
      run: { status: 'TIMEOUT' },
    });
    expect(data.all.totalCount).toBe(5);
    expect(data.none).toEqual({ totalCount: 0, edges: [] });
  });

  it('filters by thread, and hides other tenants’ and unknown threads', async () => {
    const data = await ok(`{
      a: approvals(filter: { threadId: "a", state: [PENDING] }) { totalCount }
      nope: approvals(filter: { threadId: "zzz" }) { totalCount edges { cursor } }
    }`);
    expect(data.a.totalCount).toBe(2);
    expect(data.nope).toEqual({ totalCount: 0, edges: [] });
  });

  it('filters by a time range of the request', async () => {
    const all = await ok(
      '{ approvals(orderBy: { direction: ASC }) { edges { node { runId requestIndex requestedAt } } } }',
    );
    const nodes = all.approvals.edges.map(
      (e: { node: { runId: string; requestIndex: number; requestedAt: string } }) => e.node,
    );
    expect(nodes.length).toBeGreaterThanOrEqual(4);
    const [first, second, , last] = nodes;
    const range = await ok(
      `query ($a: DateTime, $b: DateTime) { approvals(filter: { requestedAfter: $a, requestedBefore: $b }, orderBy: { direction: ASC }) {
        totalCount edges { node { runId requestIndex } } } }`,
      { a: first.requestedAt, b: last.requestedAt },
    );
    const inside = nodes.filter(
      (n: { requestedAt: string }) =>
        n.requestedAt > first.requestedAt && n.requestedAt < last.requestedAt,
    );
    expect(inside.length).toBeGreaterThan(0);
    expect(range.approvals.edges.map((e: { node: unknown }) => e.node)).toEqual(
      inside.map((n: { runId: string; requestIndex: number }) => ({
        runId: n.runId,
        requestIndex: n.requestIndex,
      })),
    );
    expect(range.approvals.totalCount).toBe(inside.length);
    expect(range.approvals.edges[0].node.runId).toBe(second.runId);
  });

  it('pages forward and back with no duplicate or gap', async () => {
    const all = (await ok(`{ approvals { ${INBOX} } }`)).approvals.edges.map(
      (e: { cursor: string }) => e.cursor,
    );
    expect(all).toHaveLength(5);
    const forward: string[] = [];
    let after: string | null = null;
    for (;;) {
      const data = await ok(
        `query($after: String) { approvals(first: 2, after: $after) { ${INBOX} } }`,
        { after },
      );
      forward.push(...data.approvals.edges.map((e: { cursor: string }) => e.cursor));
      if (!data.approvals.pageInfo.hasNextPage) break;
      after = data.approvals.pageInfo.endCursor;
    }
    expect(forward).toEqual(all);
    const backward: string[] = [];
    let before: string | null = null;
    for (;;) {
      const data = await ok(
        `query($before: String) { approvals(last: 4, before: $before) { ${INBOX} } }`,
        { before },
      );
      backward.unshift(...data.approvals.edges.map((e: { cursor: string }) => e.cursor));
      if (!data.approvals.pageInfo.hasPreviousPage) break;
      before = data.approvals.pageInfo.startCursor;
    }
    expect(backward).toEqual(all);
    const oldest = await ok(`{ approvals(orderBy: { direction: ASC }) { ${INBOX} } }`);
    expect(oldest.approvals.edges.map((e: { node: { requestIndex: number } }) => e.node)).toEqual(
      [...(await ok(`{ approvals { ${INBOX} } }`)).approvals.edges]
        .reverse()
        .map((e: { node: unknown }) => e.node),
    );
  });

  it('refuses a cursor of the other order and a malformed one', async () => {
    const desc = await ok(`{ approvals(first: 1) { pageInfo { endCursor } } }`);
    const mixed = await t.gql(
      `query($c: String) { approvals(after: $c, orderBy: { direction: ASC }) { totalCount } }`,
      { c: desc.approvals.pageInfo.endCursor },
    );
    expect(mixed.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const junk = await t.gql(`{ approvals(after: "bm9wZQ") { totalCount } }`);
    expect(junk.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('filters runs by what they wait for', async () => {
    const data = await ok(`{
      human: runs(filter: { waitingFor: [HUMAN_APPROVAL] }) { totalCount edges { node { id waitingFor } } }
      external: runs(filter: { waitingFor: [EXTERNAL_EVENT] }) { totalCount }
      inA: runs(filter: { threadId: "a", waitingFor: [HUMAN_APPROVAL], status: [WAITING] }) { totalCount }
    }`);
    expect(data.human.edges.map((e: { node: { id: string } }) => e.node.id).sort()).toEqual(
      [runs.a1, runs.a2, runs.b1].sort(),
    );
    expect(data.human.totalCount).toBe(3);
    // b2 timed out: it no longer waits for anything.
    expect(data.external.totalCount).toBe(0);
    expect(data.inA.totalCount).toBe(2);
  });

  it('filters threads by metadata containment', async () => {
    const ids = async (metadata: string) => {
      const data = await ok(
        `query($m: JSON) { threads(filter: { metadata: $m }) { totalCount edges { node { id } } } }`,
        { m: JSON.parse(metadata) },
      );
      const list = data.threads.edges.map((e: { node: { id: string } }) => e.node.id);
      expect(data.threads.totalCount).toBe(list.length);
      return list;
    };
    expect(await ids('{"team":"ops"}')).toEqual(['a']);
    expect(await ids('{"tier":1}')).toEqual(['a', 'b']);
    expect(await ids('{"tier":"1"}')).toEqual([]);
    expect(await ids('{"owner":{"name":"ana"}}')).toEqual(['a']);
    expect(await ids('{"owner":{"name":"ana","org":"m"}}')).toEqual([]);
    expect(await ids('{"tags":["x","y"]}')).toEqual(['a']);
    expect(await ids('{"tags":["x"]}')).toEqual([]);
    expect(await ids('{"team":"ops","tier":1}')).toEqual(['a']);
    expect(await ids('{"missing":null}')).toEqual([]);
    expect(await ids('{}')).toEqual(['a', 'b', 'c']);
    const data = await ok(
      `{ threads(filter: { metadata: { tier: 1 }, hasPendingApproval: true }, orderBy: { field: UPDATED_AT, direction: DESC }) { edges { node { id } } } }`,
    );
    // b's wait ran out last.
    expect(data.threads.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(['b', 'a']);
  });

  it('refuses a malformed metadata filter with a typed error', async () => {
    for (const m of [[1], 'ops', { 'a"b': 1 }, { a: {} }]) {
      const r = await t.gql(
        `query($m: JSON) { threads(filter: { metadata: $m }) { totalCount } }`,
        { m },
      );
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r)).toBe('BAD_USER_INPUT');
    }
  });

  it('counts nodes from the thread row', async () => {
    await ok(
      `mutation { appendNodes(input: { threadId: "c", nodes: [{ kind: GOAL, payload: { text: "x" } }, { kind: GOAL, payload: { text: "y" } }] }) { __typename } }`,
    );
    const data = await ok(
      `{ thread(id: "c") { nodeCount nodes(first: 1) { totalCount } goals: nodes(kinds: [GOAL]) { totalCount } } }`,
    );
    expect(data.thread).toEqual({
      nodeCount: 2,
      nodes: { totalCount: 2 },
      goals: { totalCount: 2 },
    });
  });
}

describe('approvals and list filters (SQLite)', () => suite('sqlite'));
describeWithPostgres('approvals and list filters (Postgres)', () => suite('postgres'));
