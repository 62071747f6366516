/**
 * Redaction through the API on both backends: redactNodes (scope write) answers which nodes it
 * redacted; the tombstone shows in `thread { nodes }` (with `redaction`), in `state` (the
 * AgentState export, also at an earlier index), in `events` and to a live `threadEvents`
 * subscriber (who also gets the `nodes_redacted` entry), in the thread's fork, and in `weft
 * export`, whose file imports into a fresh database and verifies; `verify(strict)` reports the
 * redacted nodes; search no longer finds their text; bad input is a typed error.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'graphql-ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import {
  freshSqliteUrl,
  type LiveServer,
  type Payload,
  removeSqliteFiles,
  startServer,
  takeData,
  wsClient,
  wsSubscribe,
} from './subscriptions-support.js';

const ROOT = join(import.meta.dirname, '../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const MAIN = join(ROOT, 'src/cli/main.ts');
const SECRET = 'passport X1234567';

const REDACT = `mutation ($input: RedactNodesInput!) { redactNodes(input: $input) {
  __typename
  ... on RedactNodesSuccess { threadId redactedNodeIds alreadyRedactedNodeIds logLength thread { logLength } }
  ... on Error { code message } ... on ValidationError { issues { path } } } }`;

async function gql(server: LiveServer, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await response.json()) as Payload;
}

function weft(args: string[], env: Record<string, string>) {
  const result = spawnSync(TSX, [MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

function redactionApi(
  open: () => Promise<{ server: LiveServer; url: string; fresh: () => Promise<string> }>,
) {
  let server: LiveServer | undefined;
  let client: Client | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await client?.dispose();
    await server?.close();
    server = undefined;
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the tombstone in nodes, state, events, subscriptions, forks and export', async () => {
    const opened = await open();
    server = opened.server;
    const s = server;
    const created = await gql(
      s,
      `mutation {
      createThread(input: { threadId: "chat" }) { __typename }
    }`,
    );
    expect(created.errors).toBeUndefined();
    const appended = await gql(
      s,
      `mutation ($input: AppendNodesInput!) { appendNodes(input: $input) {
        ... on AppendNodesSuccess { nodes { id } } ... on Error { code message } } }`,
      {
        input: {
          threadId: 'chat',
          nodes: [
            { kind: 'GOAL', payload: { text: 'renew my passport' } },
            { kind: 'TOOL_RESULT', payload: { text: SECRET } },
          ],
        },
      },
    );
    const [goal, secret] = appended.data.appendNodes.nodes.map((n: { id: string }) => n.id);
    const SEARCH = `{ searchNodes(query: "X1234567") { edges { node { threadId node { id } } } } }`;
    const found = await gql(s, SEARCH);
    expect(found.errors).toBeUndefined();
    expect(found.data.searchNodes.edges).toHaveLength(1);
    const LEAN_SEARCH = `{ searchNodes(query: "X1234567") { edges { node { score snippet { text } } } } }`;
    const leanBefore = await gql(s, LEAN_SEARCH);
    expect(leanBefore.data.searchNodes.edges[0].node.snippet.text).toContain('X1234567');
    const fork = await gql(
      s,
      `mutation { forkThread(input: { threadId: "chat", newThreadId: "alt" }) { __typename } }`,
    );
    expect(fork.errors).toBeUndefined();

    client = wsClient(s.url);
    const live = wsSubscribe(
      client,
      `subscription { threadEvents(threadId: "alt", afterIndex: -1) { index type entry } }`,
    );
    const before = wsSubscribe(
      client,
      `subscription { nodeAppended(threadId: "chat", afterSequence: 0) { id payload } }`,
    );
    expect(JSON.stringify(await takeData(before, 2))).toContain(SECRET);
    await before.return?.();
    expect((await takeData(live, 3)).map((d) => d.threadEvents.type)).toEqual([
      'thread_created',
      'nodes_appended',
      'thread_forked',
    ]);

    const redacted = await gql(s, REDACT, {
      input: { threadId: 'chat', nodeIds: [secret, secret], reason: 'user asked to forget' },
    });
    expect(redacted.data.redactNodes).toEqual({
      __typename: 'RedactNodesSuccess',
      threadId: 'chat',
      redactedNodeIds: [secret],
      alreadyRedactedNodeIds: [],
      logLength: 3,
      thread: { logLength: 3 },
    });
    // The fork's subscriber sees its own record of the redaction, live.
    const [event] = await takeData(live, 1);
    expect(event.threadEvents).toMatchObject({
      index: 3,
      type: 'nodes_redacted',
      entry: { event: { reason: 'user asked to forget', nodes: [{ id: secret, index: 1 }] } },
    });
    await live.return?.();
    // A subscriber replaying now (the pages and derived events were read before the
    // redaction) gets the tombstone, never the cached payload.
    const replayed = wsSubscribe(
      client,
      `subscription { nodeAppended(threadId: "chat", afterSequence: 0) { id payload } }`,
    );
    const nodesAgain = (await takeData(replayed, 2)).map((d) => d.nodeAppended);
    await replayed.return?.();
    expect(nodesAgain.find((n: { id: string }) => n.id === secret).payload).toHaveProperty([
      'weft:redacted',
      'reason',
    ]);
    const eventsAgain = wsSubscribe(
      client,
      `subscription { threadEvents(threadId: "alt", afterIndex: -1) { index entry } }`,
    );
    const entriesAgain = await takeData(eventsAgain, 4);
    await eventsAgain.return?.();
    expect(JSON.stringify(entriesAgain)).not.toContain(SECRET);

    const tomb = {
      'weft:redacted': { reason: 'user asked to forget', redactedAt: expect.any(String) },
    };
    for (const id of ['chat', 'alt']) {
      const read = await gql(
        s,
        `query ($id: ID!) { thread(id: $id) {
          nodes { edges { node { id kind payload redaction { reason redactedAt } } } }
          state
          earlier: state(atIndex: 2)
          events(first: 10) { edges { node { index type entry } } }
          verify(strict: true) { ok redactedNodes { nodeId index recorded } }
        } }`,
        { id },
      );
      expect(read.errors, id).toBeUndefined();
      const th = read.data.thread;
      const nodes = th.nodes.edges.map((e: { node: unknown }) => e.node);
      expect(nodes, id).toContainEqual({
        id: secret,
        kind: 'TOOL_RESULT',
        payload: tomb,
        redaction: { reason: 'user asked to forget', redactedAt: expect.any(String) },
      });
      expect(nodes.find((n: { id: string }) => n.id === goal).redaction, id).toBeNull();
      expect(th.state.nodes, id).toContainEqual(
        expect.objectContaining({ id: secret, payload: tomb }),
      );
      expect(th.earlier.nodes, id).toContainEqual(
        expect.objectContaining({ id: secret, payload: tomb }),
      );
      expect(JSON.stringify(th.events), id).not.toContain(SECRET);
      expect(th.events.edges.at(-1).node.type, id).toBe('nodes_redacted');
      expect(th.verify, id).toEqual({
        ok: true,
        redactedNodes: [{ nodeId: secret, index: 1, recorded: true }],
      });
    }
    const after = await gql(s, SEARCH);
    expect(after.errors).toBeUndefined();
    expect(after.data.searchNodes.edges).toEqual([]);
    // A search that does not select the node (so never reads it) withholds the snippet too.
    const lean = await gql(s, LEAN_SEARCH);
    expect(lean.errors).toBeUndefined();
    expect(lean.data.searchNodes.edges).toEqual([]);

    // `weft export` writes the redacted log; it imports into a fresh database and verifies.
    const dir = mkdtempSync(join(tmpdir(), 'weft-redact-'));
    dirs.push(dir);
    const file = join(dir, 'chat.jsonl');
    const exported = weft(['export', 'chat', '--out', file], { DATABASE_URL: opened.url });
    expect(exported.code, exported.err).toBe(0);
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(SECRET);
    expect(text).toContain('weft:redacted');
    const target = await opened.fresh();
    const imported = weft(['import', file], { DATABASE_URL: target });
    expect(imported.code, imported.err).toBe(0);
    const verified = weft(['verify', 'chat'], { DATABASE_URL: target });
    expect(verified.code, verified.err + verified.out).toBe(0);
  });

  it('answers bad input with typed errors and writes nothing', async () => {
    const opened = await open();
    server = opened.server;
    const s = server;
    await gql(s, 'mutation { createThread(input: { threadId: "t" }) { __typename } }');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ threadId: 'nope', nodeIds: ['cw_x'], reason: 'r' }, 'NotFoundError'],
      [{ threadId: 't', nodeIds: ['cw_000000000000000000000000'], reason: 'r' }, 'NotFoundError'],
      [{ threadId: 't', nodeIds: [], reason: 'r' }, 'ValidationError'],
      [{ threadId: 't', nodeIds: ['cw_x'], reason: '' }, 'ValidationError'],
      [{ threadId: 't', nodeIds: Array(1001).fill('cw_x'), reason: 'r' }, 'ValidationError'],
      [{ threadId: 'x'.repeat(5000), nodeIds: ['cw_x'], reason: 'r' }, 'ValidationError'],
    ];
    for (const [input, typename] of cases) {
      const answer = await gql(s, REDACT, { input });
      expect(answer.data?.redactNodes?.__typename, JSON.stringify(input).slice(0, 60)).toBe(
        typename,
      );
    }
    const state = await gql(s, '{ thread(id: "t") { logLength } }');
    expect(state.data.thread.logLength).toBe(1);
  });
}

describe('redaction over the API [sqlite]', () => {
  afterEach(() => removeSqliteFiles());
  redactionApi(async () => {
    const url = await freshSqliteUrl();
    return { server: await startServer(url), url, fresh: freshSqliteUrl };
  });
});

describeWithPostgres('redaction over the API', () => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });
  const fresh = async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    await migrate(db.url);
    return db.url;
  };
  redactionApi(async () => {
    const url = await fresh();
    return { server: await startServer(url), url, fresh };
  });
});
