/**
 * runStatusChanged over a real server on a real SQLite file: each event carries the run's state
 * as of its change (not the run's current state), `(logIndex, ordinal)` orders and resumes the
 * changes of one entry, and a fork's copied history is not announced again as new changes.
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

/** The fork tests need none of the per-change fields. */
const RUN_STATUS_BASIC = `subscription ($threadId: ID, $runId: ID, $afterIndex: Int) {
  runStatusChanged(threadId: $threadId, runId: $runId, afterIndex: $afterIndex) {
    threadId runId from to logIndex run { id threadId status }
  }
}`;
const RUN_STATUS = `subscription ($threadId: ID, $runId: ID, $afterIndex: Int, $afterOrdinal: Int) {
  runStatusChanged(threadId: $threadId, runId: $runId, afterIndex: $afterIndex, afterOrdinal: $afterOrdinal) {
    threadId runId status from to logIndex ordinal changedAt run { id threadId status }
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

function ws(
  variables: Record<string, unknown>,
  query = RUN_STATUS,
): AsyncIterableIterator<Payload> {
  const client = wsClient(server.url);
  clients.push(client);
  return wsSubscribe(client, query, variables);
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/**
 * Thread `t` with run `r`: entry 1 starts it (PENDING→SCHEDULED and SCHEDULED→RUNNING, two
 * changes in one entry), entry 2 makes it wait for a human (RUNNING→WAITING).
 */
async function waitingRun(engine: Engine): Promise<void> {
  must(await engine.createThread({ threadId: 't' }));
  must(await engine.startRun({ threadId: 't', goal: 'write a haiku', runId: 'r' }));
  must(
    await engine.dispatch({
      runId: 'r',
      action: { type: 'request_human_input', payload: { pending_approval: { q: 'ok?' } } },
    }),
  );
}

// biome-ignore lint/suspicious/noExplicitAny: subscription data is read loosely
const changesOf = (data: any[]) => data.map((d) => d.runStatusChanged);
// biome-ignore lint/suspicious/noExplicitAny: as above
const row = (c: any) => [c.logIndex, c.ordinal, c.status, c.from, c.to];

/** Waits (generously) until the hub has `count` listeners: a live-only stream is attached. */
async function attached(count: number): Promise<void> {
  for (let i = 0; i < 1000 && server.hub.stats().listeners < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(server.hub.stats().listeners).toBe(count);
}

describe('runStatusChanged: the state as of each change', () => {
  const transports = {
    'graphql-ws': ws,
    SSE: (variables: Record<string, unknown>) => sseSubscribe(server.url, RUN_STATUS, variables),
  };
  for (const [transport, subscribe] of Object.entries(transports)) {
    it(`each event carries the status at its change and a per-entry ordinal (${transport})`, async () => {
      const { engine } = await open();
      await waitingRun(engine);
      const stream = subscribe({ threadId: 't', afterIndex: -1 });
      const changes = changesOf(await takeData(stream, 3));
      await stream.return?.();
      expect(changes.map(row)).toEqual([
        [1, 0, 'SCHEDULED', 'PENDING', 'SCHEDULED'],
        [1, 1, 'RUNNING', 'SCHEDULED', 'RUNNING'],
        [2, 0, 'WAITING', 'RUNNING', 'WAITING'],
      ]);
      // `run` is the run now, the same for every event; the change's own fields are not.
      for (const change of changes) {
        expect(change).toMatchObject({ threadId: 't', runId: 'r' });
        expect(change.run).toEqual({ id: 'r', threadId: 't', status: 'WAITING' });
      }
      const entries = await engine.store.readEntries('t', 1, 3);
      expect(changes.map((c) => new Date(c.changedAt).toISOString())).toEqual([
        entries[0]!.recordedAt,
        entries[0]!.recordedAt,
        entries[1]!.recordedAt,
      ]);
    });
  }

  it('resuming from (logIndex, ordinal) inside a multi-change entry neither repeats nor skips a change', async () => {
    const { engine } = await open();
    await waitingRun(engine);
    must(await engine.resolveApproval({ runId: 'r', decision: 'approve' }));
    const all = changesOf(await takeData(ws({ threadId: 't', afterIndex: -1 }), 4));
    expect(all.map(row)).toEqual([
      [1, 0, 'SCHEDULED', 'PENDING', 'SCHEDULED'],
      [1, 1, 'RUNNING', 'SCHEDULED', 'RUNNING'],
      [2, 0, 'WAITING', 'RUNNING', 'WAITING'],
      [3, 0, 'RUNNING', 'WAITING', 'RUNNING'],
    ]);
    // Resuming after each change but the last gives exactly the ones after it.
    for (const [k, seen] of all.slice(0, -1).entries()) {
      const resumed = ws({ threadId: 't', afterIndex: seen.logIndex, afterOrdinal: seen.ordinal });
      const rest = all.slice(k + 1);
      expect(changesOf(await takeData(resumed, rest.length)).map(row)).toEqual(rest.map(row));
      await resumed.return?.();
    }
    // afterIndex alone still means "that entry is done": nothing of entry 1 again.
    const afterEntry = ws({ threadId: 't', afterIndex: 1 });
    expect(changesOf(await takeData(afterEntry, 1)).map(row)).toEqual([all[2]].map(row));
    await afterEntry.return?.();
  });

  it('afterOrdinal without afterIndex is refused as BAD_USER_INPUT', async () => {
    const { engine } = await open();
    await waitingRun(engine);
    const stream = ws({ threadId: 't', afterOrdinal: 0 });
    const first = await stream.next();
    expect(first.value?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await stream.return?.();
  });
});

describe('runStatusChanged and forks', () => {
  it("a fork's copied runs are not announced to the source run's subscriber; the fork's own changes carry its threadId", async () => {
    const { engine } = await open();
    must(await engine.createThread({ threadId: 's' }));
    must(await engine.startRun({ threadId: 's', goal: 'write a haiku', runId: 'r' }));
    // Live only, by run id: every thread holding run `r` (the source and, later, its fork).
    const byRun = ws({ runId: 'r' }, RUN_STATUS_BASIC);
    const firstStep = byRun.next();
    await attached(1);
    must(await engine.forkThread({ threadId: 's', newThreadId: 'f' }));
    must(await engine.cancelRun({ runId: 'r', threadId: 'f', reason: 'only the fork' }));
    must(
      await engine.dispatch({
        runId: 'r',
        threadId: 's',
        action: { type: 'request_human_input', payload: { pending_approval: { q: 'ok?' } } },
      }),
    );
    const first = await firstStep;
    if (first.done === true) throw new Error('the subscription ended');
    const changes = changesOf([first.value.data, ...(await takeData(byRun, 1))]);
    await byRun.return?.();
    expect(changes.map((c) => [c.threadId, c.runId, c.from, c.to, c.logIndex])).toEqual([
      ['f', 'r', 'RUNNING', 'CANCELLED', 3],
      ['s', 'r', 'RUNNING', 'WAITING', 2],
    ]);
    expect(changes[0].run).toMatchObject({ id: 'r', threadId: 'f', status: 'CANCELLED' });
  });

  it("replaying a fork from the start gives only the fork's own changes, not the copied ones", async () => {
    const { engine } = await open();
    must(await engine.createThread({ threadId: 's' }));
    must(await engine.startRun({ threadId: 's', goal: 'write a haiku', runId: 'r' }));
    must(await engine.forkThread({ threadId: 's', newThreadId: 'f' }));
    must(await engine.cancelRun({ runId: 'r', threadId: 'f', reason: 'only the fork' }));
    const replay = ws({ threadId: 'f', afterIndex: -1 }, RUN_STATUS_BASIC);
    const [change] = changesOf(await takeData(replay, 1));
    await replay.return?.();
    expect([change.threadId, change.from, change.to, change.logIndex]).toEqual([
      'f',
      'RUNNING',
      'CANCELLED',
      3,
    ]);
    // The source keeps its own history.
    const source = ws({ threadId: 's', afterIndex: -1 }, RUN_STATUS_BASIC);
    expect(changesOf(await takeData(source, 2)).map((c) => [c.threadId, c.to])).toEqual([
      ['s', 'SCHEDULED'],
      ['s', 'RUNNING'],
    ]);
  });
});

const APPROVALS = `subscription ($threadId: ID, $afterIndex: Int) {
  approvalRequested(threadId: $threadId, afterIndex: $afterIndex) { threadId runId logIndex pendingApproval }
}`;

describe('approvalRequested and forks', () => {
  it("replaying a fork gives only the fork's own requests; a live subscriber of every thread is not told of the copy", async () => {
    const { engine } = await open();
    must(await engine.createThread({ threadId: 's' }));
    must(await engine.startRun({ threadId: 's', goal: 'write a haiku', runId: 'r' }));
    const everyThread = ws({}, APPROVALS);
    const firstStep = everyThread.next();
    await attached(1);
    must(
      await engine.dispatch({
        runId: 'r',
        threadId: 's',
        action: { type: 'request_human_input', payload: { pending_approval: { q: 'source' } } },
      }),
    );
    must(await engine.forkThread({ threadId: 's', newThreadId: 'f' }));
    must(
      await engine.dispatch({
        runId: 'r',
        threadId: 'f',
        action: { type: 'resume_from_human', payload: { decision: 'approve' } },
      }),
    );
    must(
      await engine.dispatch({
        runId: 'r',
        threadId: 'f',
        action: { type: 'request_human_input', payload: { pending_approval: { q: 'fork' } } },
      }),
    );
    // Live: the source's request, then the fork's own — the copy made by forking is not new.
    const first = await firstStep;
    if (first.done === true) throw new Error('the subscription ended');
    const live = [first.value.data, ...(await takeData(everyThread, 1))].map(
      (d) => d.approvalRequested,
    );
    expect(live.map((a) => [a.threadId, a.pendingApproval.q])).toEqual([
      ['s', 'source'],
      ['f', 'fork'],
    ]);
    await everyThread.return?.();
    // Replayed from the start, the fork has one request of its own.
    const replay = ws({ threadId: 'f', afterIndex: -1 }, APPROVALS);
    const [own] = (await takeData(replay, 1)).map((d) => d.approvalRequested);
    await replay.return?.();
    expect([own.threadId, own.runId, own.pendingApproval.q]).toEqual(['f', 'r', 'fork']);
  });
});
