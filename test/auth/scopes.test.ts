/**
 * Scopes and authentication: a `read` key cannot mutate (FORBIDDEN), only an `approve`
 * key resolves approvals, a caller without a valid key is UNAUTHENTICATED over HTTP, SSE and
 * graphql-ws, and a revoked key stops at once — for new requests and open subscriptions alike.
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { schema } from '../../src/graphql/schema.js';
import { type AuthApp, createAuthApp, first, type Json } from './support.js';

let t: AuthApp;
let admin: string;

const MUTATIONS: Record<string, string> = {
  createThread: 'createThread(input: { threadId: "x-new" }) { __typename }',
  importState:
    'importState(input: { threadId: "x-imp", state: { schema_version: 1, nodes: [] } }) { __typename }',
  appendNodes:
    'appendNodes(input: { threadId: "t", nodes: [{ kind: INFERENCE, payload: { n: 1 } }] }) { __typename }',
  remember:
    'remember(input: { threadId: "t", type: "memory", key: "k", content: 1 }) { __typename }',
  forkThread: 'forkThread(input: { threadId: "t", newThreadId: "x-fork" }) { __typename }',
  deleteThread: 'deleteThread(input: { threadId: "t" }) { __typename }',
  redactNodes:
    'redactNodes(input: { threadId: "t", nodeIds: ["cw_x"], reason: "r" }) { __typename }',
  setThreadExpiry:
    'setThreadExpiry(input: { threadId: "t", expiresAt: "2030-01-01T00:00:00Z" }) { __typename }',
  startRun: 'startRun(input: { threadId: "t", goal: "g", runId: "x-run" }) { __typename }',
  dispatch:
    'dispatch(input: { runId: "r", action: { type: UPDATE_MEMORY, payload: { updates: { a: 1 } } } }) { __typename }',
  resolveApproval: 'resolveApproval(input: { runId: "r", decision: "approved" }) { __typename }',
  cancelRun: 'cancelRun(input: { runId: "r" }) { __typename }',
  recordUsage:
    'recordUsage(input: { runId: "r", model: "m", inputTokens: 1, outputTokens: 1 }) { __typename }',
  importWorkflowState:
    'importWorkflowState(input: { threadId: "t", state: { run_id: "x-imported" } }) { __typename }',
};

const APPEND = MUTATIONS.appendNodes!;

const code = (r: { errors?: Array<{ extensions?: Json }> }) => r.errors?.[0]?.extensions?.code;

async function logLength(): Promise<number> {
  const r = await t.gql(admin, '{ thread(id: "t") { logLength } }');
  return r.data.thread.logLength;
}

async function waitingRun() {
  const r = await t.gql(
    admin,
    'mutation { dispatch(input: { runId: "r", action: { type: REQUEST_HUMAN_INPUT, payload: { pending_approval: { q: "?" } } } }) { __typename ... on Error { message } } }',
  );
  expect(r.data.dispatch.__typename, JSON.stringify(r)).toBe('DispatchSuccess');
}

beforeAll(async () => {
  t = await createAuthApp();
  admin = (await t.key('acme', ['admin'])).key;
  await t.gql(admin, 'mutation { createThread(input: { threadId: "t" }) { __typename } }');
  await t.gql(
    admin,
    'mutation { startRun(input: { threadId: "t", goal: "g", runId: "r" }) { __typename } }',
  );
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('scopes', () => {
  it('lists a mutation for every Mutation field', () => {
    expect(Object.keys(MUTATIONS).sort()).toEqual(
      Object.keys(schema.getMutationType()!.getFields()).sort(),
    );
  });

  it('a read key reads but every mutation is FORBIDDEN and writes nothing', async () => {
    const read = (await t.key('acme', ['read'])).key;
    const before = await logLength();
    expect((await t.gql(read, '{ thread(id: "t") { id } }')).data.thread.id).toBe('t');
    for (const [field, selection] of Object.entries(MUTATIONS)) {
      const r = await t.gql(read, `mutation { ${selection} }`);
      expect(code(r), field).toBe('FORBIDDEN');
      expect(r.data, field).toBeNull();
    }
    expect(await logLength()).toBe(before);
  });

  it('a write key writes but cannot resolve an approval, and cannot read', async () => {
    const write = (await t.key('acme', ['write'])).key;
    const r = await t.gql(
      write,
      'mutation { appendNodes(input: { threadId: "t", nodes: [{ kind: INFERENCE, payload: { w: 1 } }] }) { __typename } }',
    );
    expect(r.data.appendNodes.__typename).toBe('AppendNodesSuccess');
    expect(code(await t.gql(write, '{ thread(id: "t") { id } }'))).toBe('FORBIDDEN');
    await waitingRun();
    const denied = await t.gql(write, `mutation { ${MUTATIONS.resolveApproval} }`);
    expect(code(denied)).toBe('FORBIDDEN');
    const run = await t.gql(admin, '{ run(id: "r") { status } }');
    expect(run.data.run.status).toBe('WAITING');
  });

  it('only an approve key resolves approvals; it cannot write otherwise', async () => {
    const approve = (await t.key('acme', ['approve'])).key;
    expect(code(await t.gql(approve, `mutation { ${MUTATIONS.appendNodes} }`))).toBe('FORBIDDEN');
    const r = await t.gql(
      approve,
      'mutation { resolveApproval(input: { runId: "r", decision: "approved" }) { __typename ... on ResolveApprovalSuccess { run { id } } } }',
    );
    expect(r.data.resolveApproval).toEqual({
      __typename: 'ResolveApprovalSuccess',
      run: { id: 'r' },
    });
    // Without read, the run's state is not part of the answer; an admin reads it.
    const run = await t.gql(admin, '{ run(id: "r") { status } }');
    expect(run.data.run.status).toBe('RUNNING');
  });

  it('subscriptions need read, checked when they are created', async () => {
    const write = (await t.key('acme', ['write'])).key;
    const stream = await t.sse(write, 'subscription { threadEvents(threadId: "t") { index } }');
    expect(code(await first(stream))).toBe('FORBIDDEN');
    await stream.return?.();
  });
});

describe('authentication', () => {
  it('no key, a malformed, unknown or revoked key: UNAUTHENTICATED for queries, mutations, subscriptions', async () => {
    const revoked = await t.key('acme', ['admin']);
    await t.keys.revoke(revoked.id);
    const callers = [
      undefined,
      'not-a-key',
      `weft_0123456789abcdef_${'A'.repeat(43)}`,
      `${admin.slice(0, -1)}${admin.endsWith('A') ? 'B' : 'A'}`,
      revoked.key,
    ];
    for (const key of callers) {
      const query = await t.gql(key, '{ thread(id: "t") { id } threads { edges { cursor } } }');
      expect(code(query), String(key)).toBe('UNAUTHENTICATED');
      // Refused before the document is parsed: a request error (401), no data at all.
      expect(query.status, String(key)).toBe(401);
      expect(query.data).toBeUndefined();
      expect(code(await t.gql(key, `mutation { ${MUTATIONS.createThread} }`))).toBe(
        'UNAUTHENTICATED',
      );
      const stream = await t.sse(key, 'subscription { threadEvents(threadId: "t") { index } }');
      expect(code(await first(stream))).toBe('UNAUTHENTICATED');
      await stream.return?.();
    }
    const noKey = await t.gql(undefined, '{ thread(id: "t") { id } }');
    expect(noKey.errors?.[0]?.message).toContain('weft keys create');
  });

  it('a key stops working at once when revoked', async () => {
    const key = await t.key('acme', ['read']);
    expect((await t.gql(key.key, '{ thread(id: "t") { id } }')).data.thread.id).toBe('t');
    await t.keys.revoke(key.id);
    expect(code(await t.gql(key.key, '{ thread(id: "t") { id } }'))).toBe('UNAUTHENTICATED');
  });

  it('an open subscription ends with UNAUTHENTICATED at its next event after revocation (SSE)', async () => {
    const key = await t.key('acme', ['read']);
    const stream = await t.sse(key.key, 'subscription { threadEvents(threadId: "t") { index } }');
    await t.gql(admin, `mutation { ${APPEND.replace('n: 1', 'n: 2')} }`);
    expect((await first(stream)).data.threadEvents.index).toBeGreaterThan(0);
    await t.keys.revoke(key.id);
    await t.gql(admin, `mutation { ${APPEND.replace('n: 1', 'n: 3')} }`);
    const after = await first(stream);
    expect(code(after)).toBe('UNAUTHENTICATED');
    expect(after.data).toBeUndefined();
    expect((await stream.next()).done).toBe(true);
  });

  it('an idle subscription ends with UNAUTHENTICATED soon after revocation, with no event', async () => {
    const key = await t.key('acme', ['read']);
    const stream = await t.sse(key.key, 'subscription { threadEvents(threadId: "t") { index } }');
    await t.keys.revoke(key.id);
    // No commit: the periodic re-check (revalidateMs, 50 ms here) ends it.
    expect(code(await first(stream))).toBe('UNAUTHENTICATED');
    expect((await stream.next()).done).toBe(true);
  });

  it('graphql-ws: connectionParams.authorization authenticates; revocation ends an open subscription', async () => {
    const url = (await t.listen()).replace(/^http/, 'ws');
    const key = await t.key('acme', ['read']);
    const client = (authorization?: string) =>
      createClient({
        url,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: true,
        ...(authorization === undefined ? {} : { connectionParams: { authorization } }),
      });
    const anonymous = client();
    const keyed = client(`Bearer ${key.key}`);
    try {
      const denied = anonymous.iterate({
        query: 'subscription { threadEvents(threadId: "t") { index } }',
      });
      // Refused at connection_init: the socket closes with 4403, its reason naming the code.
      const refused = (await denied.next().catch((e: unknown) => e)) as {
        code?: number;
        reason?: string;
      };
      expect(refused.code).toBe(4403);
      expect(refused.reason).toContain('UNAUTHENTICATED');
      const last = (await logLength()) - 1;
      const events = keyed.iterate({
        query: `subscription { threadEvents(threadId: "t", afterIndex: ${last}) { index } }`,
      });
      const next = events.next();
      await t.gql(admin, `mutation { ${APPEND.replace('n: 1', 'n: 4')} }`);
      expect(((await next).value as Json).data.threadEvents.index).toBe(last + 1);
      await t.keys.revoke(key.id);
      await t.gql(admin, `mutation { ${APPEND.replace('n: 1', 'n: 5')} }`);
      const ended = await events.next().catch((e: unknown) => e);
      expect(JSON.stringify(ended)).toContain('UNAUTHENTICATED');
      expect(JSON.stringify(ended)).not.toContain(`"index":${last + 2}`);
    } finally {
      await anonymous.dispose();
      await keyed.dispose();
    }
  });
});
