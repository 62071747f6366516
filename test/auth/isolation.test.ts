/**
 * The tenant-isolation matrix: for every query, mutation and subscription of the
 * schema — the list comes from the schema, so a new root field without a case fails — a key of
 * tenant B is denied tenant A's threads, runs, nodes and events, with exactly the answer it gets
 * for ones that do not exist (ids aside), and A's data is unchanged afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.js';
import { type AuthApp, createAuthApp, first, type Json, type Response } from './support.js';

const ERR = '__typename ... on Error { code message } ... on NotFoundError { entity id }';

let t: AuthApp;
let keyA: string;
let keyB: string;
let nodeA: string;

/** A's ids, and ids that exist nowhere. */
const A = { thread: 'a-thread', fork: 'a-fork', spare: 'a-spare', run: 'a-run' };
const MISSING = { thread: 'no-thread', fork: 'no-fork', spare: 'no-spare', run: 'no-run' };
const B = { thread: 'b-thread', run: 'b-run' };

/** The response with A's and the missing ids (and node ids) replaced by one placeholder. */
function normalised(value: unknown): unknown {
  let text = JSON.stringify(value);
  for (const id of [...Object.values(A), ...Object.values(MISSING), nodeA, 'no-node']) {
    text = text.split(id).join('<id>');
  }
  return JSON.parse(text);
}

async function asA(query: string, variables?: Record<string, unknown>): Promise<Json> {
  const r = await t.gql(keyA, query, variables);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data;
}

/** A probe's answers for A's ids and for missing ones must be the same; returns A's. */
async function same(
  probe: (ids: typeof A & { node: string }) => Promise<unknown>,
): Promise<unknown> {
  const forA = await probe({ ...A, node: nodeA });
  const forMissing = await probe({ ...MISSING, node: 'no-node' });
  expect(normalised(forA)).toEqual(normalised(forMissing));
  return forA;
}

const codes = (r: Response) => (r.errors ?? []).map((e) => e.extensions?.code);

/** Queries: B gets NOT_FOUND (or an empty list) for A's ids, like for missing ones. */
const QUERIES: Record<string, () => Promise<number>> = {
  thread: async () => {
    const r = (await same((ids) =>
      t.gql(keyB, 'query($id: ID!) { thread(id: $id) { id } }', { id: ids.thread }),
    )) as Response;
    expect(codes(r)).toEqual(['NOT_FOUND']);
    return 1;
  },
  threads: async () => {
    const r = await t.gql(
      keyB,
      '{ threads { totalCount edges { node { id } } } newest: threads(orderBy: { field: UPDATED_AT, direction: DESC }, last: 5) { totalCount edges { node { id } } } }',
    );
    expect(r.data.threads.edges.map((e: Json) => e.node.id)).toEqual([B.thread]);
    expect(r.data.threads.totalCount).toBe(1);
    expect(r.data.newest.edges.map((e: Json) => e.node.id)).toEqual([B.thread]);
    expect(r.data.newest.totalCount).toBe(1);
    const forks = (await same((ids) =>
      t.gql(
        keyB,
        'query($f: ID!) { threads(filter: { forkedFrom: $f }) { edges { node { id } } } }',
        {
          f: ids.thread,
        },
      ),
    )) as Response;
    expect(forks.data.threads.edges).toEqual([]);
    return 2;
  },
  run: async () => {
    for (const withThread of [false, true]) {
      const r = (await same((ids) =>
        t.gql(keyB, 'query($id: ID!, $t: ID) { run(id: $id, threadId: $t) { id } }', {
          id: ids.run,
          t: withThread ? ids.thread : null,
        }),
      )) as Response;
      expect(codes(r)).toEqual(['NOT_FOUND']);
    }
    return 2;
  },
  runs: async () => {
    const r = await t.gql(keyB, '{ runs { edges { node { id threadId } } } }');
    expect(r.data.runs.edges.map((e: Json) => e.node.threadId)).toEqual([B.thread]);
    const byThread = (await same((ids) =>
      t.gql(keyB, 'query($t: ID!) { runs(filter: { threadId: $t }) { edges { node { id } } } }', {
        t: ids.thread,
      }),
    )) as Response;
    expect(byThread.data.runs.edges).toEqual([]);
    return 2;
  },
  approvals: async () => {
    const r = await t.gql(keyB, '{ approvals { totalCount edges { node { threadId runId } } } }');
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    for (const e of r.data.approvals.edges) expect(e.node.threadId).toBe(B.thread);
    const byThread = (await same((ids) =>
      t.gql(
        keyB,
        'query($t: ID!) { approvals(filter: { threadId: $t }) { totalCount edges { node { runId } } } }',
        {
          t: ids.thread,
        },
      ),
    )) as Response;
    expect(byThread.data.approvals).toEqual({ totalCount: 0, edges: [] });
    return 2;
  },
  searchNodes: async () => {
    // A's node holds "plan": A finds it, B does not, with or without naming A's thread.
    const mine = await asA('{ searchNodes(query: "plan") { edges { node { threadId } } } }');
    expect(mine.searchNodes.edges.length).toBeGreaterThan(0);
    const all = await t.gql(keyB, '{ searchNodes(query: "plan") { edges { node { threadId } } } }');
    expect(all.errors, JSON.stringify(all.errors)).toBeUndefined();
    expect(all.data.searchNodes.edges).toEqual([]);
    const byThread = (await same((ids) =>
      t.gql(
        keyB,
        'query($t: ID!) { searchNodes(query: "plan", filter: { threadId: $t }) { edges { node { threadId } } } }',
        { t: ids.thread },
      ),
    )) as Response;
    expect(byThread.data.searchNodes.edges).toEqual([]);
    return 2;
  },
  auditEntries: async () => {
    // A deletes a thread of its own: A's trail shows it, B's stays empty, even filtered by it.
    await asA('mutation { createThread(input: { threadId: "a-audit" }) { __typename } }');
    await asA(
      'mutation { deleteThread(input: { threadId: "a-audit", idempotencyKey: "a-audit" }) { __typename } }',
    );
    const mine = await asA('{ auditEntries(filter: { threadId: "a-audit" }) { totalCount } }');
    expect(mine.auditEntries.totalCount).toBe(1);
    for (const filter of ['', '(filter: { threadId: "a-audit" })']) {
      const r = await t.gql(
        keyB,
        `{ auditEntries${filter} { totalCount edges { node { threadId } } } }`,
      );
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(r.data.auditEntries).toEqual({ totalCount: 0, edges: [] });
    }
    return 1;
  },
  causalNode: async () => {
    const r = (await same((ids) =>
      t.gql(keyB, 'query($t: ID!, $n: ID!) { causalNode(threadId: $t, id: $n) { id payload } }', {
        t: ids.thread,
        n: ids.node,
      }),
    )) as Response;
    expect(codes(r)).toEqual(['NOT_FOUND']);
    return 1;
  },
  viewer: async () => {
    // Names no thread: B learns its own key's scopes, nothing of A's (an admin key).
    const r = await t.gql(keyB, '{ viewer { scopes } }');
    expect([...r.data.viewer.scopes].sort()).toEqual(['APPROVE', 'READ', 'WRITE']);
    return 1;
  },
  diffThreads: async () => {
    for (const order of ['a-first', 'b-first']) {
      const r = (await same((ids) =>
        t.gql(keyB, 'query($a: ID!, $b: ID!) { diffThreads(a: $a, b: $b) { commonPrefix } }', {
          a: order === 'a-first' ? ids.thread : B.thread,
          b: order === 'a-first' ? B.thread : ids.thread,
        }),
      )) as Response;
      expect(codes(r)).toEqual(['NOT_FOUND']);
    }
    return 2;
  },
};

/** A mutation of B naming A's ids: a typed NotFoundError, like for missing ids. */
async function mutationNotFound(field: string, input: (ids: typeof A & { node: string }) => Json) {
  const r = (await same((ids) =>
    t.gql(keyB, `mutation($input: ${inputType(field)}!) { ${field}(input: $input) { ${ERR} } }`, {
      input: input(ids),
    }),
  )) as Response;
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  expect(r.data[field]).toMatchObject({ __typename: 'NotFoundError', code: 'NOT_FOUND' });
  return 1;
}

const inputType = (field: string) => `${field[0]!.toUpperCase()}${field.slice(1)}Input`;

const MUTATIONS: Record<string, () => Promise<number>> = {
  appendNodes: () =>
    mutationNotFound('appendNodes', (ids) => ({
      threadId: ids.thread,
      nodes: [{ kind: 'INFERENCE', payload: { from: 'b' } }],
    })),
  remember: () =>
    mutationNotFound('remember', (ids) => ({
      threadId: ids.thread,
      type: 'memory',
      key: 'k',
      content: 'b',
    })),
  forkThread: () => mutationNotFound('forkThread', (ids) => ({ threadId: ids.thread })),
  deleteThread: () => mutationNotFound('deleteThread', (ids) => ({ threadId: ids.thread })),
  redactNodes: () =>
    mutationNotFound('redactNodes', (ids) => ({
      threadId: ids.thread,
      nodeIds: [ids.node],
      reason: 'steal',
    })),
  setThreadExpiry: () =>
    mutationNotFound('setThreadExpiry', (ids) => ({ threadId: ids.thread, expiresAt: null })),
  startRun: () => mutationNotFound('startRun', (ids) => ({ threadId: ids.thread, goal: 'steal' })),
  dispatch: () =>
    mutationNotFound('dispatch', (ids) => ({
      runId: ids.run,
      action: { type: 'UPDATE_MEMORY', payload: { updates: { x: 1 } } },
    })),
  resolveApproval: async () => {
    await mutationNotFound('resolveApproval', (ids) => ({ runId: ids.run, decision: 'approved' }));
    return (
      1 +
      (await mutationNotFound('resolveApproval', (ids) => ({
        runId: ids.run,
        threadId: ids.thread,
        decision: 'approved',
      })))
    );
  },
  cancelRun: () => mutationNotFound('cancelRun', (ids) => ({ runId: ids.run })),
  recordUsage: () =>
    mutationNotFound('recordUsage', (ids) => ({
      runId: ids.run,
      model: 'gpt-4o',
      inputTokens: 1,
      outputTokens: 1,
    })),
  importWorkflowState: () =>
    mutationNotFound('importWorkflowState', (ids) => ({
      threadId: ids.thread,
      state: { run_id: 'b-imported' },
    })),
  // Thread ids are per tenant: an id only A uses makes a thread of B's own, with the answer a
  // free id gets (A's thread is untouched); only an id B uses itself is taken.
  createThread: async () => {
    const create = `mutation($id: ID!) { createThread(input: { threadId: $id }) { ${ERR}
      ... on CreateThreadSuccess { logIndex thread { id logLength } } } }`;
    const r = (await same((ids) => t.gql(keyB, create, { id: ids.fork }))) as Response;
    expect(r.data.createThread).toMatchObject({ __typename: 'CreateThreadSuccess' });
    const own = await t.gql(keyB, create, { id: B.thread });
    expect(own.data.createThread.__typename).toBe('ConflictError');
    return 1;
  },
  importState: async () => {
    const state = await asA('query($id: ID!) { thread(id: $id) { state } }', { id: A.thread });
    const importing = `mutation($id: ID!, $s: JSON!) { importState(input: { threadId: $id, state: $s }) {
      ${ERR} ... on ImportStateSuccess { logIndex thread { id logLength } } } }`;
    const r = (await same((ids) =>
      t.gql(keyB, importing, { id: ids.spare, s: state.thread.state }),
    )) as Response;
    expect(r.data.importState).toMatchObject({ __typename: 'ImportStateSuccess' });
    const own = await t.gql(keyB, importing, { id: B.thread, s: state.thread.state });
    expect(own.data.importState.__typename).toBe('ConflictError');
    return 1;
  },
};

const SUBSCRIPTIONS: Record<string, () => Promise<number>> = {
  threadEvents: () =>
    subscribeNotFound(
      'subscription($t: ID!) { threadEvents(threadId: $t, afterIndex: -1) { index } }',
      (ids) => ({
        t: ids.thread,
      }),
    ),
  nodeAppended: () =>
    subscribeNotFound(
      'subscription($t: ID!) { nodeAppended(threadId: $t, afterSequence: 0) { id } }',
      (ids) => ({ t: ids.thread }),
    ),
  runStatusChanged: async () => {
    let probes = await subscribeNotFound(
      'subscription($t: ID) { runStatusChanged(threadId: $t, afterIndex: -1) { runId } }',
      (ids) => ({ t: ids.thread }),
    );
    probes += await subscribeNotFound(
      'subscription($r: ID) { runStatusChanged(runId: $r) { runId } }',
      (ids) => ({ r: ids.run }),
    );
    // Every thread: B sees its own changes, none of A's (committed first).
    const stream = await t.sse(keyB, 'subscription { runStatusChanged { threadId runId to } }');
    await asA(
      `mutation { startRun(input: { threadId: "${A.thread}", goal: "a2", runId: "a-run-2" }) { __typename } }`,
    );
    await t.gql(
      keyB,
      `mutation { startRun(input: { threadId: "${B.thread}", goal: "b2", runId: "b-run-2" }) { __typename } }`,
    );
    const seen = await first(stream);
    expect(seen.data.runStatusChanged).toMatchObject({ threadId: B.thread, runId: 'b-run-2' });
    await stream.return?.();
    return probes + 1;
  },
  threadActivity: async () => {
    // From the start of B's feed: exactly the entries of B's threads, none of A's.
    const threads = await t.gql(keyB, '{ threads { edges { node { id logLength } } } }');
    const own = threads.data.threads.edges.map((e: Json) => e.node);
    const count = own.reduce((n: number, th: { logLength: number }) => n + th.logLength, 0);
    const start = Buffer.from(JSON.stringify({ k: 'activity', v: { a: 0 } })).toString('base64url');
    const stream = await t.sse(
      keyB,
      'subscription($a: String) { threadActivity(after: $a) { threadId index } }',
      { a: start },
    );
    const seen: string[] = [];
    while (seen.length < count) {
      const payload = await first(stream);
      expect(payload.errors, JSON.stringify(payload.errors)).toBeUndefined();
      seen.push(`${payload.data.threadActivity.threadId}#${payload.data.threadActivity.index}`);
    }
    await stream.return?.();
    expect(seen.sort()).toEqual(
      own
        .flatMap((th: { id: string; logLength: number }) =>
          Array.from({ length: th.logLength }, (_, i) => `${th.id}#${i}`),
        )
        .sort(),
    );
    return 1;
  },
  approvalRequested: async () => {
    const probes = await subscribeNotFound(
      'subscription($t: ID) { approvalRequested(threadId: $t, afterIndex: -1) { runId } }',
      (ids) => ({ t: ids.thread }),
    );
    const stream = await t.sse(keyB, 'subscription { approvalRequested { threadId runId } }');
    const ask = (key: string, runId: string) =>
      t.gql(
        key,
        `mutation { dispatch(input: { runId: "${runId}", action: { type: REQUEST_HUMAN_INPUT, payload: { pending_approval: { q: "?" } } } }) { __typename } }`,
      );
    expect((await ask(keyA, 'a-run-2')).data.dispatch.__typename).toBe('DispatchSuccess');
    expect((await ask(keyB, 'b-run-2')).data.dispatch.__typename).toBe('DispatchSuccess');
    const seen = await first(stream);
    expect(seen.data.approvalRequested).toMatchObject({ threadId: B.thread, runId: 'b-run-2' });
    await stream.return?.();
    return probes + 1;
  },
};

async function subscribeNotFound(
  query: string,
  variables: (ids: typeof A & { node: string }) => Record<string, unknown>,
): Promise<number> {
  const r = (await same(async (ids) => {
    const stream = await t.sse(keyB, query, variables(ids));
    const payload = await first(stream);
    await stream.return?.();
    return payload;
  })) as Response;
  expect(codes(r)).toEqual(['NOT_FOUND']);
  return 1;
}

beforeAll(async () => {
  t = await createAuthApp();
  keyA = (await t.key('acme', ['admin'])).key;
  keyB = (await t.key('globex', ['read', 'write', 'approve'])).key;
  await asA(`mutation { createThread(input: { threadId: "${A.thread}" }) { __typename } }`);
  const appended = await asA(
    `mutation { appendNodes(input: { threadId: "${A.thread}", nodes: [{ kind: GOAL, payload: { secret: "A's plan" } }] }) { ... on AppendNodesSuccess { nodes { id } } } }`,
  );
  nodeA = appended.appendNodes.nodes[0].id;
  await asA(
    `mutation { remember(input: { threadId: "${A.thread}", type: "memory", key: "k", content: "A" }) { __typename } }`,
  );
  await asA(
    `mutation { startRun(input: { threadId: "${A.thread}", goal: "A's goal", runId: "${A.run}" }) { __typename } }`,
  );
  await asA(
    `mutation { dispatch(input: { runId: "${A.run}", action: { type: REQUEST_HUMAN_INPUT, payload: { pending_approval: { q: "ok?" } } } }) { __typename } }`,
  );
  await asA(
    `mutation { forkThread(input: { threadId: "${A.thread}", newThreadId: "${A.fork}" }) { __typename } }`,
  );
  await asA(`mutation { createThread(input: { threadId: "${A.spare}" }) { __typename } }`);
  const b = await t.gql(
    keyB,
    `mutation { createThread(input: { threadId: "${B.thread}" }) { __typename } }`,
  );
  expect(b.data.createThread.__typename).toBe('CreateThreadSuccess');
  await t.gql(
    keyB,
    `mutation { startRun(input: { threadId: "${B.thread}", goal: "B", runId: "${B.run}" }) { __typename } }`,
  );
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('tenant isolation', () => {
  const roots = {
    Query: [schema.getQueryType(), QUERIES],
    Mutation: [schema.getMutationType(), MUTATIONS],
    Subscription: [schema.getSubscriptionType(), SUBSCRIPTIONS],
  } as const;

  it('has a case for every query, mutation and subscription of the schema', () => {
    for (const [name, [type, cases]] of Object.entries(roots)) {
      expect(Object.keys(cases).sort(), name).toEqual(Object.keys(type!.getFields()).sort());
    }
  });

  it('denies tenant B every read and write of tenant A, as if A did not exist', async () => {
    const before = await asA(
      `query { thread(id: "${A.thread}") { logLength stateHash } run(id: "${A.run}") { status logIndex } }`,
    );
    let probes = 0;
    const denied: string[] = [];
    for (const [name, [, cases]] of Object.entries(roots)) {
      for (const [field, run] of Object.entries(cases)) {
        probes += await run();
        denied.push(`${name}.${field}`);
      }
    }
    const after = await asA(
      `query { thread(id: "${A.thread}") { logLength stateHash } run(id: "${A.run}") { status logIndex } }`,
    );
    // Only A's own writes (the run a-run-2 for the subscription cases) changed A's thread.
    expect(after.run).toEqual(before.run);
    const events = await asA(
      `query { thread(id: "${A.thread}") { events(first: 1000) { edges { node { entry } } } } }`,
    );
    expect(JSON.stringify(events)).not.toContain('"b"');
    console.log(
      `tenant isolation: ${probes}/${probes} probes denied over ${denied.length} root fields`,
    );
  }, 120_000);

  it('a run id of tenant A is free in tenant B, as a missing one is: its existence does not show', async () => {
    const r = await t.gql(
      keyB,
      `mutation { startRun(input: { threadId: "${B.thread}", goal: "mine", runId: "${A.run}" }) { ${ERR} ... on StartRunSuccess { run { id threadId goal } } } }`,
    );
    expect(r.data.startRun).toMatchObject({
      __typename: 'StartRunSuccess',
      run: { id: A.run, threadId: B.thread, goal: 'mine' },
    });
    // Each tenant sees its own run under that id.
    const own = await asA(`{ run(id: "${A.run}") { threadId goal } }`);
    expect(own.run).toEqual({ threadId: A.thread, goal: "A's goal" });
  });
});
