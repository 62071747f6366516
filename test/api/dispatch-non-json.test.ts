/**
 * The dispatch mutation with memory values a GraphQL client can send but the run must refuse:
 * JSON nested far deeper than the bound (yet within what the HTTP layer lets through), in
 * variables, and so reaching the engine as is. The answer is a typed ValidationError naming the path, not an
 * internal error from a stack overflow, and the log does not grow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/core/run/index.js';
import { createTestApp, type TestApp } from './support.js';

// biome-ignore lint/suspicious/noExplicitAny: response data, read loosely; assertions check it
type Loose = any;

let t: TestApp;
let runId: string;

const DISPATCH = `mutation($r: ID!, $a: ActionInput!, $k: String) {
  dispatch(input: { runId: $r, action: $a, idempotencyKey: $k }) {
    __typename
    ... on Error { code message }
    ... on ValidationError { issues { path message } }
    ... on DispatchSuccess { logIndex run { memory } }
  }
}`;

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

const logLength = async (): Promise<number> =>
  (await t.gql('query { thread(id: "t1") { logLength } }')).data.thread.logLength;

beforeAll(async () => {
  t = await createTestApp();
  await t.gql('mutation { createThread(input: { threadId: "t1" }) { __typename } }');
  const started = await t.gql(
    'mutation { startRun(input: { threadId: "t1", goal: "g" }) { ... on StartRunSuccess { run { id } } } }',
  );
  runId = started.data.startRun.run.id;
});
afterAll(async () => {
  await t.close();
});

describe('dispatch over GraphQL with a too deep memory value', () => {
  for (const key of [null, 'deep-1']) {
    it(`is a ValidationError naming the path (${key === null ? 'no key' : 'with a key'})`, async () => {
      const before = await logLength();
      // Written out by hand: JSON.stringify itself would overflow on a value this deep.
      // Under the request body's own bound (1,100 levels, refused before parsing; see
      // test/security/typed-errors.test.ts), far over the run's.
      const levels = 1_000;
      const deep = `${'{"d":'.repeat(levels)}1${'}'.repeat(levels)}`;
      const action = `{"type":"UPDATE_MEMORY","payload":{"updates":{"a":{"b":${deep}}}}}`;
      const variables = `{"r":${JSON.stringify(runId)},"a":${action},"k":${JSON.stringify(key)}}`;
      const r = (await t.post(
        `{"query":${JSON.stringify(DISPATCH)},"variables":${variables}}`,
      )) as Loose;
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      const result = r.data.dispatch;
      expect(result).toMatchObject({ __typename: 'ValidationError', code: 'VALIDATION_FAILED' });
      expect(result.issues).toHaveLength(1);
      // The action, payload, updates and a are the first four levels; the value at b the fifth.
      expect(result.issues[0].path).toBe(`$.payload.updates.a.b${'.d'.repeat(MAX_JSON_DEPTH - 4)}`);
      expect(result.issues[0].message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
      expect(await logLength()).toBe(before);
    });
  }

  it('a value at the bound is still written', async () => {
    const before = await logLength();
    const value = nested(MAX_JSON_DEPTH - 4);
    const action = { type: 'UPDATE_MEMORY', payload: { updates: { a: { b: value } } } };
    const r = await t.gql(DISPATCH, { r: runId, a: action });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(r.data.dispatch.__typename).toBe('DispatchSuccess');
    expect(r.data.dispatch.run.memory.a).toEqual({ b: value });
    expect(await logLength()).toBe(before + 1);
  });
});
