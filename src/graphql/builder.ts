/**
 * The Pothos schema builder: plugins and their settings, the context type and the scalar
 * typings. It defines no types; each domain file (thread.ts, node.ts, run.ts, …) adds its own,
 * and schema.ts imports them all.
 *
 * Auth: scope-auth goes first in `plugins`, so it wraps every other plugin's
 * resolvers. The root types carry the scope of their fields (Query and Subscription: `read`,
 * Mutation: `write`; a field may ask for another, e.g. resolveApproval: `approve`), so every
 * field is checked, a new one included. Subscriptions are authorised when they are created. A
 * caller without a valid key fails with UNAUTHENTICATED, one without the scope with FORBIDDEN.
 *
 * A mutation's result can reach stored data, so FieldScopesPlugin (field-scopes.ts), right inside
 * scope-auth, refuses a mutation whose response selects anything but receipt fields (ids,
 * logIndex, error fields, __typename) unless the caller also has `read`.
 */
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import { GraphQLError } from 'graphql';
import type { JsonValue } from '../core/json.js';
import { type GraphQLContext, grants, type Scope } from './context.js';
import { validationErrorOf } from './error-classes.js';
import FieldScopesPlugin from './field-scopes.js';

/** Limits of one operation (complexity plugin); connection fields multiply by `first`. */
export const COMPLEXITY_LIMITS = { complexity: 50_000, depth: 15, breadth: 400 } as const;

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  AuthScopes: Record<Scope, boolean>;
  Scalars: {
    JSON: { Input: JsonValue; Output: unknown };
    DateTime: { Input: Date; Output: Date | string };
    ID: { Input: string; Output: string };
  };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  plugins: [
    ScopeAuthPlugin,
    FieldScopesPlugin,
    ErrorsPlugin,
    ValidationPlugin,
    RelayPlugin,
    ComplexityPlugin,
  ],
  defaultFieldNullability: false,
  scopeAuth: {
    authorizeOnSubscribe: true,
    authScopes: (ctx) => ({
      read: grants(ctx, 'read'),
      write: grants(ctx, 'write'),
      approve: grants(ctx, 'approve'),
      admin: grants(ctx, 'admin'),
    }),
    unauthorizedError: (_parent, ctx, info) =>
      ctx.auth.authenticated
        ? new GraphQLError(
            `this API key may not use ${info.parentType.name}.${info.fieldName}: it lacks the scope (${[...ctx.auth.scopes].join(', ') || 'none'} granted)`,
            { extensions: { code: 'FORBIDDEN' } },
          )
        : new GraphQLError(
            `authentication required: ${ctx.auth.reason ?? 'send Authorization: Bearer <API key>'}`,
            { extensions: { code: 'UNAUTHENTICATED' } },
          ),
  },
  errors: {
    // Input validation failures of mutations become the typed ValidationError of their union.
    unsafelyHandleInputErrors: true,
  },
  validation: {
    validationError: (failure) => validationErrorOf(failure.issues),
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
  complexity: {
    defaultComplexity: 1,
    defaultListMultiplier: 5,
    limit: COMPLEXITY_LIMITS,
    complexityError: (kind, result) =>
      new GraphQLError(
        `query ${kind.toLowerCase()} ${result[kind.toLowerCase() as 'depth']} is over the limit of ${
          result[`max${kind}` as 'maxDepth']
        }: ask for fewer fields, a smaller \`first\`, or split the query`,
        { extensions: { code: 'QUERY_TOO_COMPLEX' } },
      ),
  },
});
