/**
 * Direct mode of a group member (src/events/groups.ts, DIRECT): values the group pushes while the
 * member's reader waits go to its sink; what the sink does not take comes out of the reader in
 * order, before anything newer; and nothing (not even the group's failure) comes out while
 * tickets are unsettled. The group's source here is a plain channel: what is tested is the
 * hand-over, not a database.
 */
import { describe, expect, it } from 'vitest';
import {
  createSubscriptionGroups,
  DIRECT,
  type DirectTicket,
  type MaybeDirect,
} from '../../src/events/index.js';

/** An async iterator fed by hand: `push` a value, `fail` it, `end` it. */
function channel<T>() {
  const queue: T[] = [];
  let waiting: ((step: IteratorResult<T>) => void) | undefined;
  let rejecting: ((error: unknown) => void) | undefined;
  let failure: unknown;
  let ended = false;
  const iterator: AsyncIterableIterator<T> = {
    next() {
      if (queue.length > 0) return Promise.resolve({ done: false, value: queue.shift()! });
      if (failure !== undefined) return Promise.reject(failure);
      if (ended) return Promise.resolve({ done: true, value: undefined });
      return new Promise((resolve, reject) => {
        waiting = resolve;
        rejecting = reject;
      });
    },
    async return() {
      ended = true;
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return {
    iterator,
    push(value: T) {
      const w = waiting;
      waiting = undefined;
      if (w === undefined) queue.push(value);
      else w({ done: false, value });
    },
    fail(error: unknown) {
      failure = error;
      const r = rejecting;
      waiting = undefined;
      r?.(error);
    },
  };
}

/** Lets every pending promise job and one turn of the event loop run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function member(positionOf?: (value: number) => number[]) {
  const source = channel<number>();
  const groups = createSubscriptionGroups();
  const reader = groups.join<number>({
    key: 'k',
    open: () => source.iterator,
    cost: 1,
    holder: 'h',
    ...(positionOf === undefined ? {} : { position: positionOf }),
  });
  const tickets: DirectTicket[] = [];
  (reader as MaybeDirect)[DIRECT]!((ticket) => tickets.push(ticket));
  return { source, reader, tickets };
}

describe('direct mode of a group member', () => {
  it('hands values to the sink only while the reader waits with nothing queued', async () => {
    const { source, reader, tickets } = member();
    // Nobody reads yet: the first value is queued, not handed over.
    source.push(1);
    await settle();
    expect(tickets).toHaveLength(0);
    expect(await reader.next()).toEqual({ done: false, value: 1 });
    // Now the reader waits: the next two go to the sink and do not come out of next().
    const next = reader.next();
    source.push(2);
    source.push(3);
    await settle();
    expect(tickets.map((t) => t.value)).toEqual([2, 3]);
    for (const t of tickets) t.settle(true);
    source.push(4);
    await settle();
    expect(tickets.map((t) => t.value)).toEqual([2, 3, 4]);
    tickets[2]!.settle(false);
    // Not taken: it comes out of the reader, and the member leaves direct mode.
    expect(await next).toEqual({ done: false, value: 4 });
    source.push(5);
    expect(await reader.next()).toEqual({ done: false, value: 5 });
    expect(tickets).toHaveLength(3);
  });

  it('gives back what was not taken in order, before newer values, after every ticket settles', async () => {
    const { source, reader, tickets } = member();
    const next = reader.next();
    source.push(1);
    source.push(2);
    source.push(3);
    await settle();
    expect(tickets.map((t) => t.value)).toEqual([1, 2, 3]);
    tickets[0]!.settle(true);
    tickets[1]!.settle(false);
    // Left direct mode: a newer value is queued while ticket 3 is still out.
    source.push(4);
    await settle();
    expect(tickets).toHaveLength(3);
    let resolved = false;
    void next.then(() => {
      resolved = true;
    });
    await settle();
    expect(resolved).toBe(false);
    // Ticket 3 can no longer be delivered (the member left direct mode): settled untaken.
    expect(tickets[2]!.deliverable()).toBe(false);
    tickets[2]!.settle(false);
    expect(await next).toEqual({ done: false, value: 2 });
    expect(await reader.next()).toEqual({ done: false, value: 3 });
    expect(await reader.next()).toEqual({ done: false, value: 4 });
  });

  it('reports the group failing only once the values before it are settled', async () => {
    const { source, reader, tickets } = member();
    const next = reader.next().then(
      (step) => ({ step }),
      (error: unknown) => ({ error }),
    );
    source.push(1);
    await settle();
    source.fail(new Error('the source broke'));
    await settle();
    let outcome: unknown;
    void next.then((o) => {
      outcome = o;
    });
    await settle();
    expect(outcome).toBeUndefined();
    tickets[0]!.settle(true);
    expect(await next).toEqual({ error: new Error('the source broke') });
  });

  it('a ticket is not deliverable once the reader has ended', async () => {
    const { source, reader, tickets } = member();
    void reader.next();
    source.push(1);
    await settle();
    expect(tickets[0]!.deliverable()).toBe(true);
    await reader.return!();
    expect(tickets[0]!.deliverable()).toBe(false);
    tickets[0]!.settle(false);
    expect(await reader.next()).toEqual({ done: true, value: undefined });
  });
});
