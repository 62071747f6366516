/** Comparing two threads' logs (a fork and its source, typically). */

import type { ThreadDiffView } from '../reads/index.js';
import { builder } from './builder.js';
import { unwrapResult } from './error-classes.js';
import { ThreadEventRef } from './refs.js';

const ThreadDiffRef = builder.objectRef<ThreadDiffView>('ThreadDiff').implement({
  description: 'Where two logs diverge: both agree on entries [0, commonPrefix).',
  fields: (t) => ({
    commonPrefix: t.exposeInt('commonPrefix'),
    onlyA: t.field({ type: [ThreadEventRef], resolve: (d) => d.onlyA }),
    onlyB: t.field({ type: [ThreadEventRef], resolve: (d) => d.onlyB }),
  }),
});

builder.queryField('diffThreads', (t) =>
  t.field({
    type: ThreadDiffRef,
    args: { a: t.arg.id({ required: true }), b: t.arg.id({ required: true }) },
    resolve: async (_r, { a, b }, ctx) => unwrapResult(await ctx.reads.diff(a, b)),
  }),
);
