/** The JSON and DateTime scalars. */
import { GraphQLError, Kind, valueFromASTUntyped } from 'graphql';
import type { JsonValue } from '../core/json.js';
import { isRfc3339 } from '../core/log/index.js';
import { builder } from './builder.js';

builder.scalarType('JSON', {
  description:
    'Any JSON value. Payloads, memory and log entries come back exactly as stored (canonical key order).',
  serialize: (value) => value,
  parseValue: (value) => value as JsonValue,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables) as JsonValue,
});

builder.scalarType('DateTime', {
  description: 'An RFC 3339 date-time in UTC, e.g. 2026-01-01T12:00:00.000Z.',
  serialize: (value) => {
    const date = value instanceof Date ? value : new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime: not a valid date');
    return date.toISOString();
  },
  parseValue: (value) => parseDate(value),
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw badDate('a string literal');
    return parseDate(ast.value);
  },
});

function parseDate(value: unknown): Date {
  if (!isRfc3339(value)) throw badDate(JSON.stringify(value) ?? String(value));
  return new Date(value);
}

const badDate = (got: string) =>
  new GraphQLError(
    `DateTime must be an RFC 3339 date-time such as 2026-01-01T00:00:00.000Z (got ${got})`,
    { extensions: { code: 'BAD_USER_INPUT' } },
  );
