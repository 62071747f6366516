/** The JSON and DateTime scalars. */
import { GraphQLError, Kind, type ValueNode, valueFromASTUntyped } from 'graphql';
import type { JsonValue } from '../core/json.js';
import { isRfc3339, isRfc3339Form } from '../core/log/index.js';
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
  parseValue: (value) => {
    if (typeof value !== 'string') throw notAString(describeValue(value));
    return parseDate(value);
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw notAString(describeLiteral(ast));
    return parseDate(ast.value);
  },
});

const EXAMPLE = '2026-01-01T00:00:00.000Z';

/** The date-time `text` names, or a BAD_USER_INPUT saying whether its form or a field is wrong. */
function parseDate(text: string): Date {
  const shown = JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
  if (!isRfc3339Form(text)) {
    return refuse(
      `${shown} is not an RFC 3339 date-time: write a date, T, a time and Z or an offset, e.g. ${EXAMPLE}`,
    );
  }
  const date = new Date(text);
  // The form is right but a field is not (February 30th, hour 24, an offset of +24:00), or it
  // is a leap second, which a JavaScript date cannot hold.
  if (!isRfc3339(text) || Number.isNaN(date.getTime())) {
    return refuse(
      `${shown} names no time: keep the month within 1–12, the day within the month, the hour within 0–23, and minutes and seconds within 0–59 (also in the offset)`,
    );
  }
  return date;
}

const notAString = (got: string) =>
  badDate(`DateTime is written as a string, e.g. "${EXAMPLE}", not as ${got}`);

const refuse = (message: string): never => {
  throw badDate(`DateTime ${message}`);
};

const badDate = (message: string) =>
  new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/** What a variable's value is, for a message: its JSON type and (when short) the value. */
function describeValue(value: unknown): string {
  if (typeof value === 'number') return `a number (${value})`;
  if (typeof value === 'boolean') return `a boolean (${value})`;
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** What a literal is, for a message. */
function describeLiteral(ast: ValueNode): string {
  switch (ast.kind) {
    case Kind.INT:
    case Kind.FLOAT:
      return `a number (${ast.value})`;
    case Kind.BOOLEAN:
      return `a boolean (${ast.value})`;
    case Kind.ENUM:
      return `an enum value (${ast.value})`;
    case Kind.LIST:
      return 'a list';
    case Kind.OBJECT:
      return 'an object';
    case Kind.VARIABLE:
      return `a variable ($${ast.name.value})`;
    default:
      return 'null';
  }
}
