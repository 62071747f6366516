import { performance } from 'node:perf_hooks';
import {
  DIRECT,
  type DirectSink,
  type MaybeDirect,
  type Member,
  pushDirect,
  wake,
} from './direct-mode.js';

/**
 * Subscription groups: subscribers of the same (tenant, field, normalised arguments) share one
 * live stream. The group's stream is opened once (one hub listener, one feed evaluation per
 * commit) and each value it yields, the same object, is pushed to every member's bounded queue,
 * so a commit costs one evaluation per group plus a queue push per member; the server executes
 * and serialises a value once for the identical subscriptions of the group
 * (src/server/shared-execution.ts) and sends that one payload to each socket.
 *
 * Resume from a cursor: a member joins the group first (its queue buffers what the group yields
 * from then on), then reads its own stream from the cursor, which replays the stored backlog and
 * continues live. Both are suffixes of the same ordered sequence of values, so once its own stream
 * has yielded a value at or past the first one buffered, everything after is in the buffer: the
 * member closes its own stream, drops the buffered values it already had (by position) and
 * continues with the group. No gap (the group's stream is gap-free from its first value) and no
 * duplicate (positions are strictly increasing).
 *
 * A slow member does not delay the others: pushing never waits. A member holding more than
 * `bufferSize` values falls back to its own stream from the last value it took (re-read from the
 * store, paced by its connection, as a replay is) and joins again as above; one that has no
 * such stream (the live-only tenant-wide streams) is dropped with SlowConsumerError, and its
 * client resubscribes. A connection that does not read at all is closed by its send buffer
 * (src/server/send-buffer.ts). While a member reads its own stream, an overflowing buffer is
 * cleared (it is refilled with later values, which the own stream reaches in turn).
 *
 * Admission: each member costs `cost` units for its life, charged to its holder (an API key) and
 * to the process; a member over either cap is refused with SubscriptionCostError.
 */

/** The name of the activity feeds among a hub's shared helpers. */
export const ACTIVITY_FEEDS = 'activity';

/** A position in a group's ordered sequence of values (compared lexicographically). */
export type Position = readonly number[];

export interface JoinOptions<T> {
  /** The group: everything that decides what the stream yields (tenant, field, arguments). */
  key: string;
  /** Opens the group's live stream (called once per group, by its first member). */
  open: () => AsyncIterableIterator<T>;
  /**
   * This member's own stream (replay, then live), read until it meets the group's values: from
   * its cursor (`after` undefined), or from just after the value `after` (when it fell
   * `bufferSize` values behind the group). With it, `position` is required.
   */
  resume?: (after: T | undefined) => AsyncIterableIterator<T>;
  position?: (value: T) => Position;
  /** What this member costs (see subscriptionCost) and who pays for it. */
  cost: number;
  holder: string;
  /** The member's delivery (src/events/types.ts Delivery): stamped with when its values arrived. */
  delivery?: { itemsAt: number | undefined };
}

export interface GroupCaps {
  /** Cost units one holder (API key) may hold at once. */
  perHolder: number;
  /** Cost units the process may hold at once. */
  total: number;
}

export const DEFAULT_GROUP_CAPS: GroupCaps = { perHolder: 25_000, total: 100_000 };

export interface GroupStats {
  groups: number;
  subscribers: number;
  cost: number;
  /** Members dropped so far for falling `bufferSize` values behind their group. */
  droppedSlow: number;
  /** Times a member fell `bufferSize` values behind and caught up from the store instead. */
  fellBehind: number;
}

export interface SubscriptionGroups {
  /** A member of the group `key` (made on first join, closed with its last member). */
  join<T>(options: JoinOptions<T>): AsyncIterableIterator<T>;
  /** Refuses (SubscriptionCostError) when `cost` more would exceed a cap; else nothing. */
  check(holder: string, cost: number): void;
  stats(): GroupStats;
  /** A helper shared by every member of these groups (e.g. the activity feeds), made once. */
  shared<T>(name: string, make: () => T): T;
}

/** A subscription refused for what it would cost (per holder or per process). */
export class SubscriptionCostError extends Error {
  readonly code = 'SUBSCRIPTION_COST_LIMIT';
  constructor(
    readonly scope: 'key' | 'process',
    readonly cost: number,
    readonly held: number,
    readonly cap: number,
  ) {
    super(
      `this subscription costs ${cost} units and ${scope === 'key' ? 'this key' : 'this server'} ` +
        `already holds ${held} of ${cap} (${scope === 'key' ? 'WEFT_SUBSCRIPTION_COST_PER_KEY' : 'WEFT_SUBSCRIPTION_COST_TOTAL'}); ` +
        'end some subscriptions, narrow the filter or resume from a later cursor',
    );
    this.name = 'SubscriptionCostError';
  }
}

/** A member that fell too far behind its group: it ends, and its client resumes from its cursor. */
export class SlowConsumerError extends Error {
  readonly code = 'SLOW_CONSUMER';
  constructor(readonly behind: number) {
    super(
      `this subscription fell ${behind} events behind and was ended; resubscribe with the last cursor received`,
    );
    this.name = 'SlowConsumerError';
  }
}

/** What a subscription costs: 1 per thread-scoped stream, more for breadth and replay. */
export function subscriptionCost(options: {
  /** Every thread of the tenant (threadActivity, run or approval streams without threadId). */
  tenantWide: boolean;
  /** Entries (or activity rows) to replay from the cursor; 0 when live. */
  backlog: number;
}): number {
  const breadth = options.tenantWide ? TENANT_WIDE_COST : 1;
  return breadth + Math.ceil(Math.max(0, options.backlog) / REPLAY_UNIT);
}

/** The longest stretch (ms) members are handed values without a turn of the event loop. */
const SLICE_MS = 2;

/** A stream over every thread of a tenant evaluates every commit of the tenant. */
const TENANT_WIDE_COST = 5;
/** One cost unit per this many entries of backlog to replay. */
const REPLAY_UNIT = 256;

interface Group {
  members: Set<Member>;
  source: AsyncIterableIterator<unknown>;
}

export function compare(a: Position, b: Position): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i]! !== b[i]!) return a[i]! - b[i]!;
  }
  return a.length - b.length;
}

/** Cost units held per holder and in all, against the caps. */
function createLedger(caps: GroupCaps) {
  const held = new Map<string, number>();
  let total = 0;
  function check(holder: string, cost: number): void {
    const own = held.get(holder) ?? 0;
    if (own + cost > caps.perHolder)
      throw new SubscriptionCostError('key', cost, own, caps.perHolder);
    if (total + cost > caps.total)
      throw new SubscriptionCostError('process', cost, total, caps.total);
  }
  function charge(holder: string, cost: number): () => void {
    check(holder, cost);
    held.set(holder, (held.get(holder) ?? 0) + cost);
    total += cost;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (held.get(holder) ?? cost) - cost;
      if (left <= 0) held.delete(holder);
      else held.set(holder, left);
      total -= cost;
    };
  }

  return { check, charge, total: () => total };
}

/** A member's side: its own stream until it meets the group's values, then its queue. */
function memberStream<T>(
  o: JoinOptions<T>,
  member: Member,
  first: AsyncIterableIterator<T> | undefined,
  leaveGroup: () => void,
  slice: () => Promise<void> | undefined,
): AsyncIterableIterator<T> & MaybeDirect {
  let own = first;
  let finished = false;
  let last: Position | undefined;
  let lastValue: T | undefined;
  const position = o.position ?? (() => [] as Position);

  const finish = async () => {
    if (finished) return;
    finished = true;
    member.ended = true;
    leaveGroup();
    wake(member);
    const closing = own;
    own = undefined;
    await closing?.return?.();
  };

  /** Leaves the own stream once it has reached what the group buffered. */
  const switchToGroup = async () => {
    const closing = own;
    own = undefined;
    member.live = true;
    while (member.queue.length > 0 && compare(position(member.queue[0] as T), last!) <= 0) {
      member.queue.shift();
    }
    await closing?.return?.();
  };

  async function nextOwn(): Promise<IteratorResult<T>> {
    const first = member.queue[0];
    if (last !== undefined && first !== undefined && compare(position(first as T), last) <= 0) {
      await switchToGroup();
      return next();
    }
    let step: IteratorResult<T>;
    try {
      step = await own!.next();
    } catch (error) {
      await finish();
      throw error;
    }
    if (step.done === true) {
      await finish();
      return { done: true, value: undefined };
    }
    last = position(step.value);
    lastValue = step.value;
    return step;
  }

  member.tookDirect = (value) => {
    if (o.position !== undefined) {
      last = o.position(value as T);
      lastValue = value as T;
    }
  };

  async function next(): Promise<IteratorResult<T>> {
    let sliced = false;
    for (;;) {
      if (finished) return { done: true, value: undefined };
      if (member.inFlight > 0) {
        // Values handed to the sink come first: nothing else until they are settled.
        await new Promise<void>((resolve) => {
          member.wake = resolve;
        });
        continue;
      }
      if (member.returned.length > 0) {
        const value = member.returned.shift() as T;
        member.tookDirect?.(value);
        return { done: false, value };
      }
      if (!member.live && o.resume !== undefined) {
        // Fell behind: from the last value taken (or the cursor, when none was).
        own ??= o.resume(lastValue);
        return nextOwn();
      }
      if (member.failure !== undefined && member.queue.length === 0) {
        const failure = member.failure;
        await finish();
        throw failure;
      }
      if (member.queue.length > 0) {
        // The members of a commit are served in slices: other requests get a turn between,
        // after which everything is looked at again (the member may have fallen behind).
        if (!sliced) {
          sliced = true;
          const pause = slice();
          if (pause !== undefined) {
            await pause;
            continue;
          }
        }
        if (o.delivery !== undefined) o.delivery.itemsAt = member.stampedAt;
        const value = member.queue.shift() as T;
        if (o.position !== undefined) {
          last = o.position(value);
          lastValue = value;
        }
        return { done: false, value };
      }
      if (member.ended) {
        await finish();
        return { done: true, value: undefined };
      }
      await new Promise<void>((resolve) => {
        member.wake = resolve;
      });
    }
  }

  return {
    next,
    [DIRECT](sink: DirectSink) {
      member.sink = sink;
    },
    async return() {
      await finish();
      return { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      await finish();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

export function createSubscriptionGroups(
  options: { bufferSize?: number; caps?: Partial<GroupCaps> } = {},
): SubscriptionGroups {
  const bufferSize = options.bufferSize ?? 1024;
  const caps: GroupCaps = { ...DEFAULT_GROUP_CAPS, ...options.caps };
  const groups = new Map<string, Group>();
  const ledger = createLedger(caps);
  let sliceStart = performance.now();
  /**
   * Hands a value over at once while the current stretch of deliveries is under SLICE_MS,
   * else after a turn of the event loop: a commit to thousands of members runs as chains of
   * promise jobs, which would otherwise hold every other request until the last one is sent.
   * Undefined when there is no need to wait (no promise to make for each member).
   */
  const slice = (): Promise<void> | undefined => {
    if (performance.now() - sliceStart < SLICE_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        sliceStart = performance.now();
        resolve();
      }),
    );
  };
  let subscribers = 0;
  let droppedSlow = 0;
  let fellBehind = 0;

  function push(member: Member, value: unknown): void {
    if (member.ended) return;
    if (pushDirect(member, value, bufferSize)) return;
    if (member.queue.length >= bufferSize) {
      if (!member.live || member.resumable) {
        // Replaying its own stream, or now falling back to it: the buffer restarts with later
        // values (see above).
        if (member.live) fellBehind++;
        member.live = false;
        member.queue.length = 0;
      } else {
        droppedSlow++;
        member.failure = new SlowConsumerError(member.queue.length);
        member.queue.length = 0;
        wake(member);
        return;
      }
    }
    member.queue.push(value);
    member.stampedAt = performance.now();
    wake(member);
  }

  /** Reads the group's stream while it has members, pushing each value to every member. */
  async function pump(key: string, group: Group): Promise<void> {
    let failure: unknown;
    try {
      for (;;) {
        const step = await group.source.next();
        if (step.done === true) break;
        for (const member of group.members) push(member, step.value);
        if (group.members.size === 0) break;
      }
    } catch (error) {
      failure = error;
    }
    if (groups.get(key) === group) groups.delete(key);
    for (const member of group.members) {
      if (failure !== undefined && member.failure === undefined) member.failure = failure;
      member.ended = member.ended || failure === undefined;
      wake(member);
    }
  }

  function groupOf<T>(key: string, open: () => AsyncIterableIterator<T>): Group {
    let group = groups.get(key);
    if (group === undefined) {
      group = { members: new Set(), source: open() };
      groups.set(key, group);
      void pump(key, group);
    }
    return group;
  }

  function leave(key: string, group: Group, member: Member): void {
    if (!group.members.delete(member)) return;
    subscribers--;
    if (group.members.size === 0) {
      if (groups.get(key) === group) groups.delete(key);
      void group.source.return?.();
    }
  }

  function join<T>(o: JoinOptions<T>): AsyncIterableIterator<T> {
    const release = ledger.charge(o.holder, o.cost);
    let group: Group;
    let own: AsyncIterableIterator<T> | undefined;
    try {
      own = o.resume?.(undefined);
      group = groupOf(o.key, o.open);
    } catch (error) {
      release();
      void own?.return?.();
      throw error;
    }
    const member: Member = {
      queue: [],
      resumable: o.resume !== undefined,
      live: o.resume === undefined,
      wake: undefined,
      failure: undefined,
      ended: false,
      stampedAt: 0,
      sink: undefined,
      inFlight: 0,
      returned: [],
      tookDirect: undefined,
    };
    group.members.add(member);
    subscribers++;
    return memberStream(
      o,
      member,
      own,
      () => {
        release();
        leave(o.key, group, member);
      },
      slice,
    );
  }

  const helpers = new Map<string, unknown>();
  return {
    join,
    check: ledger.check,
    shared<T>(name: string, make: () => T): T {
      if (!helpers.has(name)) helpers.set(name, make());
      return helpers.get(name) as T;
    },
    stats: () => ({
      groups: groups.size,
      subscribers,
      cost: ledger.total(),
      droppedSlow,
      fellBehind,
    }),
  };
}
