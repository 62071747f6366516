/**
 * A key without `read` cannot read stored data through what a mutation returns. Without `read`,
 * a mutation's response may hold only its receipt: `__typename`, the scalar fields of the
 * …Success payload and of the errors, and the `id` of each object the payload names. Anything
 * else is FORBIDDEN, naming the field, before anything is written — through the real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthApp, createAuthApp, first, type Json, type Response } from '../auth/support.js';

const SECRET = 'secret-7f3a';

let t: AuthApp;
let admin: string;
let write: string;

const code = (r: Response) => r.errors?.[0]?.extensions?.code;

async function logLength(threadId: string): Promise<number> {
  const r = await t.gql(admin, `{ thread(id: "${threadId}") { logLength } }`);
  return r.data.thread.logLength;
}

/** FORBIDDEN naming `field`, no data at all, no secret anywhere in the answer. */
function expectRefused(r: Response, field: string, path: string): void {
  expect(code(r), JSON.stringify(r)).toBe('FORBIDDEN');
  expect(r.errors?.[0]?.message).toContain(field);
  expect(r.errors?.[0]?.message).toContain('read');
  expect(r.errors?.[0]?.extensions).toMatchObject({ field, fieldPath: path });
  expect(r.data).toBeNull();
  expect(JSON.stringify(r)).not.toContain(SECRET);
}

beforeAll(async () => {
  t = await createAuthApp();
  admin = (await t.key('acme', ['admin'])).key;
  write = (await t.key('acme', ['write'])).key;
  const setup = [
    `createThread(input: { threadId: "t", metadata: { note: "${SECRET}" } }) { __typename }`,
    `remember(input: { threadId: "t", type: "memory", key: "k", content: "${SECRET}" }) { __typename }`,
    'startRun(input: { threadId: "t", goal: "g", runId: "r" }) { __typename }',
    `dispatch(input: { runId: "r", action: { type: UPDATE_MEMORY, payload: { updates: { s: "${SECRET}" } } } }) { __typename }`,
  ];
  for (const step of setup) {
    const r = await t.gql(admin, `mutation { ${step} }`);
    expect(JSON.stringify(r.data), JSON.stringify(r)).toContain('Success');
  }
}, 60_000);

afterAll(async () => {
  await t?.close();
});

/** Mutations whose results reach stored data, with the first field a write-only key may not read. */
const LEAKS: Array<{ name: string; mutation: string; field: string; path: string }> = [
  {
    name: 'remember',
    mutation: `remember(input: { threadId: "t", type: "memory", key: "k2", content: 1 }) {
      ... on RememberSuccess { logIndex thread { nodes { edges { node { payload } } } } memory { content } } }`,
    field: 'Thread.nodes',
    path: 'remember.thread.nodes',
  },
  {
    name: 'remember (memory)',
    mutation: `remember(input: { threadId: "t", type: "memory", key: "k2", content: 1 }) {
      ... on RememberSuccess { memory { content } } }`,
    field: 'MemoryItem.content',
    path: 'remember.memory.content',
  },
  {
    name: 'appendNodes',
    mutation: `appendNodes(input: { threadId: "t", nodes: [{ kind: INFERENCE, payload: { n: 1 } }] }) {
      ... on AppendNodesSuccess { nodes { id parents { payload } } } }`,
    field: 'CausalNode.parents',
    path: 'appendNodes.nodes.parents',
  },
  {
    name: 'startRun',
    mutation: `startRun(input: { threadId: "t", goal: "g2" }) {
      ... on StartRunSuccess { run { id thread { metadata } } } }`,
    field: 'Run.thread',
    path: 'startRun.run.thread',
  },
  {
    name: 'dispatch',
    mutation: `dispatch(input: { runId: "r", action: { type: GOTO_NODE, payload: { node_id: "n" } } }) {
      ... on DispatchSuccess { run { memory } } }`,
    field: 'Run.memory',
    path: 'dispatch.run.memory',
  },
  {
    name: 'forkThread',
    mutation: `forkThread(input: { threadId: "t", newThreadId: "fork" }) {
      ... on ForkThreadSuccess { thread { state } } }`,
    field: 'Thread.state',
    path: 'forkThread.thread.state',
  },
  {
    name: 'a fragment behind an alias and @include',
    mutation: `w: remember(input: { threadId: "t", type: "memory", key: "k3", content: 1 }) {
      ... on RememberSuccess { node { ...N } } }`,
    field: 'CausalNode.payload',
    path: 'w.node.payload',
  },
];

const FRAGMENT = 'fragment N on CausalNode { id payload @include(if: true) }';

describe('a write-only key', () => {
  it.each(LEAKS)(
    'reading through $name gets FORBIDDEN naming the field, no data, and nothing is written',
    async ({ mutation, field, path }) => {
      const before = await logLength('t');
      const query = `mutation { ${mutation} }${mutation.includes('...N') ? ` ${FRAGMENT}` : ''}`;
      expectRefused(await t.gql(write, query), field, path);
      expect(await logLength('t')).toBe(before);
      expect((await t.gql(admin, '{ thread(id: "fork") { id } }')).data.thread).toBeNull();
    },
  );

  it('is refused for the whole operation before its first mutation runs', async () => {
    const r = await t.gql(
      write,
      `mutation {
        a: createThread(input: { threadId: "never" }) { __typename }
        b: remember(input: { threadId: "t", type: "memory", key: "k4", content: 1 }) {
          ... on RememberSuccess { thread { metadata } } }
      }`,
    );
    expectRefused(r, 'Thread.metadata', 'b.thread.metadata');
    expect((await t.gql(admin, '{ thread(id: "never") { id } }')).data.thread).toBeNull();
  });

  it('gets the receipt of every write (ids, logIndex, error fields), and one field more is FORBIDDEN', async () => {
    const receipts: Array<{ mutation: string; more: string; field: string }> = [
      {
        mutation:
          'createThread(input: {}) { ... on CreateThreadSuccess { logIndex thread { id __typename } } }',
        more: 'thread { logLength }',
        field: 'Thread.logLength',
      },
      {
        mutation:
          'appendNodes(input: { threadId: "t", nodes: [{ kind: INFERENCE, payload: { n: 2 } }] }) { ... on AppendNodesSuccess { logIndex nodes { id } thread { id } } }',
        more: 'nodes { kind }',
        field: 'CausalNode.kind',
      },
      {
        mutation:
          'remember(input: { threadId: "t", type: "memory", key: "k5", content: 2 }) { ... on RememberSuccess { logIndex node { id } thread { id } } }',
        more: 'node { taint { source } }',
        field: 'CausalNode.taint',
      },
      {
        mutation:
          'startRun(input: { threadId: "t", goal: "g3" }) { ... on StartRunSuccess { logIndex run { id } } }',
        more: 'run { status }',
        field: 'Run.status',
      },
      {
        mutation:
          'forkThread(input: { threadId: "t" }) { ... on ForkThreadSuccess { logIndex thread { id } } }',
        more: 'thread { forkedFrom { upToIndex } }',
        field: 'Thread.forkedFrom',
      },
      {
        mutation:
          'recordUsage(input: { runId: "r", model: "m", inputTokens: 1, outputTokens: 1 }) { ... on RecordUsageSuccess { logIndex run { id } } }',
        more: 'run { spend { totalTokens } }',
        field: 'Run.spend',
      },
    ];
    for (const { mutation, more, field } of receipts) {
      const ok = await t.gql(write, `mutation { __typename ${mutation} }`);
      expect(ok.errors, JSON.stringify(ok)).toBeUndefined();
      const result = Object.values(ok.data as Json).find((v) => typeof v === 'object') as Json;
      expect(result.logIndex).toEqual(expect.any(Number));
      expect(JSON.stringify(ok)).not.toContain(SECRET);
      const refused = await t.gql(
        write,
        `mutation { ${mutation.replace(/ } }$/, ` ${more} } }`)} }`,
      );
      expect(code(refused), field).toBe('FORBIDDEN');
      expect(refused.errors?.[0]?.extensions?.field).toBe(field);
      expect(refused.data).toBeNull();
    }
    const failed = await t.gql(
      write,
      `mutation {
        appendNodes(input: { threadId: "missing", nodes: [{ kind: INFERENCE, payload: { n: 3 } }] }) {
          __typename ... on Error { code message } ... on NotFoundError { id entity }
          ... on ValidationError { issues { path message } nodeId } }
        cancelRun(input: { runId: "r", reason: "" }) { __typename ... on CancelRunSuccess { run { id } }
          ... on InvalidTransitionError { from to } }
      }`,
    );
    expect(failed.errors, JSON.stringify(failed)).toBeUndefined();
    expect(failed.data.appendNodes).toMatchObject({ code: 'NOT_FOUND', id: 'missing' });
    expect(failed.data.cancelRun).toEqual({ __typename: 'CancelRunSuccess', run: { id: 'r' } });
    const errorDetail = await t.gql(
      write,
      'mutation { cancelRun(input: { runId: "r" }) { ... on InvalidTransitionError { from to } ... on CancelRunSuccess { run { lastError } } } }',
    );
    expect(code(errorDetail)).toBe('FORBIDDEN');
    expect(errorDetail.errors?.[0]?.extensions?.field).toBe('Run.lastError');
  });
});

describe('keys with read', () => {
  it('the selection refused to a write key is answered in full to a read+write key and to an admin key', async () => {
    const selection = `remember(input: { threadId: "t", type: "memory", key: "k", content: "${SECRET}" }) {
      ... on RememberSuccess { logIndex memory { content } thread { metadata } } }`;
    expectRefused(
      await t.gql(write, `mutation { ${selection} }`),
      'MemoryItem.content',
      'remember.memory.content',
    );
    const readWrite = (await t.key('acme', ['read', 'write'])).key;
    for (const key of [readWrite, admin]) {
      const r = await t.gql(key, `mutation { ${selection} }`);
      expect(r.errors, JSON.stringify(r)).toBeUndefined();
      expect(r.data.remember.memory.content).toBe(SECRET);
      expect(r.data.remember.thread.metadata).toEqual({ note: SECRET });
    }
  });
});

describe('an approve-only key', () => {
  it('resolves an approval and gets its receipt, but reading the run is FORBIDDEN and resolves nothing', async () => {
    const approve = (await t.key('acme', ['approve'])).key;
    await t.gql(
      admin,
      'mutation { startRun(input: { threadId: "t", goal: "a", runId: "ra" }) { __typename } }',
    );
    const wait = await t.gql(
      admin,
      `mutation { dispatch(input: { runId: "ra", action: { type: REQUEST_HUMAN_INPUT, payload: { pending_approval: { q: "${SECRET}" } } } }) { __typename } }`,
    );
    expect(wait.data.dispatch.__typename).toBe('DispatchSuccess');
    const refused = await t.gql(
      approve,
      'mutation { resolveApproval(input: { runId: "ra", decision: "approved" }) { ... on ResolveApprovalSuccess { run { status pendingApproval } } } }',
    );
    expectRefused(refused, 'Run.status', 'resolveApproval.run.status');
    const still = await t.gql(admin, '{ run(id: "ra") { status } }');
    expect(still.data.run.status).toBe('WAITING');
    const ok = await t.gql(
      approve,
      'mutation { resolveApproval(input: { runId: "ra", decision: "approved" }) { __typename ... on ResolveApprovalSuccess { logIndex run { id } } } }',
    );
    expect(ok.errors, JSON.stringify(ok)).toBeUndefined();
    expect(ok.data.resolveApproval).toMatchObject({
      __typename: 'ResolveApprovalSuccess',
      run: { id: 'ra' },
    });
    expect((await t.gql(admin, '{ run(id: "ra") { status } }')).data.run.status).toBe('RUNNING');
  });
});

describe('subscriptions', () => {
  it('a read key still streams full events; a refused write-only mutation publishes none', async () => {
    const read = (await t.key('acme', ['read'])).key;
    const last = (await logLength('t')) - 1;
    const stream = await t.sse(
      read,
      `subscription { threadEvents(threadId: "t", afterIndex: ${last}) { index type entry } }`,
    );
    try {
      const refused = await t.gql(
        write,
        'mutation { remember(input: { threadId: "t", type: "memory", key: "k6", content: 6 }) { ... on RememberSuccess { memory { content } } } }',
      );
      expect(code(refused)).toBe('FORBIDDEN');
      const appended = await t.gql(
        write,
        `mutation { appendNodes(input: { threadId: "t", nodes: [{ kind: INFERENCE, payload: { m: "${SECRET}" } }] }) { __typename } }`,
      );
      expect(appended.data.appendNodes.__typename).toBe('AppendNodesSuccess');
      const event = await first(stream);
      expect(event.errors).toBeUndefined();
      expect(event.data.threadEvents.index).toBe(last + 1);
      expect(JSON.stringify(event.data.threadEvents.entry)).toContain(SECRET);
      const denied = await t.sse(write, 'subscription { threadEvents(threadId: "t") { index } }');
      expect(code(await first(denied))).toBe('FORBIDDEN');
      await denied.return?.();
    } finally {
      await stream.return?.();
    }
  });
});
