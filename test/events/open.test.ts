import { afterAll, describe, expect, it } from 'vitest';
import { threadEvents } from '../../src/events/index.js';
import { openEngineWithEvents } from '../../src/index.js';
import { describeWithRedis, REDIS_URL } from '../support/services.js';
import { must, sqliteDatabases, take } from './support.js';

const dbs = sqliteDatabases();
afterAll(() => dbs.cleanup());

describe('openEngineWithEvents', () => {
  it('opens an engine whose commits reach the hub', async () => {
    const { engine, hub, close } = await openEngineWithEvents(await dbs.fresh());
    try {
      must(await engine.createThread({ threadId: 't' }));
      const stream = threadEvents(hub, { threadId: 't' });
      must(await engine.appendNodes({ threadId: 't', nodes: [{ kind: 'system', payload: 1 }] }));
      expect((await take(stream, 1)).map((e) => [e.index, e.type])).toEqual([
        [1, 'nodes_appended'],
      ]);
    } finally {
      await close();
    }
  });

  it('refuses to open (and leaves nothing running) when Redis cannot be reached', async () => {
    const url = await dbs.fresh();
    await expect(
      openEngineWithEvents(url, {
        redisUrl: 'redis://127.0.0.1:1',
        hub: { onError: () => undefined },
      }),
    ).rejects.toThrow(/cannot subscribe to Redis/);
  });
});

describeWithRedis('openEngineWithEvents with REDIS_URL', () => {
  it('fans out between two engines on one database', async () => {
    const url = await dbs.fresh();
    const a = await openEngineWithEvents(url, { redisUrl: REDIS_URL });
    const b = await openEngineWithEvents(url, { redisUrl: REDIS_URL });
    try {
      must(await a.engine.createThread({ threadId: 'shared-open' }));
      const onB = threadEvents(b.hub, { threadId: 'shared-open', afterIndex: 0 });
      must(
        await a.engine.appendNodes({
          threadId: 'shared-open',
          nodes: [{ kind: 'system', payload: 2 }],
        }),
      );
      expect((await take(onB, 1))[0]!.index).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
