/**
 * The Pothos schema builder: plugins and their settings, the context type and the scalar
 * typings. It defines no types; each domain file (thread.ts, node.ts, run.ts, …) adds its own,
 * and schema.ts imports them all.
 *
 * Auth: scope-auth arrives with tenants (DESIGN §7). It goes first in `plugins` (so it wraps
 * every other plugin's resolvers), with `scopeAuth: { authScopes: (ctx) => ctx.scopes }` and an
 * `AuthScopes` entry in the builder's type parameters; nothing else here needs to change.
 */
import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import RelayPlugin from '@pothos/plugin-relay';
import ValidationPlugin from '@pothos/plugin-validation';
import { GraphQLError } from 'graphql';
import type { JsonValue } from '../core/json.js';
import type { GraphQLContext } from './context.js';
import { validationErrorOf } from './error-classes.js';

/** Limits of one operation (complexity plugin); connection fields multiply by `first`. */
export const COMPLEXITY_LIMITS = { complexity: 50_000, depth: 15, breadth: 400 } as const;

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: {
    JSON: { Input: JsonValue; Output: unknown };
    DateTime: { Input: Date; Output: Date | string };
    ID: { Input: string; Output: string };
  };
  DefaultFieldNullability: false;
  DefaultEdgesNullability: false;
  DefaultNodeNullability: false;
}>({
  plugins: [ErrorsPlugin, ValidationPlugin, RelayPlugin, DataloaderPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
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
