/**
 * `Thread.runsAt(atIndex:)`, time travel for runs, on SQLite and Postgres: the runs as of each log
 * length with their state then and the last entry that changed them, the end of the log equal to
 * the runs read model, a fork equal to its source over the copied prefix, and bad indices refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

interface RunAt {
  id: string;
  status: string;
  logIndex: number;
  memory: Record<string, unknown>;
  updatedAt: string;
  workflowState: unknown;
}

const RUN = 'id status logIndex memory updatedAt workflowState';

function suite(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  const runs: string[] = [];

  const ok = async (query: string, variables?: Record<string, unknown>) => {
    const r = await t.gql(query, variables);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data;
  };
  const runsAt = async (threadId: string, atIndex: number): Promise<RunAt[]> =>
    (
      await ok(`query($id: ID!, $k: Int!) { thread(id: $id) { runsAt(atIndex: $k) { ${RUN} } } }`, {
        id: threadId,
        k: atIndex,
      })
    ).thread.runsAt;

  beforeAll(async () => {
    t = await createTestApp({ backend });
    // 0 thread_created, 1 start r0, 2 r0 memory n=1, 3 start r1, 4 r0 memory n=2, 5 cancel r1.
    await ok('mutation { createThread(input: { threadId: "t" }) { __typename } }');
    const start = async (goal: string) => {
      const r = await ok(
        `mutation { startRun(input: { threadId: "t", goal: "${goal}" }) { ... on StartRunSuccess { run { id } } } }`,
      );
      runs.push(r.startRun.run.id);
    };
    const remember = async (runId: string, n: number) => {
      const r = await ok(
        `mutation($r: ID!) { dispatch(input: { runId: $r, action: { type: UPDATE_MEMORY, payload: { updates: { n: ${n} } } } }) { __typename } }`,
        { r: runId },
      );
      expect(r.dispatch.__typename).toBe('DispatchSuccess');
    };
    await start('first');
    await remember(runs[0]!, 1);
    await start('second');
    await remember(runs[0]!, 2);
    const cancelled = await ok(
      `mutation($r: ID!) { cancelRun(input: { runId: $r, reason: "enough" }) { __typename } }`,
      { r: runs[1] },
    );
    expect(cancelled.cancelRun.__typename).toBe('CancelRunSuccess');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers the runs as of each log length', async () => {
    expect(await runsAt('t', 0)).toEqual([]);
    expect(await runsAt('t', 1)).toEqual([]);
    const two = await runsAt('t', 2);
    expect(two.map((r) => [r.id, r.logIndex, r.memory.n])).toEqual([[runs[0], 1, undefined]]);
    const three = await runsAt('t', 3);
    expect(three.map((r) => [r.id, r.logIndex, r.memory.n])).toEqual([[runs[0], 2, 1]]);
    const five = await runsAt('t', 5);
    expect(five.map((r) => [r.id, r.logIndex, r.memory.n, r.status])).toEqual([
      [runs[0], 4, 2, 'RUNNING'],
      [runs[1], 3, undefined, 'RUNNING'],
    ]);
    const six = await runsAt('t', 6);
    expect(six.map((r) => [r.id, r.logIndex, r.status])).toEqual([
      [runs[0], 4, 'RUNNING'],
      [runs[1], 5, 'CANCELLED'],
    ]);
  });

  it('at the end of the log equals the runs read model', async () => {
    const data = await ok(`{ thread(id: "t") { logLength runs { edges { node { ${RUN} } } } } }`);
    const now = data.thread.runs.edges.map((e: { node: RunAt }) => e.node);
    expect(await runsAt('t', data.thread.logLength)).toEqual(now);
  });

  it('a fork answers its source’s runs over the copied prefix', async () => {
    const fork = await ok(
      'mutation { forkThread(input: { threadId: "t", upToIndex: 4, newThreadId: "f" }) { __typename } }',
    );
    expect(fork.forkThread.__typename).toBe('ForkThreadSuccess');
    const [source, copy] = [await runsAt('t', 4), await runsAt('f', 4)];
    expect(copy.map((r) => [r.id, r.logIndex, r.workflowState])).toEqual(
      source.map((r) => [r.id, r.logIndex, r.workflowState]),
    );
  });

  it('refuses an index past the log or below zero', async () => {
    for (const k of [99, -1]) {
      const r = await t.gql(`{ thread(id: "t") { runsAt(atIndex: ${k}) { id } } }`);
      expect(r.errors?.[0]?.extensions?.weftCode, JSON.stringify(r.errors)).toBe(
        'VALIDATION_FAILED',
      );
    }
  });
}

describe('Thread.runsAt (SQLite)', () => suite('sqlite'));
describeWithPostgres('Thread.runsAt (Postgres)', () => suite('postgres'));
