/** Log entries as ThreadEvents, and the thread's event list. */

import type { LogEntry } from '../core/log/index.js';
import type { EventHeadView } from '../reads/index.js';
import { MAX_ANSWER_BYTES, withinAnswerBound } from '../reads/index.js';
import { builder } from './builder.js';
import type { GraphQLContext } from './context.js';
import { OrderDirectionEnum } from './enums.js';
import { badInput, NotFoundError, unwrapResult } from './error-classes.js';
import {
  cursorKind,
  isInt,
  pageRequest,
  positionWindow,
  resolveCount,
  windowConnection,
  withCount,
} from './pagination.js';
import { ThreadEventRef, ThreadRef } from './refs.js';
import { pageSizeHint } from './thread.js';

/** A position in a thread's event list: an entry's log index. */
const EVENT_CURSOR = cursorKind('events', isInt);

ThreadEventRef.implement({
  description: 'One log entry of a thread. `entry` is the stored envelope (lowercase JSON forms).',
  fields: (t) => ({
    threadId: t.exposeID('threadId'),
    index: t.exposeInt('index'),
    id: t.exposeID('id'),
    type: t.exposeString('type'),
    recordedAt: t.field({ type: 'DateTime', resolve: (e) => e.recordedAt }),
    entry: t.field({
      type: 'JSON',
      description: `One JSON value: at most ${MAX_ANSWER_BYTES} bytes of it, else ANSWER_TOO_LARGE (an import's entry can be larger: read the nodes it created with Thread.nodes, those whose logIndex is this index).`,
      resolve: async (e, _args, ctx) =>
        unwrapResult(
          await withinAnswerBound(
            'entry' in e ? e.entry : await entryOf(ctx, e),
            'entry',
            `read the nodes it created with Thread.nodes(first: 1000, after: endCursor): those with logIndex ${e.index}`,
          ),
        ),
    }),
  }),
});

/**
 * The body of an entry a list read without it (a list reads entries' heads; the bodies asked
 * for are read together, see Loaders.event). Gone since: the thread was deleted meanwhile.
 */
async function entryOf(ctx: GraphQLContext, e: EventHeadView): Promise<LogEntry> {
  const event = await ctx.loaders.event.load({ threadId: e.threadId, index: e.index });
  if (event === undefined) {
    throw new NotFoundError(
      `entry ${e.index} of thread ${e.threadId} is gone (the thread was deleted)`,
      'ThreadEvent',
      e.id,
    );
  }
  return event.entry;
}

export const ThreadEventConnection = builder.connectionObject(
  {
    type: ThreadEventRef,
    name: 'ThreadEventConnection',
    edgesNullable: false,
    nodeNullable: false,
    fields: (t) => ({
      totalCount: t.int({
        description: 'How many entries the list holds (all pages): those after `afterIndex`.',
        resolve: resolveCount,
      }),
    }),
  },
  { name: 'ThreadEventEdge' },
);

builder.objectField(ThreadRef, 'events', (t) =>
  t.field({
    type: ThreadEventConnection,
    description:
      'Log entries in index order; afterIndex: only entries with a greater index (-1 or null: from ' +
      'the start; below -1 is refused, not read as -1).',
    args: {
      afterIndex: t.arg.int(),
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
      direction: t.arg({
        type: OrderDirectionEnum,
        description: 'ASC (the default): oldest first; DESC: newest first.',
      }),
    },
    complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first ?? args.last) }),
    resolve: async (th, args, ctx) => {
      // Below -1 names no position in the log: most likely a client's off-by-n, so it is refused
      // instead of silently meaning "from the start".
      if (args.afterIndex != null && args.afterIndex < -1) {
        throw badInput('$.afterIndex', `must be an integer >= -1 (got ${args.afterIndex})`);
      }
      const request = pageRequest(args, EVENT_CURSOR);
      const lower = Math.max(0, (args.afterIndex ?? -1) + 1);
      // Indices are contiguous, so a page in either direction is one window of the log.
      const window = positionWindow(request, args.direction === 'desc', lower, th.logLength);
      const rows =
        window.to > window.from
          ? await ctx.reads.eventHeads(th.id, window.from - 1, window.to - window.from)
          : [];
      const page = window.reversed ? [...rows].reverse() : rows;
      const total = Math.max(0, th.logLength - lower);
      return withCount(
        windowConnection(EVENT_CURSOR, page, (e) => e.index, window),
        async () => total,
      );
    },
  }),
);
