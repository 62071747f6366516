/**
 * Review item 7: a `runs` cursor was taken by `threads` (its sort key has every member a threads
 * key has), a node sequence by `events`, and so on: another list's cursor paged from an arbitrary
 * place. Every list takes only its own cursors. The lists are derived from the schema (every
 * field with an `after: String` argument), so a list added later is in the matrix without anyone
 * listing it; each gets a cursor of every other list as `after` (and as `before`, where it pages
 * backward) and must answer BAD_USER_INPUT naming the argument, while its own cursor pages.
 * That check is made before any query, the same on every backend: SQLite.
 *
 * A cursor is only base64url JSON, so a client can also forge the integer in one (a node
 * sequence, log index, child or frontier position, search position, feed number) with a value no
 * row has: past what the column holds (2^31 and up, on Postgres a query error, not an empty
 * page) or negative. Every list whose cursors carry an integer refuses such a cursor with the
 * same BAD_USER_INPUT as any other foreign cursor, on SQLite and on Postgres.
 */
import {
  type GraphQLField,
  type GraphQLObjectType,
  getNamedType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.js';
import { type AuthApp, createAuthApp, first, type Json } from '../auth/support.js';
import { postgresAvailable } from '../support/services.js';

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`cursor-kinds: Postgres cases skipped (${pg.reason})`);
}

/** A list field: where it is (`Query`, `Thread`, `Subscription`) and what it returns. */
interface List {
  name: string;
  on: string;
  /** The type its items' cursors belong to: the connection type, or the subscription's type. */
  kind: string;
  field: GraphQLField<unknown, unknown>;
  backward: boolean;
}

/** Every field of the schema that takes a cursor as `after`. */
function listsOfSchema(): List[] {
  const lists: List[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values((type as GraphQLObjectType).getFields())) {
      const after = field.args.find((a) => a.name === 'after');
      if (after === undefined || getNamedType(after.type).name !== 'String') continue;
      lists.push({
        name: `${type.name}.${field.name}`,
        on: type.name,
        kind: getNamedType(field.type).name,
        field,
        backward: field.args.some((a) => a.name === 'before'),
      });
    }
  }
  return lists;
}

/** Literal values for a list's required arguments other than cursors. */
function requiredArgs(field: GraphQLField<unknown, unknown>): string {
  return field.args
    .filter((a) => isNonNullType(a.type))
    .map((a) => {
      if (getNamedType(a.type).name !== 'String') {
        throw new Error(`${field.name}: give a value for the required argument ${a.name}`);
      }
      return `${a.name}: "hello"`;
    })
    .join(' ');
}

/** A document reading one item of `list`, with `$c` as `arg` (none: from the start, or live). */
function documentOf(list: List, arg?: 'after' | 'before'): string {
  const page = arg === 'before' ? 'last: 1' : 'first: 1';
  const cursor = arg === undefined ? '' : `${arg}: $c`;
  const args = [requiredArgs(list.field), cursor, list.on === 'Subscription' ? '' : page]
    .filter((a) => a !== '')
    .join(' ');
  const selection = list.on === 'Subscription' ? 'cursor' : 'edges { cursor }';
  const call = `${list.field.name}(${args}) { ${selection} }`;
  const variable = arg === undefined ? '' : '($c: String)';
  switch (list.on) {
    case 'Query':
      return `query${variable} { ${call.replace('()', '')} }`;
    case 'Thread':
      return `query${variable} { thread(id: "t1") { ${call} } }`;
    case 'CausalNode':
      // t1's first node (its root), which the goal appended after it is a child of.
      return `query${variable} { thread(id: "t1") { nodes(first: 1) { edges { node { ${call} } } } } }`;
    case 'Subscription':
      return `subscription${variable} { ${call.replace('()', '')} }`;
    default:
      throw new Error(`${list.name}: add a way to reach ${list.on} to this test`);
  }
}

/** A commit to t1, which the activity feed delivers. */
const APPEND =
  'mutation { appendNodes(input: { threadId: "t1", nodes: [{ kind: GOAL, payload: { text: "hello again" } }] }) { __typename } }';

/** Integers no row's position has: past a 32-bit column, and negative. */
const FORGED_INTEGERS = [2 ** 31, 1_099_511_627_776, 2 ** 53 - 1, -1, -(2 ** 31) - 1];

/** `cursor` with each integer it carries (itself, or a member) replaced by `value`; none: null. */
function forged(cursor: string, value: number): string | null {
  const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  const key = decoded.v;
  let replaced: unknown;
  if (Number.isInteger(key)) replaced = value;
  else if (typeof key === 'object' && key !== null) {
    const members = Object.entries(key).filter(([, v]) => Number.isInteger(v));
    if (members.length === 0) return null;
    replaced = { ...key, ...Object.fromEntries(members.map(([m]) => [m, value])) };
  } else return null;
  return Buffer.from(JSON.stringify({ k: decoded.k, v: replaced }), 'utf8').toString('base64url');
}

for (const backend of ['sqlite', 'postgres'] as const)
  describe.skipIf(backend === 'postgres' && !pg.available)(
    `cursors are typed per list on ${backend}`,
    () => {
      let s: AuthApp;
      let key: string;
      const lists = listsOfSchema();
      /** A cursor each list gave, by list name. */
      const cursors = new Map<string, string>();

      const ok = async (query: string) => {
        const answer = await s.gql(key, query);
        expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
        return answer.data as Json;
      };

      /** `list` answered with cursor `c` as `arg`: its data or errors. */
      async function read(list: List, arg: 'after' | 'before', c: string): Promise<Json> {
        const query = documentOf(list, arg);
        if (list.on !== 'Subscription') return s.gql(key, query, { c });
        const stream = await s.sse(key, query, { c });
        try {
          return await first(stream);
        } finally {
          await stream.return?.();
        }
      }

      /** One cursor of `list`, from the list itself (a subscription: from an event it delivers). */
      async function cursorOf(list: List): Promise<string> {
        const query = documentOf(list);
        if (list.on === 'Subscription') {
          // A live feed answers from the first event on: commit until one arrives.
          let settled = false;
          const stream = s.sse(key, query, {});
          const event = stream.then(first).finally(() => {
            settled = true;
          });
          for (let commits = 0; !settled; commits++) {
            expect(commits).toBeLessThan(1000);
            await ok(APPEND);
          }
          await (await stream).return?.();
          return (await event).data[list.field.name].cursor;
        }
        const answer = await s.gql(key, query);
        expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
        const holder =
          list.on === 'Thread'
            ? answer.data.thread
            : list.on === 'CausalNode'
              ? answer.data.thread.nodes.edges[0].node
              : answer.data;
        return holder[list.field.name].edges[0].cursor;
      }

      beforeAll(async () => {
        s = await createAuthApp({ backend });
        key = (await s.key('default', ['admin'])).key;
        // A thread with nodes that match "hello", a run waiting for approval, a deleted thread.
        await ok('mutation { createThread(input: { threadId: "t1" }) { __typename } }');
        await ok(
          'mutation { appendNodes(input: { threadId: "t1", nodes: [{ kind: GOAL, payload: { text: "hello world" } }] }) { __typename } }',
        );
        const run = await ok(
          'mutation { startRun(input: { threadId: "t1", goal: "g" }) { ... on StartRunSuccess { run { id } } } }',
        );
        await ok(`mutation { dispatch(input: { runId: "${run.startRun.run.id}", action: { type: REQUEST_HUMAN_INPUT,
      payload: { pending_approval: { question: "ok?" } } } }) { __typename } }`);
        await ok('mutation { createThread(input: { threadId: "gone" }) { __typename } }');
        await ok('mutation { deleteThread(input: { threadId: "gone" }) { __typename } }');
        for (const list of lists) cursors.set(list.name, await cursorOf(list));
      });
      afterAll(async () => {
        await s.close();
      });

      it('finds the lists in the schema', () => {
        expect(lists.map((l) => l.name)).toEqual(
          expect.arrayContaining(['Query.threads', 'Query.runs', 'Thread.nodes', 'Thread.events']),
        );
        expect(new Set(lists.map((l) => l.kind)).size).toBeGreaterThanOrEqual(7);
      });

      it('pages each list with its own cursor', async () => {
        for (const list of lists) {
          const answer = await read(list, 'after', cursors.get(list.name)!);
          expect(answer.errors, `${list.name}: ${JSON.stringify(answer.errors)}`).toBeUndefined();
        }
      });

      it.skipIf(backend !== 'sqlite')(
        'refuses every other list’s cursor with BAD_USER_INPUT naming the argument',
        async () => {
          let refused = 0;
          for (const list of lists) {
            for (const other of lists) {
              if (other.kind === list.kind) continue;
              for (const arg of list.backward
                ? (['after', 'before'] as const)
                : (['after'] as const)) {
                const answer = await read(list, arg, cursors.get(other.name)!);
                const error = answer.errors?.[0];
                const what = `${other.name}'s cursor as ${list.name}(${arg})`;
                expect(error?.extensions?.code, `${what}: ${JSON.stringify(answer)}`).toBe(
                  'BAD_USER_INPUT',
                );
                expect(error?.message, what).toMatch(new RegExp(`\\$?\\.?${arg}\\b`));
                expect(error?.message, what).toMatch(/is a cursor of \w+, not of \w+/);
                refused++;
              }
            }
          }
          expect(refused).toBeGreaterThan(50);
        },
      );

      it('refuses a cursor whose integer no row has (past 32 bits, or negative) with BAD_USER_INPUT', async () => {
        const withIntegers: string[] = [];
        for (const list of lists) {
          const own = cursors.get(list.name)!;
          if (forged(own, 0) === null) continue;
          withIntegers.push(list.name);
          for (const value of FORGED_INTEGERS) {
            for (const arg of list.backward
              ? (['after', 'before'] as const)
              : (['after'] as const)) {
              const answer = await read(list, arg, forged(own, value)!);
              const error = answer.errors?.[0];
              const what = `${list.name}(${arg}) with ${value}`;
              expect(error?.extensions?.code, `${what}: ${JSON.stringify(answer)}`).toBe(
                'BAD_USER_INPUT',
              );
              expect(error?.message, what).toMatch(/is not a cursor of this list/);
            }
          }
        }
        expect(withIntegers).toEqual(
          expect.arrayContaining([
            'Thread.nodes',
            'Thread.events',
            'Thread.frontierNodes',
            'CausalNode.childNodes',
            'Query.searchNodes',
            'Subscription.threadActivity',
          ]),
        );
      });
    },
  );
