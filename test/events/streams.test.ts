/**
 * The four streams over a hub on a real SQLite file: cursors, live-only starts, filters, effects
 * re-derived from the store equal to the engine's, gap repair after a lost publication, bounded
 * buffers for slow consumers, and clean ends.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { CommittedEvent, Engine } from '../../src/engine/index.js';
import { createEngine } from '../../src/engine/index.js';
import {
  approvalRequested,
  createEventHub,
  InvalidCursorError,
  nodeAppended,
  runStatusChanged,
  streamLog,
  threadEvents,
} from '../../src/events/index.js';
import { LiveQueue } from '../../src/events/queue.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { appendMany, must, type Node, openNode, range, sqliteDatabases, take } from './support.js';

const dbs = sqliteDatabases();
afterAll(() => dbs.cleanup());

let nodes: Node[] = [];
afterEach(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  nodes = [];
});

async function open(url?: string): Promise<Node> {
  const node = await openNode(url ?? (await dbs.fresh()));
  nodes.push(node);
  return node;
}

/** The next value of an iterator; fails when the stream ended instead. */
async function next<T>(iterator: AsyncIterableIterator<T>): Promise<T> {
  const step = await iterator.next();
  if (step.done === true) throw new Error('the stream ended');
  return step.value;
}

async function threadWithRun(engine: Engine, threadId: string, runId: string) {
  must(await engine.createThread({ threadId }));
  must(await engine.appendNodes({ threadId, nodes: [{ kind: 'system', payload: { p: 'hi' } }] }));
  must(await engine.startRun({ threadId, goal: 'write a haiku', runId }));
  return runId;
}

describe('threadEvents', () => {
  it('replays the entries after afterIndex, then continues live', async () => {
    const { engine, hub } = await open();
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    await appendMany(engine, threadId, 5);
    const stream = threadEvents(hub, { threadId, afterIndex: 2 });
    expect((await take(stream, 3)).map((e) => e.index)).toEqual([3, 4, 5]);

    const resumed = threadEvents(hub, { threadId, afterIndex: 5 });
    const pending = take(resumed, 2);
    await appendMany(engine, threadId, 2);
    const live = await pending;
    expect(live.map((e) => e.index)).toEqual([6, 7]);
    const stored = await engine.store.readEntries(threadId, 6, 8);
    expect(live.map((e) => e.entry)).toEqual(stored);
    expect(live[0]).toMatchObject({ threadId, id: stored[0]!.id, type: 'nodes_appended' });
    expect(live[0]!.recordedAt).toBe(stored[0]!.recordedAt);
  });

  it('afterIndex -1 replays the whole log; without afterIndex only what commits after opening', async () => {
    const { engine, hub } = await open();
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    await appendMany(engine, threadId, 3);
    const everything = threadEvents(hub, { threadId, afterIndex: -1 });
    const liveOnly = threadEvents(hub, { threadId });
    await appendMany(engine, threadId, 2);
    expect((await take(everything, 6)).map((e) => e.index)).toEqual(range(0, 6));
    expect((await take(liveOnly, 2)).map((e) => e.index)).toEqual([4, 5]);
  });

  it('waits for a thread that does not exist yet (a fork target) and sees its whole first commit', async () => {
    const { engine, hub } = await open();
    const { threadId } = must(await engine.createThread({ threadId: 'src' }));
    await appendMany(engine, threadId, 3);
    const stream = threadEvents(hub, { threadId: 'fork', afterIndex: -1 });
    const pending = take(stream, 4);
    must(await engine.forkThread({ threadId, upToIndex: 3, newThreadId: 'fork' }));
    const events = await pending;
    expect(events.map((e) => [e.index, e.type])).toEqual([
      [0, 'thread_created'],
      [1, 'nodes_appended'],
      [2, 'nodes_appended'],
      [3, 'thread_forked'],
    ]);
  });

  it('rejects a cursor that is not an integer >= -1, with a message that says what to send', async () => {
    const { hub } = await open();
    for (const afterIndex of [-2, 1.5, Number.NaN]) {
      expect(() => threadEvents(hub, { threadId: 't', afterIndex })).toThrow(InvalidCursorError);
    }
    expect(() => nodeAppended(hub, { threadId: 't', afterSequence: -5 })).toThrow(
      /afterSequence must be an integer >= -1/,
    );
  });

  it('return() ends a stream parked on an empty buffer and detaches it; so does the signal', async () => {
    const { engine, hub } = await open();
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    const stream = threadEvents(hub, { threadId });
    const parked = stream.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await stream.return?.();
    expect((await parked).done).toBe(true);
    const controller = new AbortController();
    const signalled = threadEvents(hub, { threadId, signal: controller.signal });
    const waiting = signalled.next();
    controller.abort();
    expect((await waiting).done).toBe(true);
    expect(hub.stats().listeners).toBe(0);
  });

  it('closing the hub ends open streams', async () => {
    const { engine, hub } = await open();
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    const stream = threadEvents(hub, { threadId });
    const waiting = stream.next();
    await hub.close();
    expect((await waiting).done).toBe(true);
  });
});

describe('gap repair and slow consumers', () => {
  it('re-reads from the store what a lost publication would have carried', async () => {
    const url = await dbs.fresh();
    const store = openThreadStore(url);
    const hub = createEventHub({ store });
    let n = 0;
    // Every third commit's publication is lost (as a dropped Redis message would be).
    const lossy = {
      publish: (event: CommittedEvent) => (++n % 3 === 0 ? undefined : hub.publish(event)),
    };
    const engine = createEngine({ store, publisher: lossy });
    nodes.push({
      engine,
      hub,
      async close() {
        await hub.close();
        await engine.close();
      },
    });
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    const events = threadEvents(hub, { threadId, afterIndex: 0 });
    const nodesStream = nodeAppended(hub, { threadId, afterSequence: 0 });
    const pending = Promise.all([take(events, 30), take(nodesStream, 30)]);
    await appendMany(engine, threadId, 30);
    const [got, appended] = await pending;
    expect(got.map((e) => e.index)).toEqual(range(1, 31));
    expect(appended.map((e) => e.node.sequence)).toEqual(range(1, 31));
  });

  it('a consumer slower than the appends gets everything once, in order, through a tiny buffer', async () => {
    const url = await dbs.fresh();
    const node = await openNode(url, { hub: { bufferSize: 4, pageSize: 7 } });
    nodes.push(node);
    const { engine, hub } = node;
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    const stream = threadEvents(hub, { threadId, afterIndex: -1 });
    const writing = appendMany(engine, threadId, 200);
    const got: number[] = [];
    for await (const event of stream) {
      got.push(event.index);
      if (got.length % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      if (event.index === 200) break;
    }
    await writing;
    expect(got).toEqual(range(0, 201));
  });

  it('the live buffer never holds more than its capacity; it records what it dropped instead', () => {
    const queue = new LiveQueue(16);
    const entry = { id: 'e' } as never;
    for (let i = 0; i < 10_000; i++) {
      queue.push({ threadId: i % 2 === 0 ? 'a' : 'b', index: 100 + i, entry });
      expect(queue.size()).toBeLessThanOrEqual(16);
    }
    expect(queue.overflowed).toBe(true);
    expect([...queue.takeDropped()]).toEqual([
      ['a', 100],
      ['b', 101],
    ]);
    expect(queue.overflowed).toBe(false);
    queue.push({ threadId: 'a', index: 20_000, entry });
    expect(queue.shift()?.index).toBe(20_000);
  });
});

describe('nodeAppended', () => {
  it('replays nodes with sequence > afterSequence (kinds filter), then live; identical content is not a new node', async () => {
    const { engine, hub } = await open();
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    must(
      await engine.appendNodes({
        threadId,
        nodes: [
          { kind: 'system', payload: { s: 1 } },
          { kind: 'inference', payload: { s: 2 } },
          { kind: 'tool_call', payload: { s: 3 } },
        ],
      }),
    );
    const all = nodeAppended(hub, { threadId, afterSequence: 1 });
    const inferences = nodeAppended(hub, { threadId, afterSequence: 0, kinds: ['inference'] });
    expect((await take(all, 2)).map((e) => [e.node.sequence, e.node.kind, e.logIndex])).toEqual([
      [2, 'inference', 1],
      [3, 'tool_call', 1],
    ]);
    expect((await next(inferences)).node.sequence).toBe(2);
    // The same content (parents included) again creates no node and no event; a new one does.
    const root = { kind: 'inference' as const, payload: { s: 4 }, parents: [] };
    const added = must(await engine.appendNodes({ threadId, nodes: [root] }));
    must(await engine.appendNodes({ threadId, nodes: [root] }));
    must(await engine.appendNodes({ threadId, nodes: [{ kind: 'inference', payload: { s: 5 } }] }));
    const fourth = await next(inferences);
    expect(fourth.node.sequence).toBe(4);
    expect([fourth.logIndex, fourth.meta.logIndex]).toEqual([added.logIndex, added.logIndex]);
    expect((await next(inferences)).node).toMatchObject({ sequence: 5, payload: { s: 5 } });
    expect(fourth.node.payload).toEqual({ s: 4 });
  });

  it('afterSequence past the end waits for that node; no afterSequence is live only', async () => {
    const { engine, hub } = await open();
    const { threadId } = must(await engine.createThread({ threadId: 't' }));
    await appendMany(engine, threadId, 2);
    const later = nodeAppended(hub, { threadId, afterSequence: 3 });
    const live = nodeAppended(hub, { threadId });
    await appendMany(engine, threadId, 3, 'more');
    expect((await take(later, 1)).map((e) => e.node.sequence)).toEqual([4]);
    expect((await take(live, 3)).map((e) => e.node.sequence)).toEqual([3, 4, 5]);
  });
});

describe('runStatusChanged and approvalRequested', () => {
  it('report status changes and approval requests by thread, by run, and everywhere', async () => {
    const { engine, hub } = await open();
    const byThread = runStatusChanged(hub, { threadId: 'a' });
    const byRun = runStatusChanged(hub, { runId: 'run-a' });
    const everywhere = runStatusChanged(hub, {});
    const approvalsA = approvalRequested(hub, { threadId: 'a' });
    const approvals = approvalRequested(hub, {});
    await threadWithRun(engine, 'a', 'run-a');
    await threadWithRun(engine, 'b', 'run-b');
    must(
      await engine.dispatch({
        runId: 'run-a',
        action: { type: 'request_human_input', payload: { pending_approval: { q: 'ok?' } } },
      }),
    );
    must(await engine.resolveApproval({ runId: 'run-a', decision: 'approve' }));
    must(await engine.cancelRun({ runId: 'run-b', reason: 'enough' }));

    const changesOfA = [
      ['a', 'run-a', 'pending', 'scheduled', 2],
      ['a', 'run-a', 'scheduled', 'running', 2],
      ['a', 'run-a', 'running', 'waiting', 3],
      ['a', 'run-a', 'waiting', 'running', 4],
    ];
    const row = (c: {
      threadId: string;
      runId: string;
      from: string;
      to: string;
      logIndex: number;
    }) => [c.threadId, c.runId, c.from, c.to, c.logIndex];
    expect((await take(byThread, 4)).map(row)).toEqual(changesOfA);
    expect((await take(byRun, 4)).map(row)).toEqual(changesOfA);
    const seen = (await take(everywhere, 7)).map(row);
    expect(seen.filter((c) => c[0] === 'a')).toEqual(changesOfA);
    expect(seen.filter((c) => c[0] === 'b')).toEqual([
      ['b', 'run-b', 'pending', 'scheduled', 2],
      ['b', 'run-b', 'scheduled', 'running', 2],
      ['b', 'run-b', 'running', 'cancelled', 3],
    ]);
    for (const stream of [approvalsA, approvals]) {
      const approval = await next(stream);
      expect(approval).toMatchObject({
        threadId: 'a',
        runId: 'run-a',
        pendingApproval: { q: 'ok?' },
        logIndex: 3,
      });
      expect(typeof approval.waitingFor).toBe('string');
      expect(approval.timeoutAt).toMatch(/^\d{4}-/);
    }
  });

  it('a run or thread filter keeps other runs out; allowThread scopes the everywhere streams', async () => {
    const { engine, hub } = await open();
    const onlyB = runStatusChanged(hub, { allowThread: (threadId) => threadId === 'b' });
    const runB = runStatusChanged(hub, { runId: 'run-b' });
    await threadWithRun(engine, 'a', 'run-a');
    await threadWithRun(engine, 'b', 'run-b');
    const firstOfB = await take(onlyB, 2);
    expect(firstOfB.map((c) => c.threadId)).toEqual(['b', 'b']);
    expect((await take(runB, 2)).map((c) => c.runId)).toEqual(['run-b', 'run-b']);
  });

  it('effects re-derived from the store equal the ones the engine published', async () => {
    const { engine, hub } = await open();
    const runId = await threadWithRun(engine, 't', 'run-t');
    const live = streamLog(hub, { source: { threadId: 't', afterIndex: 'live' }, effects: true });
    must(
      await engine.dispatch({
        runId,
        action: { type: 'request_human_input', payload: { pending_approval: { q: 1 } } },
      }),
    );
    must(await engine.resolveApproval({ runId, decision: 'approve' }));
    must(await engine.appendNodes({ threadId: 't', nodes: [{ kind: 'answer', payload: 'done' }] }));
    const published = await take(live, 3);
    // A second hub on the same store has no published effects: it derives them.
    const other = createEventHub({ store: engine.store });
    const replayed = await take(
      streamLog(other, {
        source: { threadId: 't', afterIndex: published[0]!.index - 1 },
        effects: true,
      }),
      3,
    );
    expect(replayed.map((i) => i.effects)).toEqual(published.map((i) => i.effects));
    expect(published.every((i) => (i.effects?.length ?? 0) > 0)).toBe(true);
    await other.close();
  });
});
