/**
 * Large pages take turns per caller: an operation asking for HEAVY_ITEMS or more items waits while
 * another large one of the same caller runs; other callers and small operations never wait; a
 * caller with MAX_WAITING already waiting gets 429 TOO_MANY_REQUESTS; a waiting one starts after a
 * pause as long as the last one ran (at most MAX_PAUSE_MS). The turn-taking is checked
 * on the plugin with executions we finish by hand (so the order is exact, not timed); the wiring
 * through the real server with concurrent large pages.
 */
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createFairExecution,
  HEAVY_ITEMS,
  HEAVY_SHARE,
  MAX_PAUSE_MS,
  MAX_WAITING,
  pauseAfter,
  requestedItems,
} from '../../src/server/fair-execution.js';
import { type AuthApp, createAuthApp } from '../auth/support.js';

describe('requestedItems', () => {
  const items = (query: string, variables?: Record<string, unknown>) =>
    requestedItems(parse(query), undefined, variables);

  it('multiplies page sizes along a path and takes the largest path', () => {
    expect(items('{ __typename }')).toBe(1);
    expect(items('{ thread(id: "t") { nodes(first: 1000) { edges { cursor } } } }')).toBe(1000);
    expect(
      items('{ threads(first: 20) { edges { node { nodes(first: 50) { edges { cursor } } } } } }'),
    ).toBe(1000);
    expect(
      items(
        '{ a: threads(first: 3) { edges { cursor } } b: runs(last: 400) { edges { cursor } } }',
      ),
    ).toBe(400);
    expect(
      items('query($n: Int) { thread(id: "t") { nodes(first: $n) { edges { cursor } } } }', {
        n: 700,
      }),
    ).toBe(700);
  });

  it('follows fragments (once per path, so a cycle cannot loop) and inline fragments', () => {
    expect(
      items(
        'query { threads(first: 10) { ...T } } fragment T on ThreadConnection { edges { node { ... on Thread { nodes(first: 30) { edges { cursor } } } } } }',
      ),
    ).toBe(300);
    expect(items('query { threads(first: 10) { ...A } } fragment A on X { ...A }')).toBe(10);
  });
});

/** A hand-finished execution: onExecute's wrapped executeFn, resolved when we say. */
function harness() {
  const fair = createFairExecution();
  const started: string[] = [];
  const finish = new Map<string, () => void>();
  const run = (name: string, caller: string, first: number) => {
    let execute: ((args: unknown) => Promise<unknown>) | undefined;
    const executeFn = () =>
      new Promise((resolve) => {
        started.push(name);
        finish.set(name, () => resolve(name));
      });
    const args = {
      document: parse(`{ thread(id: "t") { nodes(first: ${first}) { edges { cursor } } } }`),
      operationName: undefined,
      variableValues: {},
      contextValue: { auth: { keyId: caller, tenant: 't' } },
    };
    (fair.plugin.onExecute as (p: unknown) => void)({
      args,
      executeFn,
      setExecuteFn: (fn: (args: unknown) => Promise<unknown>) => {
        execute = fn;
      },
    });
    return execute === undefined ? executeFn() : execute(args);
  };
  return { fair, started, finish, run };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('turns', () => {
  it('runs one large operation per caller at a time, in order; others do not wait', async () => {
    const h = harness();
    const a1 = h.run('a1', 'A', 1000);
    const a2 = h.run('a2', 'A', 1000);
    const a3 = h.run('a3', 'A', HEAVY_ITEMS);
    const b1 = h.run('b1', 'B', 1000);
    const aSmall = h.run('aSmall', 'A', HEAVY_ITEMS - 1);
    await tick();
    expect(h.started).toEqual(['a1', 'b1', 'aSmall']);
    expect(h.fair.waiting()).toBe(2);
    h.finish.get('a1')!();
    await a1;
    await vi.waitFor(() => expect(h.started).toEqual(['a1', 'b1', 'aSmall', 'a2']));
    h.finish.get('a2')!();
    await a2;
    await vi.waitFor(() => expect(h.started.at(-1)).toBe('a3'));
    for (const name of ['a3', 'b1', 'aSmall']) h.finish.get(name)!();
    expect(await Promise.all([a3, b1, aSmall])).toEqual(['a3', 'b1', 'aSmall']);
    expect(h.fair.waiting()).toBe(0);
  });

  it('refuses a large operation with 429 TOO_MANY_REQUESTS once MAX_WAITING wait for that caller', async () => {
    const h = harness();
    const running = h.run('first', 'A', 1000);
    const queued = Array.from({ length: MAX_WAITING }, (_, i) => h.run(`q${i}`, 'A', 1000));
    const refused = await h.run('over', 'A', 1000).then(
      () => undefined,
      (error: { extensions?: { code?: string; http?: { status?: number } } }) => error,
    );
    expect(refused?.extensions?.code).toBe('TOO_MANY_REQUESTS');
    expect(refused?.extensions?.http?.status).toBe(429);
    // Another caller is not affected.
    const other = h.run('B', 'B', 1000);
    await tick();
    expect(h.started).toContain('B');
    h.finish.get('first')!();
    h.finish.get('B')!();
    await Promise.all([running, other]);
    for (let i = 0; i < MAX_WAITING; i++) {
      await vi.waitFor(() => expect(h.finish.has(`q${i}`)).toBe(true));
      h.finish.get(`q${i}`)!();
      await queued[i];
    }
    expect(h.fair.waiting()).toBe(0);
  });
});

describe('pauses', () => {
  it('give a caller at most HEAVY_SHARE of the time back to back, never more than MAX_PAUSE_MS', () => {
    expect(HEAVY_SHARE).toBe(0.5);
    expect(pauseAfter(0)).toBe(0);
    expect(pauseAfter(-3)).toBe(0);
    expect(pauseAfter(8)).toBe(8);
    expect(pauseAfter(MAX_PAUSE_MS * 10)).toBe(MAX_PAUSE_MS);
  });
});

describe('through the server', () => {
  let t: AuthApp;
  let url: string;
  let admin: string;
  let reader: string;

  beforeAll(async () => {
    t = await createAuthApp();
    admin = (await t.key('acme', ['admin'])).key;
    reader = (await t.key('acme', ['read'])).key;
    url = await t.listen();
    await t.gql(admin, 'mutation { createThread(input: { threadId: "big" }) { __typename } }');
    const nodes = Array.from({ length: 300 }, (_, i) => ({ kind: 'ANSWER', payload: { i } }));
    const appended = await t.gql(
      admin,
      'mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "big", nodes: $n }) { __typename } }',
      { n: nodes },
    );
    expect(appended.data.appendNodes.__typename).toBe('AppendNodesSuccess');
  });
  afterAll(() => t?.close());

  const post = (key: string, query: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('answers every one of many concurrent large pages of one key, each whole or refused with a typed 429', async () => {
    const page = '{ thread(id: "big") { nodes(first: 300) { edges { node { sequence } } } } }';
    const answers = await Promise.all([
      ...Array.from({ length: 48 }, () => post(admin, page)),
      post(reader, '{ __typename }'),
    ]);
    const small = answers.pop()!;
    expect(small.status).toBe(200);
    let whole = 0;
    for (const a of answers) {
      if (a.status === 200) {
        expect(a.body.data.thread.nodes.edges).toHaveLength(300);
        whole++;
      } else {
        expect(a.status).toBe(429);
        expect(a.body.errors[0].extensions.code).toBe('TOO_MANY_REQUESTS');
      }
    }
    expect(whole).toBeGreaterThan(0);
  });
});
