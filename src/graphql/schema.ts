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
import './diff.js';
import './subscription.js';
import './projection.js';

// Subscriptions: src/graphql/subscription.ts declares `builder.subscriptionType({ … })` with its
// fields and is imported here. (A Subscription type without fields is an invalid schema, so it is
// declared there, not here.) Thread.projection is added by src/graphql/projection.ts likewise.

builder.queryType({
  description: 'Reads. Failures carry extensions.code NOT_FOUND or BAD_USER_INPUT.',
  // Every query needs the `read` scope.
  authScopes: { read: true },
});
builder.mutationType({
  description: 'Writes, through the engine. Expected failures are typed members of each XResult.',
  // Every mutation needs the `write` scope unless it names another (resolveApproval: approve).
  authScopes: { write: true },
});

/** The schema, types sorted by name (the printed SDL in schema/schema.graphql is this). */
export const schema = lexicographicSortSchema(builder.toSchema());
