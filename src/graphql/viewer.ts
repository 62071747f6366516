/** `viewer`: what the caller's key may do, so a client can hide what it would be refused. */
import { grants, SCOPES, type Scope } from '../auth/types.js';
import { builder } from './builder.js';

const ScopeEnum = builder.enumType('Scope', {
  description: 'What an API key may do (`admin` includes the other three).',
  values: {
    READ: { value: 'read', description: 'Queries and subscriptions.' },
    WRITE: { value: 'write', description: 'Mutations other than resolveApproval.' },
    APPROVE: { value: 'approve', description: 'resolveApproval.' },
    ADMIN: { value: 'admin', description: 'Everything.' },
  } as const,
});

const ViewerRef = builder.objectRef<{ scopes: Scope[] }>('Viewer').implement({
  description: 'The caller of this operation.',
  fields: (t) => ({
    scopes: t.field({
      type: [ScopeEnum],
      description:
        'The scopes the caller holds, those `admin` implies included (open mode: all of them).',
      resolve: (v) => v.scopes,
    }),
  }),
});

builder.queryField('viewer', (t) =>
  t.field({
    type: ViewerRef,
    description:
      'The caller: answered to any valid key, whatever its scopes (the `read` scope of other queries is not needed).',
    // Any authenticated caller may ask what it may do; an unauthenticated one is refused.
    skipTypeScopes: true,
    authScopes: (_root, _args, ctx) => ctx.auth.authenticated,
    resolve: (_r, _a, ctx) => ({ scopes: SCOPES.filter((scope) => grants(ctx, scope)) }),
  }),
);
