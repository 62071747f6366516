/** The tenant's audit trail: what was deleted, by whom, when, and the thread's final state. */
import type { AuditView } from '../engine/reads.js';
import { builder } from './builder.js';

const AuditEntryRef = builder.objectRef<AuditView>('AuditEntry').implement({
  description:
    'One entry of the tenant audit trail. `action` is `thread_deleted`; `actor` the API key id ' +
    'that asked (`open` without keys, `system` for the server itself).',
  fields: (t) => ({
    id: t.exposeID('id'),
    recordedAt: t.field({ type: 'DateTime', resolve: (a) => a.recordedAt }),
    actor: t.exposeString('actor'),
    action: t.exposeString('action'),
    threadId: t.exposeID('threadId'),
    logLength: t.exposeInt('logLength'),
    stateHash: t.exposeString('stateHash'),
  }),
});

builder.queryFields((t) => ({
  auditEntries: t.field({
    type: [AuditEntryRef],
    description: "The tenant's audit trail, newest first (at most `first`, 1-500).",
    args: { first: t.arg.int({ defaultValue: 50 }) },
    resolve: (_r, args, ctx) =>
      ctx.reads.auditEntries(ctx.auth.tenant, Math.min(500, Math.max(1, args.first ?? 50))),
  }),
}));
