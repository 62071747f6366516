/**
 * Scale-out across OS processes: two `weft serve` processes, A and B, on one
 * Postgres database and one Redis. A graphql-ws subscriber to `threadEvents` on B receives every
 * commit made through either instance; B is then SIGKILLed and the subscriber resumes on A with
 * the last index it saw, while writers on both instances append (without expectedIndex, so the
 * engine retries its own conflicts) until B dies, and on A until the end.
 *
 * Checked afterwards: the log is gap- and duplicate-free (indices 0..n-1, strict verification),
 * every acknowledged write is in it exactly once at the index it was acknowledged with, no
 * marker appears twice; the subscriber received every index 0..n-1 exactly once, in order,
 * across its two connections; commits made through A reached the subscriber while it listened
 * on B; and both instances published their commits on the Redis channel.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { type Client, createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { DEFAULT_CHANNEL } from '../../src/events/redis.js';
import { describeWithPostgresAndRedis, REDIS_URL } from '../support/services.js';
import {
  engineOn,
  expectSoundLog,
  type FreshDatabase,
  freshDatabase,
  loggedNodes,
  postJson as post,
  spawnServe,
} from './support.js';

const WRITERS_PER_INSTANCE = 4;
/**
 * SIGKILL B once this many writes are acknowledged, at least MIN_EACH through each instance (the
 * shares are uneven: the instance whose cached state is current tends to win the races).
 */
const KILL_AFTER = 100;
const MIN_EACH = 10;
/** Stop A's writers once this many writes are acknowledged in total. */
const TOTAL_WRITES = 300;
/** Waits that end the test if something hangs (not timing assertions). */
const WAIT_MS = 45_000;

type Instance = 'A' | 'B';

interface ServerProcess {
  name: Instance;
  child: ChildProcessWithoutNullStreams;
  /** http://127.0.0.1:<port>/graphql */
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

const children: ChildProcessWithoutNullStreams[] = [];
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `weft serve` in its own process, on the shared Postgres and Redis. */
async function spawnServer(name: Instance, databaseUrl: string): Promise<ServerProcess> {
  const server = await spawnServe({
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    WEFT_REQUEST_LOG: 'off',
  });
  children.push(server.process);
  return {
    name,
    child: server.process,
    url: server.url,
    exited: server.exited,
    stderr: server.stderr,
  };
}

const APPEND =
  'mutation Append($i: AppendNodesInput!) { appendNodes(input: $i) { __typename ... on AppendNodesSuccess { logIndex } } }';
const THREAD_EVENTS =
  'subscription Events($t: ID!, $a: Int) { threadEvents(threadId: $t, afterIndex: $a) { index type threadId } }';

async function waitFor(test: () => boolean, what: string, state?: () => string): Promise<void> {
  const until = Date.now() + WAIT_MS;
  while (!test()) {
    if (Date.now() > until) {
      throw new Error(
        `gave up waiting for ${what} after ${WAIT_MS} ms${state === undefined ? '' : `: ${state()}`}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Received {
  index: number;
  via: Instance;
}

describeWithPostgresAndRedis('Two weft serve processes on one Postgres and one Redis', () => {
  it('a subscriber on B receives every commit made through A and B, resumes on A after SIGKILL of B; writers on both leave no gap or duplicate', async () => {
    const db: FreshDatabase = await freshDatabase('postgres');
    cleanups.push(() => db.drop());
    const threadId = `scale-${randomUUID()}`;

    // Wake-ups of this thread on the shared channel, by sending hub: proof both fan out.
    const wakeOrigins = new Map<string, number>();
    const listener = new Redis(REDIS_URL);
    cleanups.push(() => listener.disconnect());
    listener.on('message', (_channel: string, message: string) => {
      const wake = JSON.parse(message) as { t: string; o: string };
      if (wake.t === threadId) wakeOrigins.set(wake.o, (wakeOrigins.get(wake.o) ?? 0) + 1);
    });
    await listener.subscribe(DEFAULT_CHANNEL);

    const [a, b] = await Promise.all([spawnServer('A', db.url), spawnServer('B', db.url)]);
    const servers = { A: a, B: b };

    const created = await post(a.url, {
      query:
        'mutation Create($t: ID!) { createThread(input: { threadId: $t }) { __typename ... on CreateThreadSuccess { logIndex } } }',
      variables: { t: threadId },
    });
    expect(created).toMatchObject({
      ok: true,
      body: { data: { createThread: { __typename: 'CreateThreadSuccess', logIndex: 0 } } },
    });

    // The subscriber: on B from the start of the log; on losing B, on A after the last index seen.
    const received: Received[] = [];
    const subscriptionErrors: string[] = [];
    const clients: Client[] = [];
    cleanups.push(async () => {
      for (const client of clients) await client.dispose();
    });
    let resubscribed = false;
    let missedAtResume = 0;
    const subscribe = (via: Instance, afterIndex: number) => {
      const client = createClient({
        url: servers[via].url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: true,
      });
      clients.push(client);
      client.subscribe<{ threadEvents: { index: number; threadId: string } }>(
        { query: THREAD_EVENTS, variables: { t: threadId, a: afterIndex } },
        {
          next: (result) => {
            const event = result.data?.threadEvents;
            if (event === undefined || result.errors !== undefined) {
              subscriptionErrors.push(`${via}: ${JSON.stringify(result)}`);
              return;
            }
            received.push({ index: event.index, via });
          },
          error: (error) => {
            if (via === 'B' && !resubscribed) {
              // B is gone: continue on A right after the last index received.
              resubscribed = true;
              const after = received.at(-1)?.index ?? -1;
              // Committed meanwhile, not yet received: only the resumed stream's replay has them.
              missedAtResume = Math.max(after, ...acks.map((ack) => ack.logIndex)) - after;
              subscribe('A', after);
            } else {
              const why =
                error instanceof Error
                  ? error.message
                  : `closed ${(error as { code?: number }).code ?? String(error)}`;
              subscriptionErrors.push(`${via}: ${why}`);
            }
          },
          complete: () => {
            if (via === 'A') subscriptionErrors.push('A: the subscription completed');
          },
        },
      );
    };
    subscribe('B', -1);
    await waitFor(
      () => received.length > 0 || subscriptionErrors.length > 0,
      'the subscriber on B to receive index 0',
    );
    expect(subscriptionErrors).toEqual([]);

    // Writers: WRITERS_PER_INSTANCE loops per instance, each write with a unique marker.
    interface Ack {
      mark: string;
      via: Instance;
      logIndex: number;
      beforeKill: boolean;
    }
    const acks: Ack[] = [];
    const acksBy = (via: Instance) => acks.filter((ack) => ack.via === via);
    /** Writes answered with a typed error: a CONFLICT lost on every retry may happen. */
    const rejected: Array<{ mark: string; via: Instance; answer: unknown }> = [];
    const networkErrors: Record<Instance, string[]> = { A: [], B: [] };
    let killed = false;
    let stop = false;
    let receivedAtKill = 0;
    // Writers end when the test does, even a failing one (a dead A would otherwise spin them).
    cleanups.push(() => {
      stop = true;
    });
    const killedB = (async () => {
      await waitFor(
        () =>
          acks.length >= KILL_AFTER &&
          acksBy('A').length >= MIN_EACH &&
          acksBy('B').length >= MIN_EACH,
        `${KILL_AFTER} acknowledged writes, ${MIN_EACH} through each instance`,
        () =>
          `acknowledged A ${acksBy('A').length}, B ${acksBy('B').length}; rejected ${rejected.length} (${JSON.stringify(rejected.at(-1)?.answer)}); network errors A ${networkErrors.A.length}, B ${networkErrors.B.length} (${networkErrors.A.at(-1) ?? networkErrors.B.at(-1) ?? ''}); stderr A: ${a.stderr().slice(-500)} B: ${b.stderr().slice(-500)}`,
      );
      receivedAtKill = received.length;
      killed = true;
      b.child.kill('SIGKILL');
      return b.exited;
    })();
    const writer = async (via: Instance, w: number) => {
      // A's writers start once B has MIN_EACH acknowledged writes: on a loaded machine B's
      // writers could otherwise lose nearly every race for the next index to A's, and A reach
      // TOTAL_WRITES before B had MIN_EACH (so no kill, or a kill with nothing left to resume).
      if (via === 'A') {
        await waitFor(() => acksBy('B').length >= MIN_EACH || stop, `${MIN_EACH} writes through B`);
      }
      for (let n = 0; !stop; n++) {
        if (via === 'B' && killed) return;
        // Once B has all but MIN_EACH of the writes before the kill, its writers wait: an
        // instance whose cached state is current can win nearly every race, and A must get its
        // MIN_EACH in before the kill (and have writes left after it to resume onto).
        if (via === 'B' && acksBy('B').length >= KILL_AFTER - MIN_EACH) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        const mark = `${via}${w}-${n}`;
        const r = await post(servers[via].url, {
          query: APPEND,
          operationName: 'Append',
          variables: { i: { threadId, nodes: [{ kind: 'SYSTEM', payload: { mark } }] } },
        });
        if (!r.ok) {
          networkErrors[via].push(r.error);
          // B was killed: the write is unacknowledged. A should not fail; give up if it does.
          if (via === 'B' || networkErrors.A.length > 10) return;
          continue;
        }
        const result = (r.body.data as { appendNodes?: { __typename: string; logIndex?: number } })
          ?.appendNodes;
        if (result?.__typename === 'AppendNodesSuccess' && result.logIndex !== undefined) {
          acks.push({ mark, via, logIndex: result.logIndex, beforeKill: !killed });
          if (acks.length >= TOTAL_WRITES) stop = true;
        } else {
          rejected.push({ mark, via, answer: r.body });
        }
      }
    };
    const writers = (['A', 'B'] as const).flatMap((via) =>
      Array.from({ length: WRITERS_PER_INSTANCE }, (_, w) => writer(via, w)),
    );
    const killedAs = await killedB.finally(() => {
      if (!killed) stop = true; // the kill never came: stop the writers before failing
    });
    expect(killedAs).toEqual({ code: null, signal: 'SIGKILL' });
    await Promise.all(writers);

    // The log as A serves it, then straight from the database.
    const read = await post(a.url, {
      query: 'query Len($t: ID!) { thread(id: $t) { logLength } }',
      variables: { t: threadId },
    });
    if (!read.ok) throw new Error(`reading the thread through A failed: ${read.error}`);
    const logLength = (read.body.data as { thread: { logLength: number } }).thread.logLength;

    const engine = engineOn(db.url);
    cleanups.push(() => engine.close());
    const entries = await expectSoundLog(engine, threadId);
    expect(entries.length).toBe(logLength);

    // Writers on both: every acknowledged write once at its index, no marker twice; a write
    // answered with an error (only a CONFLICT lost on every retry may be) left nothing behind.
    expect(
      rejected.filter(
        (x) =>
          (x.answer as { data?: { appendNodes?: { __typename?: string } } }).data?.appendNodes
            ?.__typename !== 'ConflictError',
      ),
    ).toEqual([]);
    expect(networkErrors.A).toEqual([]);
    expect(acks.length).toBeGreaterThanOrEqual(TOTAL_WRITES);
    const nodes = loggedNodes(entries);
    const indexOfMark = new Map<string, number[]>();
    for (const node of nodes) {
      const mark = (node.payload as { mark?: string }).mark;
      if (mark !== undefined) indexOfMark.set(mark, [...(indexOfMark.get(mark) ?? []), node.index]);
    }
    expect([...indexOfMark].filter(([, at]) => at.length !== 1)).toEqual([]);
    expect(acks.filter((ack) => indexOfMark.get(ack.mark)?.[0] !== ack.logIndex)).toEqual([]);
    expect(rejected.filter((x) => indexOfMark.has(x.mark))).toEqual([]);
    expect(new Set(acks.map((ack) => ack.logIndex)).size).toBe(acks.length);
    expect(acksBy('A').length).toBeGreaterThanOrEqual(MIN_EACH);
    expect(acksBy('B').length).toBeGreaterThanOrEqual(MIN_EACH);

    // The subscriber: every index 0..n-1 exactly once, in order, across B then A.
    await waitFor(
      () => (received.at(-1)?.index ?? -1) >= logLength - 1 || subscriptionErrors.length > 0,
      `the subscriber to reach index ${logLength - 1}`,
    );
    expect(subscriptionErrors).toEqual([]);
    expect(resubscribed).toBe(true);
    expect(received.map((e) => e.index)).toEqual(Array.from({ length: logLength }, (_, i) => i));
    const onB = received.filter((e) => e.via === 'B');
    const onA = received.filter((e) => e.via === 'A');
    expect(onB.length).toBeGreaterThan(0);
    expect(onA.length).toBeGreaterThan(0);
    // Cross-instance: commits made through A arrived on B's connection.
    const indexesOnB = new Set(onB.map((e) => e.index));
    const aCommitsOnB = acksBy('A').filter((ack) => indexesOnB.has(ack.logIndex));
    expect(aCommitsOnB.length).toBeGreaterThan(0);
    // Both instances published their commits on the shared Redis channel.
    expect(wakeOrigins.size).toBeGreaterThanOrEqual(2);

    console.log(
      `[scale-out] acknowledged writes: A ${acksBy('A').length} (${acksBy('A').filter((x) => x.beforeKill).length} before the kill), ` +
        `B ${acksBy('B').length}; ${networkErrors.B.length} B writes cut off by SIGKILL; ` +
        `${rejected.length} CONFLICT after every retry (A ${rejected.filter((x) => x.via === 'A').length}); log length ${logLength}; ` +
        `events received: ${receivedAtKill} before the kill, ${onB.length} on B (${aCommitsOnB.length} of them commits made through A), ` +
        `${onA.length} on A after resuming from index ${onB.at(-1)?.index} ` +
        `(${missedAtResume} acknowledged past it by then); ` +
        `Redis wake-ups from ${wakeOrigins.size} hubs: ${[...wakeOrigins.values()].join(', ')}`,
    );
    for (const client of clients.splice(0)) await client.dispose();
    a.child.kill('SIGTERM');
    expect((await a.exited).code, a.stderr()).toBe(0);
  }, 120_000);
});
