/**
 * Subscription groups (src/events/groups.ts) on both backends: a group's members get exactly the
 * events individual (unmultiplexed) subscriptions get — live, resumed from a cursor while the
 * log grows, and after falling behind — two tenants with identical arguments never share a
 * group, a member that does not read delays no other, and what subscriptions cost is capped.
 * With Redis, each instance has its own group, fed once per commit.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { scopeHub } from '../../src/auth/index.js';
import {
  type EventHub,
  groupedRunStatusChanged,
  groupedThreadEvents,
  type RunStatusChangePayload,
  runStatusChanged,
  SubscriptionCostError,
  type ThreadEventPayload,
  threadEvents,
} from '../../src/events/index.js';
import { describeWithPostgres, describeWithRedis } from '../support/services.js';
import {
  appendMany,
  type Databases,
  must,
  type Node,
  openNode,
  postgresDatabases,
  range,
  sqliteDatabases,
} from './support.js';

let nodes: Node[] = [];
afterEach(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  nodes = [];
});

async function node(dbs: Databases, options: Parameters<typeof openNode>[1] = {}) {
  const opened = await openNode(await dbs.fresh(), options);
  nodes.push(opened);
  return opened;
}

/** The next `count` values of an iterator, leaving it open. */
async function pull<T>(iterator: AsyncIterableIterator<T>, count: number): Promise<T[]> {
  const out: T[] = [];
  while (out.length < count) {
    const step = await iterator.next();
    if (step.done === true) throw new Error(`ended after ${out.length} of ${count}`);
    out.push(step.value);
  }
  return out;
}

/** Waits (polling the condition, no fixed sleep) until `condition` holds. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
    if (i > 200) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const who = { tenant: 'default', holder: 'key-1' };
const indices = (events: ThreadEventPayload[]) => events.map((e) => e.index);

function suite(
  name: string,
  databases: () => Databases,
  describeFn: (name: string, body: () => void) => void,
) {
  describeFn(name, () => {
    const dbs = databases();
    afterAll(() => dbs.cleanup());

    it('members get what individual subscriptions get: live, resumed while the log grows, one evaluation per commit', async () => {
      const { engine, hub } = await node(dbs);
      must(await engine.createThread({ threadId: 't' }));
      await appendMany(engine, 't', 20);
      const individualLive = threadEvents(hub, { threadId: 't' });
      const individualFrom5 = threadEvents(hub, { threadId: 't', afterIndex: 5 });
      const live = await Promise.all(
        range(0, 3).map(() => groupedThreadEvents(hub, who, { threadId: 't' })),
      );
      const from5 = await groupedThreadEvents(hub, who, { threadId: 't', afterIndex: 5 });
      const fromStart = await groupedThreadEvents(hub, who, { threadId: 't', afterIndex: -1 });
      // The resuming members replay while 30 more entries commit.
      const appending = appendMany(engine, 't', 30);
      const [expectedLive, expectedFrom5, ...gotLive] = await Promise.all([
        pull(individualLive, 30),
        pull(individualFrom5, 45),
        ...live.map((m) => pull(m, 30)),
      ]);
      const [gotFrom5, gotFromStart] = await Promise.all([pull(from5, 45), pull(fromStart, 51)]);
      await appending;
      expect(indices(expectedLive!)).toEqual(range(21, 51));
      for (const got of gotLive) expect(indices(got)).toEqual(indices(expectedLive!));
      expect(indices(gotFrom5)).toEqual(indices(expectedFrom5!));
      expect(indices(gotFromStart)).toEqual(range(0, 51));
      // One group, and its members share each payload object: one evaluation per commit.
      expect(hub.groups.stats()).toMatchObject({ groups: 1, subscribers: 5 });
      for (let i = 1; i < 30; i++) {
        expect(gotLive[1]![i]).toBe(gotLive[0]![i]);
        expect(gotLive[2]![i]).toBe(gotLive[0]![i]);
      }
      // Once every member has met the group, the hub has one listener for all of them.
      await Promise.all([individualLive.return?.(), individualFrom5.return?.()]);
      await appendMany(engine, 't', 1);
      await Promise.all([...live, from5, fromStart].map((m) => pull(m, 1)));
      await until(() => hub.stats().listeners === 1, 'one hub listener for the group');
      await Promise.all([...live, from5, fromStart].map((m) => m.return?.()));
      await until(() => hub.groups.stats().groups === 0, 'the group closed with its last member');
      expect(hub.stats().listeners).toBe(0);
    });

    it('run status changes: a member resuming inside an entry gets what an individual stream gets', async () => {
      const { engine, hub } = await node(dbs);
      must(await engine.createThread({ threadId: 'r' }));
      must(await engine.startRun({ threadId: 'r', goal: 'g', runId: 'r1' }));
      must(await engine.startRun({ threadId: 'r', goal: 'g', runId: 'r2' }));
      const live = await groupedRunStatusChanged(hub, who, { threadId: 'r' });
      const resumed = await groupedRunStatusChanged(hub, who, {
        threadId: 'r',
        afterIndex: 1,
        afterOrdinal: 0,
      });
      must(await engine.cancelRun({ threadId: 'r', runId: 'r1' }));
      must(await engine.cancelRun({ threadId: 'r', runId: 'r2' }));
      const individual = runStatusChanged(hub, { threadId: 'r', afterIndex: 1, afterOrdinal: 0 });
      const key = (c: RunStatusChangePayload) => `${c.logIndex}.${c.ordinal}:${c.runId}:${c.to}`;
      const gotLive = (await pull(live, 2)).map(key);
      expect(gotLive).toEqual([
        expect.stringMatching(/^3\.\d+:r1:cancelled$/),
        expect.stringMatching(/^4\.\d+:r2:cancelled$/),
      ]);
      const untilLast = async (it: AsyncIterableIterator<RunStatusChangePayload>) => {
        const out: string[] = [];
        while (out.at(-1) !== gotLive[1]) out.push(key((await pull(it, 1))[0]!));
        return out;
      };
      const [gotResumed, expected] = await Promise.all([untilLast(resumed), untilLast(individual)]);
      expect(gotResumed).toEqual(expected);
      expect(gotResumed[0]).toMatch(/^1\.1:r1:/);
      await individual.return?.();
      await Promise.all([live.return?.(), resumed.return?.()]);
    });

    it('two tenants with identical arguments never share a group nor see each other', async () => {
      const { engine, hub } = await node(dbs);
      const viewOf = (tenant: string): EventHub => scopeHub(hub, engine.tenants, tenant);
      const a = await groupedRunStatusChanged(viewOf('a'), { tenant: 'a', holder: 'ka' }, {});
      const b = await groupedRunStatusChanged(viewOf('b'), { tenant: 'b', holder: 'kb' }, {});
      expect(hub.groups.stats().groups).toBe(2);
      for (const tenant of ['a', 'b']) {
        const scoped = engine.forTenant(tenant);
        must(await scoped.createThread({ threadId: 'same' }));
        must(await scoped.startRun({ threadId: 'same', goal: 'g', runId: `run-${tenant}` }));
      }
      const [gotA, gotB] = await Promise.all([pull(a, 2), pull(b, 2)]);
      expect(new Set(gotA.map((c) => c.runId))).toEqual(new Set(['run-a']));
      expect(new Set(gotB.map((c) => c.runId))).toEqual(new Set(['run-b']));
      await Promise.all([a.return?.(), b.return?.()]);
    });

    it('a member that does not read delays no other, then catches up from the store, gap-free', async () => {
      const { engine, hub } = await node(dbs, { hub: { bufferSize: 8 } });
      must(await engine.createThread({ threadId: 's' }));
      const slow = await groupedThreadEvents(hub, who, { threadId: 's' });
      const others = await Promise.all(
        range(0, 2).map(() => groupedThreadEvents(hub, who, { threadId: 's' })),
      );
      const individual = threadEvents(hub, { threadId: 's' });
      // Entries read by everyone until every member has met the group (its own stream closed):
      // then the hub holds the group's listener and the individual stream's.
      let next = 1;
      while (hub.stats().listeners > 2) {
        await appendMany(engine, 's', 1);
        for (const m of [slow, individual, ...others]) {
          expect(indices(await pull(m, 1))).toEqual([next]);
        }
        next++;
      }
      const appending = appendMany(engine, 's', 40);
      // The others read all 40 while the slow one reads nothing.
      const got = await Promise.all([individual, ...others].map((m) => pull(m, 40)));
      await appending;
      for (const [i, one] of got.entries()) {
        expect(indices(one), `reader ${i}`).toEqual(range(next, next + 40));
      }
      expect(hub.groups.stats().fellBehind).toBeGreaterThanOrEqual(1);
      expect(indices(await pull(slow, 40))).toEqual(range(next, next + 40));
      await Promise.all([slow, individual, ...others].map((m) => m.return?.()));
    });

    it('admission: what subscriptions cost is capped per key and per process, and given back', async () => {
      const { engine, hub } = await node(dbs, {
        hub: { subscriptionCaps: { perHolder: 3, total: 5 } },
      });
      must(await engine.createThread({ threadId: 'c' }));
      const refused = (p: Promise<unknown>) =>
        p.then(
          () => undefined,
          (e: unknown) => e,
        );
      const as = (holder: string) => ({ ...who, holder });
      const held = await Promise.all(
        range(0, 3).map(() => groupedThreadEvents(hub, who, { threadId: 'c' })),
      );
      const overKey = await refused(groupedThreadEvents(hub, who, { threadId: 'c' }));
      expect(overKey).toBeInstanceOf(SubscriptionCostError);
      expect(overKey).toMatchObject({ code: 'SUBSCRIPTION_COST_LIMIT', scope: 'key', cost: 1 });
      held.push(await groupedThreadEvents(hub, as('k2'), { threadId: 'c' }));
      held.push(await groupedThreadEvents(hub, as('k3'), { threadId: 'c' }));
      const overProcess = await refused(groupedThreadEvents(hub, as('k4'), { threadId: 'c' }));
      expect(overProcess).toMatchObject({ scope: 'process', held: 5, cap: 5 });
      // Every thread of a tenant costs more than one thread's events.
      const wide = await refused(groupedRunStatusChanged(hub, as('k5'), {}));
      expect(wide).toMatchObject({ scope: 'key', cost: 5 });
      // A replay from the start of a long log costs more than a live subscription.
      await appendMany(engine, 'c', 600);
      const replay = await refused(
        groupedThreadEvents(hub, as('k6'), { threadId: 'c', afterIndex: -1 }),
      );
      expect(replay).toMatchObject({ scope: 'key', cost: 4 });
      await Promise.all(held.map((m) => m.return?.()));
      expect(hub.groups.stats()).toMatchObject({ cost: 0, subscribers: 0 });
      const again = await groupedThreadEvents(hub, who, { threadId: 'c' });
      await again.return?.();
    });
  });
}

suite('subscription groups on SQLite', sqliteDatabases, describe);
suite('subscription groups', postgresDatabases, describeWithPostgres);

describeWithRedis('subscription groups across instances', () => {
  const dbs = sqliteDatabases();
  afterAll(() => dbs.cleanup());

  it('each instance has its own group, fed once per commit, delivering what individual streams get', async () => {
    const url = await dbs.fresh();
    const channel = `weft:test:${randomBytes(6).toString('hex')}`;
    const a = await openNode(url, { channel });
    const b = await openNode(url, { channel });
    nodes.push(a, b);
    must(await a.engine.createThread({ threadId: 'x' }));
    const onA = await Promise.all(
      range(0, 2).map(() => groupedThreadEvents(a.hub, who, { threadId: 'x' })),
    );
    const onB = await Promise.all(
      range(0, 3).map(() => groupedThreadEvents(b.hub, who, { threadId: 'x' })),
    );
    const individualB = threadEvents(b.hub, { threadId: 'x' });
    const appending = appendMany(a.engine, 'x', 20);
    const got = await Promise.all([individualB, ...onA, ...onB].map((m) => pull(m, 20)));
    await appending;
    for (const one of got) expect(indices(one)).toEqual(range(1, 21));
    expect(a.hub.groups.stats()).toMatchObject({ groups: 1, subscribers: 2 });
    expect(b.hub.groups.stats()).toMatchObject({ groups: 1, subscribers: 3 });
    // B's members share B's payload objects: its group evaluated each commit once.
    for (let i = 1; i < 20; i++) expect(got[5]![i]).toBe(got[4]![i]);
    await individualB.return?.();
    await appendMany(a.engine, 'x', 1);
    await Promise.all(onB.map((m) => pull(m, 1)));
    await until(() => b.hub.stats().listeners === 1, "one listener on B for B's group");
    await Promise.all([...onA, ...onB].map((m) => m.return?.()));
  });
});
