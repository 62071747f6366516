/**
 * `Subscription.threadActivity`: the live feed of everything the caller's tenant commits — one
 * event per log entry of any of its threads, new threads included — resumable with the cursor of
 * the last event seen, across reconnects, restarts and instances, with nothing missed or
 * repeated (src/events/activity.ts says why).
 */

import { groupedThreadActivity } from '../events/index.js';
import type { ActivityView } from '../reads/index.js';
import { builder } from './builder.js';
import { cursorKind, decodeCursor, encodeCursor, isInt } from './pagination.js';
import { ThreadRef } from './refs.js';
import { admitted, deliveryOf, hubOf, subscriberOf } from './subscription.js';
import { loadThread } from './thread.js';

/** A position in the feed: the tenant's activity number of the last event seen. */
type ActivityCursor = { a: number };
const isActivityCursor = (v: unknown): v is ActivityCursor =>
  typeof v === 'object' && v !== null && isInt((v as ActivityCursor).a);
const ACTIVITY_CURSOR = cursorKind('activity', isActivityCursor);

const ThreadActivityRef = builder.objectRef<ActivityView>('ThreadActivity').implement({
  description:
    'An entry committed to one of the tenant’s threads. Events arrive in commit order; resume after one with `threadActivity(after: cursor)`.',
  fields: (t) => ({
    threadId: t.exposeID('threadId'),
    thread: t.field({
      type: ThreadRef,
      description: 'The thread as it is now (it may have moved on since this entry).',
      resolve: (a, _args, ctx) => loadThread(ctx, a.threadId),
    }),
    index: t.exposeInt('index', { description: 'The entry’s index in its thread’s log.' }),
    type: t.exposeString('type', {
      description: 'The entry’s event type (thread_created, nodes_appended, run_action, …).',
    }),
    recordedAt: t.field({ type: 'DateTime', resolve: (a) => a.recordedAt }),
    cursor: t.string({
      description: 'Pass as `after` to resume the feed after this event.',
      resolve: (a) => encodeCursor(ACTIVITY_CURSOR, { a: a.seq }),
    }),
  }),
});

builder.subscriptionFields((t) => ({
  threadActivity: t.field({
    type: ThreadActivityRef,
    description:
      'Every entry committed to any thread of the caller’s tenant, in commit order: a dashboard’s live feed (a new thread shows as its thread_created entry). Without `after`: from now on. With `after` (a `cursor` of this feed): first everything committed after that event, then live — on any instance, across restarts, with no gap and no repeat.',
    args: { after: t.arg.string() },
    subscribe: async (_root, args, ctx) => {
      const cursor = decodeCursor(args.after, ACTIVITY_CURSOR, 'after');
      const tenant = ctx.auth.tenant;
      const { reads } = ctx;
      return admitted(() =>
        groupedThreadActivity(
          hubOf(ctx),
          subscriberOf(ctx),
          {
            activity: (afterSeq, take) => reads.activity(tenant, afterSeq, take),
            lastActivity: () => reads.lastActivity(tenant),
          },
          { afterSeq: cursor?.a, ...deliveryOf(ctx) },
        ),
      );
    },
    resolve: (a) => a,
  }),
}));
