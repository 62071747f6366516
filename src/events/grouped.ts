/**
 * The Subscription fields as members of subscription groups (groups.ts): the group key is the
 * tenant, the field and its normalised arguments (cursors aside: members with different cursors
 * share the live group once they have replayed their own backlog). A thread-scoped member always
 * reads its own stream first (from its cursor, or from the log's end when it has none, which is
 * what "live" means: committed after it subscribed) and joins the group's values at the first
 * one they share. Tenant-wide streams without a cursor join the group at once.
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import type { ActivityFeeds, ActivitySource } from './activity.js';
import { ACTIVITY_FEEDS, type Position, subscriptionCost } from './groups.js';
import {
  type ApprovalRequestedArgs,
  approvalRequested,
  type NodeAppendedArgs,
  nodeAppended,
  type RunStatusChangedArgs,
  runStatusChanged,
  type ThreadEventsArgs,
  threadEvents,
} from './subscriptions.js';
import type {
  ApprovalRequestPayload,
  EventHub,
  NodeAppendedPayload,
  RunStatusChangePayload,
  ThreadEventPayload,
} from './types.js';

/** Who subscribes: the tenant (part of every group key) and who pays for it (an API key). */
export interface Subscriber {
  tenant: string;
  holder: string;
}

const keyOf = (subscriber: Subscriber, field: string, args: Record<string, unknown>) =>
  canonicalJson([subscriber.tenant, field, args]);

const deliveryOnly = (args: { delivery?: ThreadEventsArgs['delivery'] }) =>
  args.delivery === undefined ? {} : { delivery: args.delivery };

/** Entries after `afterIndex` in the thread's log (0 when live). */
async function backlogOf(hub: EventHub, threadId: string, afterIndex: number | undefined) {
  if (afterIndex === undefined) return 0;
  const length = (await hub.store.getLogLength(threadId)) ?? 0;
  return length - 1 - afterIndex;
}

export async function groupedThreadEvents(
  hub: EventHub,
  subscriber: Subscriber,
  args: ThreadEventsArgs,
): Promise<AsyncIterableIterator<ThreadEventPayload>> {
  const { threadId } = args;
  const cost = subscriptionCost({
    tenantWide: false,
    backlog: await backlogOf(hub, threadId, args.afterIndex),
  });
  return hub.groups.join({
    key: keyOf(subscriber, 'threadEvents', { threadId }),
    open: () => threadEvents(hub, { threadId }),
    resume: (after) =>
      threadEvents(hub, after === undefined ? args : { ...args, afterIndex: after.index }),
    position: (event) => [event.index],
    cost,
    holder: subscriber.holder,
    ...deliveryOnly(args),
  });
}

export async function groupedNodeAppended(
  hub: EventHub,
  subscriber: Subscriber,
  args: NodeAppendedArgs,
): Promise<AsyncIterableIterator<NodeAppendedPayload>> {
  const { threadId } = args;
  const kinds = args.kinds === undefined ? undefined : [...new Set(args.kinds)].sort();
  const filter = kinds === undefined ? {} : { kinds };
  // A node cursor is a sequence, not an index: its backlog is bounded by the log's length.
  const backlog = args.afterSequence === undefined ? 0 : await backlogOf(hub, threadId, -1);
  return hub.groups.join({
    key: keyOf(subscriber, 'nodeAppended', { threadId, ...filter }),
    open: () => nodeAppended(hub, { threadId, ...filter }),
    resume: (after) =>
      nodeAppended(
        hub,
        after === undefined ? args : { ...args, afterSequence: after.node.sequence },
      ),
    position: (event) => [event.node.sequence],
    cost: subscriptionCost({ tenantWide: false, backlog }),
    holder: subscriber.holder,
    ...deliveryOnly(args),
  });
}

const changePosition = (change: RunStatusChangePayload): Position => [
  change.logIndex,
  change.ordinal,
];

export async function groupedRunStatusChanged(
  hub: EventHub,
  subscriber: Subscriber,
  args: RunStatusChangedArgs,
): Promise<AsyncIterableIterator<RunStatusChangePayload>> {
  const { threadId, runId } = args;
  const filter = {
    ...(threadId === undefined ? {} : { threadId }),
    ...(runId === undefined ? {} : { runId }),
  };
  const key = keyOf(subscriber, 'runStatusChanged', filter);
  if (threadId === undefined) {
    // Every thread of the tenant: the tenant's view of the hub, live only (no cursor).
    return hub.groups.join({
      key,
      open: () => runStatusChanged(hub, filter),
      cost: subscriptionCost({ tenantWide: true, backlog: 0 }),
      holder: subscriber.holder,
      ...deliveryOnly(args),
    });
  }
  return hub.groups.join({
    key,
    open: () => runStatusChanged(hub, filter),
    resume: (after) =>
      runStatusChanged(
        hub,
        after === undefined
          ? args
          : { ...args, afterIndex: after.logIndex, afterOrdinal: after.ordinal },
      ),
    position: changePosition,
    cost: subscriptionCost({
      tenantWide: false,
      backlog: await backlogOf(hub, threadId, args.afterIndex),
    }),
    holder: subscriber.holder,
    ...deliveryOnly(args),
  });
}

/**
 * approvalRequested: grouped over every thread of the tenant (live only). With a thread it stays
 * a stream of its own (one entry may request several approvals, which no position orders), but
 * it is admitted and charged like the others.
 */
export async function groupedApprovalRequested(
  hub: EventHub,
  subscriber: Subscriber,
  args: ApprovalRequestedArgs,
): Promise<AsyncIterableIterator<ApprovalRequestPayload>> {
  if (args.threadId === undefined) {
    return hub.groups.join({
      key: keyOf(subscriber, 'approvalRequested', {}),
      open: () => approvalRequested(hub, {}),
      cost: subscriptionCost({ tenantWide: true, backlog: 0 }),
      holder: subscriber.holder,
      ...deliveryOnly(args),
    });
  }
  const cost = subscriptionCost({
    tenantWide: false,
    backlog: await backlogOf(hub, args.threadId, args.afterIndex),
  });
  // A group of one: the cost is held while the stream lives.
  return hub.groups.join({
    key: keyOf(subscriber, 'approvalRequested', { threadId: args.threadId, alone: randomUUID() }),
    open: () => approvalRequested(hub, args),
    cost,
    holder: subscriber.holder,
    ...deliveryOnly(args),
  });
}

/** threadActivity: the tenant's feed, positioned by its activity number. */
export async function groupedThreadActivity(
  hub: EventHub,
  subscriber: Subscriber,
  source: ActivitySource,
  args: { afterSeq: number | undefined; delivery?: ThreadEventsArgs['delivery'] },
) {
  const feeds = hub.groups.shared<ActivityFeeds | undefined>(ACTIVITY_FEEDS, () => undefined);
  if (feeds === undefined) throw new Error('the hub has no activity feeds');
  const { tenant } = subscriber;
  const backlog = args.afterSeq === undefined ? 0 : (await source.lastActivity()) - args.afterSeq;
  return hub.groups.join({
    key: keyOf(subscriber, 'threadActivity', {}),
    open: () => feeds.stream(source, { tenant, afterSeq: undefined }),
    resume: (after) =>
      feeds.stream(source, {
        tenant,
        afterSeq: after === undefined ? args.afterSeq : after.seq,
        ...deliveryOnly(args),
      }),
    position: (row) => [row.seq],
    cost: subscriptionCost({ tenantWide: true, backlog }),
    holder: subscriber.holder,
    ...deliveryOnly(args),
  });
}
