/** Log entries as ThreadEvents, and the thread's event list. */
import { builder } from './builder.js';
import { badInput } from './error-classes.js';
import { decodeCursor, isInt, pageSize, toConnection } from './pagination.js';
import { ThreadEventRef, ThreadRef } from './refs.js';
import { pageSizeHint } from './thread.js';

ThreadEventRef.implement({
  description: 'One log entry of a thread. `entry` is the stored envelope (lowercase JSON forms).',
  fields: (t) => ({
    threadId: t.exposeID('threadId'),
    index: t.exposeInt('index'),
    id: t.exposeID('id'),
    type: t.exposeString('type'),
    recordedAt: t.field({ type: 'DateTime', resolve: (e) => e.recordedAt }),
    entry: t.field({ type: 'JSON', resolve: (e) => e.entry }),
  }),
});

export const ThreadEventConnection = builder.connectionObject({
  type: ThreadEventRef,
  name: 'ThreadEventConnection',
  edgesNullable: false,
  nodeNullable: false,
});

builder.objectField(ThreadRef, 'events', (t) =>
  t.field({
    type: ThreadEventConnection,
    description:
      'Log entries in index order; afterIndex: only entries with a greater index (-1 or null: from ' +
      'the start; below -1 is refused, not read as -1).',
    args: { afterIndex: t.arg.int(), first: t.arg.int(), after: t.arg.string() },
    complexity: (args) => ({ field: 1, multiplier: pageSizeHint(args.first) }),
    resolve: async (th, args, ctx) => {
      // Below -1 names no position in the log: most likely a client's off-by-n, so it is refused
      // instead of silently meaning "from the start".
      if (args.afterIndex != null && args.afterIndex < -1) {
        throw badInput('$.afterIndex', `must be an integer >= -1 (got ${args.afterIndex})`);
      }
      const size = pageSize(args.first);
      const after = decodeCursor(args.after, isInt);
      const from = Math.max(after ?? -1, args.afterIndex ?? -1);
      const rows = await ctx.reads.events(th.id, from, size + 1);
      return toConnection(rows, size, (e) => e.index, from >= 0);
    },
  }),
);
