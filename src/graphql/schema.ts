/**
 * The executable schema: imports every domain file (each registers its types, queries and
 * mutations on the builder) and builds once. Subscriptions register in subscription.ts.
 */
import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './enums.js';
import './errors.js';
import './thread.js';
import './node.js';
import './memory.js';
import './event.js';
import './run.js';
import './approval.js';
import './search.js';
import './diff.js';
import './subscription.js';
import './activity.js';
import './projection.js';
import './viewer.js';
import './audit.js';
import './redaction.js';

// Subscriptions: src/graphql/subscription.ts declares `builder.subscriptionType({ … })` with its
// fields and is imported here. (A Subscription type without fields is an invalid schema, so it is
// declared there, not here.) Thread.projection is added by src/graphql/projection.ts likewise.

builder.queryType({
  description: 'Reads. Failures carry extensions.code NOT_FOUND or BAD_USER_INPUT.',
  // Every query needs the `read` scope.
  authScopes: { read: true },
});
builder.mutationType({
  description:
    'Writes, through the engine. Expected failures are typed members of each XResult. Every mutation needs the `write` scope (resolveApproval: `approve`). Reading what a mutation returns needs `read` as well, except its receipt: `__typename`, the scalar and enum fields (not JSON) of the …Success payloads and of the Error types (logIndex, code, message, issues, ids), and the `id` of each object a payload names (thread { id }, run { id }, nodes { id }). A key without `read` that selects anything else (run { status }, memory { content }, …) gets FORBIDDEN naming that field (extensions.field, extensions.fieldPath), before anything is written.',
  // Every mutation needs the `write` scope unless it names another (resolveApproval: approve);
  // the `read` rule for its result is FieldScopesPlugin's (field-scopes.ts).
  authScopes: { write: true },
});

/** The schema, types sorted by name (the printed SDL in schema/schema.graphql is this). */
export const schema = lexicographicSortSchema(builder.toSchema());
