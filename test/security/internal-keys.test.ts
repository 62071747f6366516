/**
 * Review item 7: no answer shows where a thread is stored. A thread of a tenant other than the
 * default one is stored under its id, U+001F and the tenant's name; the caller names it by its id
 * and must never see that key: not in the THREAD_DELETED error that ends a subscription, not in
 * the error of any command or read about the thread, not in an audit entry's id, not inside an
 * audit cursor (which is only base64url). Audit cursors still page through the whole trail.
 * Keyed app in process, SQLite (the audit id rewrite of old rows is tested on both backends in
 * test/security/audit-ids.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthApp, createAuthApp, first, type Json } from '../auth/support.js';

/** A tenant name no answer has any other reason to contain. */
const TENANT = 'tenantzq';

/** The text of `value` shows no storage key: neither the separator nor the tenant's name. */
function expectNoStorageKey(value: unknown): void {
  const text = JSON.stringify(value);
  expect(text).not.toContain('\\u001f');
  expect(text).not.toContain('\u241f');
  expect(text).not.toContain(TENANT);
}

/** A cursor as anyone can read it (base64url JSON). */
const opened = (cursor: string) => Buffer.from(cursor, 'base64url').toString('utf8');

const ERR = '__typename ... on Error { code message }';

describe('no answer shows a storage key', () => {
  let s: AuthApp;
  let key: string;

  const data = async (query: string, variables: Record<string, unknown> = {}) => {
    const answer = await s.gql(key, query, variables);
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    return answer.data as Json;
  };
  const create = (id: string) =>
    data(`mutation($id: ID!) { createThread(input: { threadId: $id }) { ${ERR} } }`, { id });
  const remove = (id: string) =>
    data(
      `mutation($id: ID!) { deleteThread(input: { threadId: $id }) { ${ERR}
        ... on DeleteThreadSuccess { threadId } } }`,
      { id },
    );
  const append = (id: string) =>
    data(
      `mutation($id: ID!) { appendNodes(input: { threadId: $id, nodes: [{ kind: GOAL, payload: { a: 1 } }] }) {
        ${ERR} ... on AppendNodesSuccess { logIndex } } }`,
      { id },
    );

  beforeAll(async () => {
    s = await createAuthApp();
    key = (await s.key(TENANT, ['admin'])).key;
  });
  afterAll(async () => {
    await s.close();
  });

  it('ends a subscription to a deleted thread with THREAD_DELETED naming the id', async () => {
    await create('doomed');
    await append('doomed');
    const events = await s.sse(
      key,
      'subscription { threadEvents(threadId: "doomed", afterIndex: -1) { index } }',
    );
    const nodes = await s.sse(
      key,
      'subscription { nodeAppended(threadId: "doomed", afterSequence: 0) { sequence } }',
    );
    expect((await first(events)).data.threadEvents.index).toBe(0);
    expect((await first(nodes)).data.nodeAppended.sequence).toBe(1);
    expect((await remove('doomed')).deleteThread.threadId).toBe('doomed');
    for (const stream of [events, nodes]) {
      let last = await first(stream);
      // Events committed before the deletion come first.
      while (last.errors === undefined) last = await first(stream);
      expect(last.errors[0]?.extensions?.code).toBe('THREAD_DELETED');
      expect(last.errors[0]?.message).toBe('thread doomed was deleted: the subscription ended');
      expectNoStorageKey(last);
      expect((await stream.next()).done).toBe(true);
    }
  });

  it('answers every failing command and read about a thread with its id only', async () => {
    await create('held');
    await append('held');
    const run = await data(`mutation { startRun(input: { threadId: "held", goal: "g" }) {
      ${ERR} ... on StartRunSuccess { run { id } } } }`);
    const runId = run.startRun.run.id as string;
    const failing: Array<[string, Record<string, unknown>?]> = [
      [`mutation { createThread(input: { threadId: "held" }) { ${ERR} } }`],
      [
        `mutation { appendNodes(input: { threadId: "held", expectedIndex: 99, nodes: [{ kind: GOAL, payload: {} }] }) {
          ${ERR} ... on ConflictError { threadId } } }`,
      ],
      [`mutation { forkThread(input: { threadId: "held", upToIndex: 99 }) { ${ERR} } }`],
      [`mutation { forkThread(input: { threadId: "held", newThreadId: "held" }) { ${ERR} } }`],
      [
        `mutation($id: ID!) { dispatch(input: { threadId: "held", runId: $id, expectedIndex: 99, action: { type: "noop" } }) { ${ERR} } }`,
        { id: runId },
      ],
      [
        `mutation($id: ID!) { resolveApproval(input: { threadId: "held", runId: $id, decision: "approved" }) { ${ERR} } }`,
        { id: runId },
      ],
      [`mutation { cancelRun(input: { threadId: "held", runId: "nope" }) { ${ERR} } }`],
      [
        `mutation { redactNodes(input: { threadId: "held", nodeIds: ["nope"], reason: "r" }) { ${ERR} } }`,
      ],
      [
        `mutation { remember(input: { threadId: "held", runId: "nope", type: "fact", key: "k", content: 1 }) { ${ERR} } }`,
      ],
      [
        `mutation { recordUsage(input: { threadId: "held", runId: "nope", model: "m", inputTokens: 1, outputTokens: 1 }) { ${ERR} } }`,
      ],
      ['{ thread(id: "held") { state(atIndex: 99) } }'],
      ['{ thread(id: "held") { runsAt(atIndex: 99) { id } } }'],
      ['{ diffThreads(a: "held", b: "missing") { commonPrefix } }'],
      ['{ causalNode(threadId: "held", id: "nope") { id } }'],
      ['{ run(threadId: "held", id: "nope") { id } }'],
    ];
    for (const [query, variables] of failing) {
      const answer = await s.gql(key, query, variables);
      expect(JSON.stringify(answer), query).toMatch(/"code":"[A-Z_]+"/);
      expectNoStorageKey(answer);
    }
  });

  it('names the thread by its id in every live feed of the tenant', async () => {
    await create('live');
    const feeds = [
      'subscription { threadActivity { threadId cursor thread { id } } }',
      'subscription { runStatusChanged { threadId runId to run { threadId } } }',
      'subscription { approvalRequested { threadId runId run { threadId } } }',
      'subscription { threadEvents(threadId: "live") { threadId type } }',
    ];
    // A live feed answers from its first event on: open them all, then commit.
    const streams = feeds.map((query) => s.sse(key, query));
    const payloads = streams.map((stream) => stream.then(first));
    let settled = 0;
    for (const payload of payloads) {
      payload.finally(() => {
        settled++;
      });
    }
    for (let commits = 0; settled < feeds.length; commits++) {
      expect(commits).toBeLessThan(200);
      const run = await data(`mutation { startRun(input: { threadId: "live", goal: "g" }) {
        ${ERR} ... on StartRunSuccess { run { id } } } }`);
      await data(
        `mutation($id: ID!) { dispatch(input: { threadId: "live", runId: $id, action: { type: REQUEST_HUMAN_INPUT,
          payload: { pending_approval: { question: "ok?" } } } }) { ${ERR} } }`,
        { id: run.startRun.run.id },
      );
    }
    for (const payload of await Promise.all(payloads)) {
      expect(payload.errors, JSON.stringify(payload.errors)).toBeUndefined();
      expect(JSON.stringify(payload.data)).toContain('"threadId":"live"');
      expectNoStorageKey(payload);
      const cursor = payload.data.threadActivity?.cursor;
      if (cursor !== undefined) expect(opened(cursor)).not.toContain(TENANT);
    }
    for (const stream of streams) await (await stream).return?.();
  });

  it('shows audit entries and their cursors without a storage key, and pages through them', async () => {
    const ids = ['gone-1', 'gone-2', 'gone-3', 'gone-4'];
    for (const id of ids) {
      await create(id);
      await remove(id);
    }
    const PAGE = `query($after: String, $before: String, $first: Int, $last: Int) {
      auditEntries(first: $first, after: $after, last: $last, before: $before,
        filter: { action: "thread_deleted" }) {
        totalCount
        edges { cursor node { id threadId } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`;
    const all = (await data(PAGE, { first: 100 })).auditEntries;
    expectNoStorageKey(all);
    const entries = all.edges.map((e: Json) => e.node.threadId);
    expect(entries).toEqual(expect.arrayContaining(ids));
    for (const edge of all.edges) {
      expect(opened(edge.cursor)).not.toContain('\u001f');
      expect(opened(edge.cursor)).not.toContain(TENANT);
    }
    // Forward two at a time, then backward from the end: the same entries in the same order.
    const forward: string[] = [];
    let after: string | null = null;
    do {
      const page: Json = (await data(PAGE, { first: 2, after })).auditEntries;
      expectNoStorageKey(page);
      forward.push(...page.edges.map((e: Json) => e.node.id));
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after !== null);
    expect(forward).toEqual(all.edges.map((e: Json) => e.node.id));
    const backward: string[] = [];
    let before: string | null = null;
    do {
      const page: Json = (await data(PAGE, { last: 2, before })).auditEntries;
      backward.unshift(...page.edges.map((e: Json) => e.node.id));
      before = page.pageInfo.hasPreviousPage ? page.pageInfo.startCursor : null;
    } while (before !== null);
    expect(backward).toEqual(forward);
  });
});
