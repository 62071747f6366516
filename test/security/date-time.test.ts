/**
 * Review item 7: a number given as a DateTime literal was refused with "got a string literal".
 * Every kind of bad DateTime — a number, a boolean, another non-string, a malformed string, a
 * string of the right form naming no time (February 30th, hour 24, a leap second, which a
 * JavaScript date cannot hold) — is BAD_USER_INPUT with a message saying what is wrong, written
 * inline and passed in a variable, in a query's filter and a mutation's input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../api/support.js';

/** A bad value, as a literal and as a variable, and what the message must say. */
const CASES: Array<{ what: string; literal: string; variable: unknown; says: RegExp }> = [
  {
    what: 'a number',
    literal: '1767225600000',
    variable: 1767225600000,
    says: /written as a string.*not as a number \(1767225600000\)/,
  },
  { what: 'a float', literal: '1.5', variable: 1.5, says: /not as a number \(1\.5\)/ },
  { what: 'a boolean', literal: 'true', variable: true, says: /not as a boolean \(true\)/ },
  { what: 'a list', literal: '["2026-01-01T00:00:00Z"]', variable: ['x'], says: /not as a list/ },
  { what: 'an object', literal: '{ at: 1 }', variable: { at: 1 }, says: /not as an object/ },
  {
    what: 'a malformed string',
    literal: '"yesterday"',
    variable: 'yesterday',
    says: /"yesterday" is not an RFC 3339 date-time: write a date, T, a time and Z or an offset/,
  },
  {
    what: 'a date without a time',
    literal: '"2026-01-01"',
    variable: '2026-01-01',
    says: /"2026-01-01" is not an RFC 3339 date-time/,
  },
  {
    what: 'February 30th',
    literal: '"2026-02-30T00:00:00Z"',
    variable: '2026-02-30T00:00:00Z',
    says: /"2026-02-30T00:00:00Z" names no time: keep .*the day within the month/,
  },
  {
    what: 'hour 24',
    literal: '"2026-01-01T24:00:00Z"',
    variable: '2026-01-01T24:00:00Z',
    says: /names no time: .*the hour within 0–23/,
  },
  {
    what: 'a leap second',
    literal: '"2026-12-31T23:59:60Z"',
    variable: '2026-12-31T23:59:60Z',
    says: /"2026-12-31T23:59:60Z" names no time/,
  },
];

/** A query and a mutation taking a DateTime, written with `value` (a literal or `$d`). */
const FIELDS = {
  'threads(filter: { createdAfter })': (value: string) =>
    `{ threads(filter: { createdAfter: ${value} }) { totalCount } }`,
  'setThreadExpiry(input: { expiresAt })': (value: string) =>
    `{ setThreadExpiry(input: { threadId: "t1", expiresAt: ${value} }) { __typename } }`,
};
const operation = (name: string) => (name.startsWith('set') ? 'mutation' : 'query');

describe('DateTime says what is wrong with a bad value', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend: 'sqlite' });
    await t.gql('mutation { createThread(input: { threadId: "t1" }) { __typename } }');
  });
  afterAll(() => t.close());

  for (const c of CASES) {
    it(`refuses ${c.what}, inline and in a variable`, async () => {
      for (const [name, document] of Object.entries(FIELDS)) {
        const literal = await t.gql(`${operation(name)} ${document(c.literal)}`);
        const variable = await t.gql(`${operation(name)}($d: DateTime) ${document('$d')}`, {
          d: c.variable,
        });
        for (const [form, answer] of [
          ['literal', literal],
          ['variable', variable],
        ] as const) {
          const error = answer.errors?.[0];
          const where = `${c.what} as a ${form} of ${name}: ${JSON.stringify(answer.errors)}`;
          expect(error?.extensions?.code, where).toBe('BAD_USER_INPUT');
          expect(error?.message, where).toMatch(c.says);
          expect(error?.message, where).not.toMatch(/string literal/);
          expect(answer.data ?? null, where).toBeNull();
        }
      }
    });
  }

  it('takes a good value in either form', async () => {
    for (const [name, document] of Object.entries(FIELDS)) {
      const literal = await t.gql(`${operation(name)} ${document('"2099-01-01T00:00:00+02:00"')}`);
      expect(literal.errors, name).toBeUndefined();
      const variable = await t.gql(`${operation(name)}($d: DateTime) ${document('$d')}`, {
        d: '2099-01-01T00:00:00.000Z',
      });
      expect(variable.errors, name).toBeUndefined();
    }
  });
});
