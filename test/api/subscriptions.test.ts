/**
 * The Subscription fields over a real port: graphql-ws (WebSocket) and SSE clients
 * against a server whose engine publishes to the event hub. Cursors make these tests
 * independent of when the server attaches: each subscribes after a known index, then appends.
 */

import type { Client } from 'graphql-ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/index.js';
import {
  freshSqliteUrl,
  type LiveServer,
  type Payload,
  removeSqliteFiles,
  sseSubscribe,
  startServer,
  takeData,
  wsClient,
  wsSubscribe,
} from './subscriptions-support.js';

const THREAD_EVENTS = `subscription ($threadId: ID!, $afterIndex: Int) {
  threadEvents(threadId: $threadId, afterIndex: $afterIndex) { threadId index id type recordedAt entry }
}`;
const NODE_APPENDED = `subscription ($threadId: ID!, $afterSequence: Int, $kinds: [NodeKind!]) {
  nodeAppended(threadId: $threadId, afterSequence: $afterSequence, kinds: $kinds) {
    id kind sequence payload logIndex parentIds parents { id }
  }
}`;
const RUN_STATUS = `subscription ($threadId: ID, $runId: ID, $afterIndex: Int) {
  runStatusChanged(threadId: $threadId, runId: $runId, afterIndex: $afterIndex) {
    from to logIndex run { id status goal }
  }
}`;
const APPROVALS = `subscription ($threadId: ID, $afterIndex: Int) {
  approvalRequested(threadId: $threadId, afterIndex: $afterIndex) {
    waitingFor pendingApproval timeoutAt logIndex run { id status }
  }
}`;

let server: LiveServer;
let clients: Client[] = [];

afterEach(async () => {
  for (const client of clients) await client.dispose();
  clients = [];
  await server?.close();
});
afterAll(() => removeSqliteFiles());

async function open(): Promise<LiveServer> {
  server = await startServer(await freshSqliteUrl());
  return server;
}

function client(): Client {
  const c = wsClient(server.url);
  clients.push(c);
  return c;
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

async function append(engine: Engine, threadId: string, count: number, kind = 'inference') {
  for (let i = 0; i < count; i++) {
    must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: kind as 'inference', payload: { i, kind } }],
      }),
    );
  }
}

async function withRun(engine: Engine, threadId: string, runId: string) {
  must(await engine.createThread({ threadId }));
  must(await engine.startRun({ threadId, goal: 'write a haiku', runId }));
}

const transports = {
  'graphql-ws': (query: string, variables: Record<string, unknown>) =>
    wsSubscribe(client(), query, variables),
  SSE: (query: string, variables: Record<string, unknown>) =>
    sseSubscribe(server.url, query, variables),
  'SSE in process (yoga.fetch)': (query: string, variables: Record<string, unknown>) =>
    sseSubscribe('http://weft.test/graphql', query, variables, (url, init) =>
      Promise.resolve(server.app.yoga.fetch(url, init)),
    ),
};

for (const [transport, subscribe] of Object.entries(transports)) {
  describe(`subscriptions over ${transport}`, () => {
    it('threadEvents replays after afterIndex, then continues live', async () => {
      const { engine } = await open();
      must(await engine.createThread({ threadId: 't' }));
      await append(engine, 't', 3);
      const stream = subscribe(THREAD_EVENTS, { threadId: 't', afterIndex: 1 });
      const replayed = await takeData(stream, 2);
      await append(engine, 't', 2);
      const live = await takeData(stream, 2);
      await stream.return?.();
      const events = [...replayed, ...live].map((d) => d.threadEvents);
      expect(events.map((e) => e.index)).toEqual([2, 3, 4, 5]);
      const stored = await engine.store.readEntries('t', 2, 6);
      expect(events.map((e) => e.entry)).toEqual(stored);
      expect(events[0]).toMatchObject({ threadId: 't', id: stored[0]!.id, type: 'nodes_appended' });
      expect(new Date(events[0].recordedAt).toISOString()).toBe(stored[0]!.recordedAt);
    });

    it('nodeAppended replays after afterSequence with a kinds filter, then live, with links', async () => {
      const { engine } = await open();
      must(await engine.createThread({ threadId: 't' }));
      await append(engine, 't', 2, 'inference');
      await append(engine, 't', 1, 'tool_call');
      const stream = subscribe(NODE_APPENDED, {
        threadId: 't',
        afterSequence: 1,
        kinds: ['INFERENCE', 'ANSWER'],
      });
      const [second] = await takeData(stream, 1);
      expect(second.nodeAppended).toMatchObject({ kind: 'INFERENCE', sequence: 2, logIndex: 2 });
      await append(engine, 't', 1, 'tool_call');
      await append(engine, 't', 1, 'answer');
      const [answer] = await takeData(stream, 1);
      await stream.return?.();
      expect(answer.nodeAppended).toMatchObject({ kind: 'ANSWER', sequence: 5, logIndex: 5 });
      expect(answer.nodeAppended.parents.map((p: { id: string }) => p.id)).toEqual(
        answer.nodeAppended.parentIds,
      );
    });

    it('runStatusChanged and approvalRequested carry the run and the index that changed it', async () => {
      const { engine } = await open();
      await withRun(engine, 't', 'r1');
      const statuses = subscribe(RUN_STATUS, { threadId: 't', afterIndex: 0 });
      const byRun = subscribe(RUN_STATUS, { runId: 'r1', threadId: 't', afterIndex: -1 });
      const approvals = subscribe(APPROVALS, { threadId: 't', afterIndex: 0 });
      must(
        await engine.dispatch({
          runId: 'r1',
          action: { type: 'request_human_input', payload: { pending_approval: { q: 'ok?' } } },
        }),
      );
      const changes = (await takeData(statuses, 3)).map((d) => d.runStatusChanged);
      expect(changes.map((c) => [c.from, c.to, c.logIndex])).toEqual([
        ['PENDING', 'SCHEDULED', 1],
        ['SCHEDULED', 'RUNNING', 1],
        ['RUNNING', 'WAITING', 2],
      ]);
      expect(changes[2].run).toMatchObject({ id: 'r1', goal: 'write a haiku' });
      expect((await takeData(byRun, 3)).map((d) => d.runStatusChanged.to)).toEqual([
        'SCHEDULED',
        'RUNNING',
        'WAITING',
      ]);
      const [approval] = await takeData(approvals, 1);
      expect(approval.approvalRequested).toMatchObject({
        pendingApproval: { q: 'ok?' },
        logIndex: 2,
        run: { id: 'r1', status: 'WAITING' },
      });
      expect(typeof approval.approvalRequested.waitingFor).toBe('string');
      expect(Number.isNaN(Date.parse(approval.approvalRequested.timeoutAt))).toBe(false);
      for (const s of [statuses, byRun, approvals]) await s.return?.();
    });

    it('an unknown thread is NOT_FOUND and a bad cursor BAD_USER_INPUT, before anything streams', async () => {
      await open();
      const unknown = subscribe(THREAD_EVENTS, { threadId: 'nope', afterIndex: -1 });
      const first = await unknown.next();
      expect(first.value?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect(first.value?.errors?.[0]?.message).toMatch(/Thread nope does not exist/);
      await unknown.return?.();
      must(await server.engine.createThread({ threadId: 't' }));
      const bad = subscribe(THREAD_EVENTS, { threadId: 't', afterIndex: -7 });
      const refused = await bad.next();
      expect(refused.value?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      await bad.return?.();
    });
  });
}

describe('live-only subscriptions over graphql-ws', () => {
  it('runStatusChanged and approvalRequested without arguments report every thread', async () => {
    const { engine, hub } = await open();
    const c = client();
    const statuses = wsSubscribe(c, RUN_STATUS);
    const approvals = wsSubscribe(c, APPROVALS);
    // Live only: wait until both operations are attached before anything commits.
    const firstSteps = [statuses.next(), approvals.next()];
    for (let i = 0; i < 200 && hub.stats().listeners < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(hub.stats().listeners).toBe(2);
    await withRun(engine, 'x', 'rx');
    await withRun(engine, 'y', 'ry');
    must(
      await engine.dispatch({
        runId: 'ry',
        action: { type: 'request_human_input', payload: { pending_approval: { q: 'y?' } } },
      }),
    );
    const [firstStatus, firstApproval] = await Promise.all(firstSteps);
    const changes = [firstStatus!.value, ...(await take(statuses, 4))].map(
      (p) => p.data.runStatusChanged,
    );
    expect(changes.map((ch) => [ch.run.id, ch.to])).toEqual([
      ['rx', 'SCHEDULED'],
      ['rx', 'RUNNING'],
      ['ry', 'SCHEDULED'],
      ['ry', 'RUNNING'],
      ['ry', 'WAITING'],
    ]);
    expect(firstApproval!.value.data.approvalRequested).toMatchObject({
      pendingApproval: { q: 'y?' },
      run: { id: 'ry', status: 'WAITING' },
    });
    await statuses.return?.();
    await approvals.return?.();
  });
});

/** The next `count` raw payloads. */
async function take(stream: AsyncIterableIterator<Payload>, count: number): Promise<Payload[]> {
  const out: Payload[] = [];
  while (out.length < count) {
    const step = await stream.next();
    if (step.done === true) throw new Error('the subscription ended');
    out.push(step.value);
  }
  return out;
}

describe('resuming over graphql-ws', () => {
  it('a client that drops its socket mid-stream and resubscribes with its last index gets every entry once', async () => {
    const { engine } = await open();
    must(await engine.createThread({ threadId: 't' }));
    const writing = append(engine, 't', 150);
    const seen: number[] = [];
    let last = -1;
    for (const cut of [40, 70, Number.POSITIVE_INFINITY]) {
      const c = wsClient(server.url);
      const stream = wsSubscribe(c, THREAD_EVENTS, { threadId: 't', afterIndex: last });
      let received = 0;
      while (received < cut && last < 150) {
        const [data] = await takeData(stream, 1);
        last = data.threadEvents.index;
        seen.push(last);
        received++;
      }
      // Drop the connection without completing the operation (as a crash would).
      await c.dispose();
    }
    await writing;
    expect(seen).toEqual(Array.from({ length: 151 }, (_, i) => i));
    // The server ended the dropped operations: nothing stays attached to the hub.
    for (let i = 0; i < 50 && server.hub.stats().listeners > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(server.hub.stats().listeners).toBe(0);
  });
});
