/**
 * Subscribers woken by a commit are woken in groups, one group per turn of the event loop, in
 * order, so other clients' I/O gets turns between the groups instead of waiting for every
 * delivery.
 */
import { describe, expect, it } from 'vitest';
import { LiveQueue, Waker } from '../../src/events/queue.js';

const turn = () => new Promise((r) => setImmediate(r));

describe('Waker', () => {
  it('wakes at most perTurn per turn of the event loop, in the order asked', async () => {
    const waker = new Waker(4);
    const woken: number[] = [];
    for (let i = 0; i < 10; i++) waker.wake(() => woken.push(i));
    expect(woken).toEqual([]);
    await turn();
    expect(woken).toEqual([0, 1, 2, 3]);
    await turn();
    expect(woken).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Wakes asked for meanwhile queue behind the earlier ones.
    waker.wake(() => woken.push(10));
    await turn();
    await turn();
    expect(woken).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('a queue parked on wait() is woken through its waker by push, at once by end', async () => {
    const waker = new Waker(1);
    const queues = [0, 1, 2].map(() => new LiveQueue(10, 10, waker));
    const controller = new AbortController();
    const resumed: number[] = [];
    const waits = queues.map((q, i) => q.wait(controller.signal).then(() => resumed.push(i)));
    for (const [i, q] of queues.entries()) {
      q.push({ threadId: 't', index: i } as never);
    }
    await Promise.resolve();
    expect(resumed).toEqual([]);
    await turn();
    expect(resumed).toEqual([0]);
    queues[2]!.end();
    await turn();
    await turn();
    await Promise.all(waits);
    expect(resumed.sort()).toEqual([0, 1, 2]);
    expect(queues[0]!.shift()).toMatchObject({ index: 0 });
  });
});
