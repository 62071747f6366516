/**
 * Direct mode of a subscription group's member (groups.ts): a member's reader may take values as
 * the group pushes them, instead of one by one through the member's iterator (a promise step per
 * value and member). The iterator of a member has a `[DIRECT]` method that attaches a sink; the
 * group hands a value to it only while the reader waits on `next()` with nothing queued, so
 * everything before it has been delivered. The sink settles each ticket, in the order given:
 * taken (delivered), or not (the value then comes out of `next()` as usual, before anything
 * newer, and the member leaves direct mode). `next()` does not hand out anything while tickets
 * are unsettled. The server's sink is src/server/shared-execution.ts (direct delivery).
 */
import { performance } from 'node:perf_hooks';

export const DIRECT = Symbol('weft.direct');

export interface DirectTicket {
  value: unknown;
  /** When the group pushed it (performance.now()), as Delivery.itemsAt. */
  arrivedAt: number;
  /** False once the member left direct mode or ended: settle it untaken. */
  deliverable(): boolean;
  settle(taken: boolean): void;
}

export type DirectSink = (ticket: DirectTicket) => void;

/** An iterator that may offer direct mode (a member's, or one wrapping it unchanged). */
export interface MaybeDirect {
  [DIRECT]?: (sink: DirectSink) => void;
}

/**
 * `wrapper`, offering the direct mode of `source` when it has one: for a wrapper that passes
 * values through unchanged (it may change failures, which direct mode never takes).
 */
export function withDirect<W extends object>(wrapper: W, source: object): W {
  const attach = (source as MaybeDirect)[DIRECT];
  if (attach !== undefined) (wrapper as MaybeDirect)[DIRECT] = attach.bind(source);
  return wrapper;
}

/** A member of a group (groups.ts), with what direct mode keeps of it. */
export interface Member {
  queue: unknown[];
  /** It can fall back to its own stream (see JoinOptions.resume). */
  resumable: boolean;
  /** Values from `queue` are handed out; false while the member reads its own stream. */
  live: boolean;
  wake: (() => void) | undefined;
  failure: unknown;
  ended: boolean;
  stampedAt: number;
  /** Direct mode (see DIRECT): the reader's sink, tickets not yet settled, values not taken. */
  sink: DirectSink | undefined;
  inFlight: number;
  returned: unknown[];
  /** Notes a value delivered directly as the last one taken (for a later resume). */
  tookDirect: ((value: unknown) => void) | undefined;
}

export const wake = (member: Member) => {
  const w = member.wake;
  member.wake = undefined;
  w?.();
};

function settleDirect(member: Member, value: unknown, taken: boolean): void {
  member.inFlight--;
  if (taken && member.sink !== undefined) {
    member.tookDirect?.(value);
  } else if (!member.ended) {
    member.sink = undefined;
    member.returned.push(value);
  }
  // The reader goes on once the last ticket is settled (it may have a failure or an end to
  // report, or values not taken); while it waits, values keep going to the sink.
  if (
    member.inFlight === 0 &&
    (member.sink === undefined || member.failure !== undefined || member.ended)
  ) {
    wake(member);
  }
}

/** Hands `value` to the member's sink when direct mode applies now (see DIRECT). */
export function pushDirect(member: Member, value: unknown, bufferSize: number): boolean {
  const sink = member.sink;
  if (
    sink === undefined ||
    member.wake === undefined ||
    !member.live ||
    member.queue.length > 0 ||
    member.returned.length > 0 ||
    member.failure !== undefined ||
    member.inFlight >= bufferSize
  ) {
    return false;
  }
  member.inFlight++;
  sink(new Ticket(member, value, performance.now()));
  return true;
}

/** A class, not an object of closures: one is made per value and member. */
class Ticket implements DirectTicket {
  private settled = false;
  constructor(
    private readonly member: Member,
    readonly value: unknown,
    readonly arrivedAt: number,
  ) {}

  deliverable(): boolean {
    return this.member.sink !== undefined && !this.member.ended;
  }

  settle(taken: boolean): void {
    if (this.settled) return;
    this.settled = true;
    settleDirect(this.member, this.value, taken);
  }
}
