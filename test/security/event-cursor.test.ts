/**
 * `Thread.events(afterIndex:)` below -1 names no position in the log: it is refused as
 * BAD_USER_INPUT naming the argument, instead of silently meaning "from the start".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../api/support.js';

describe('Thread.events afterIndex', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    const made = await t.gql('mutation { createThread(input: { threadId: "ev" }) { __typename } }');
    expect(made.data.createThread.__typename).toBe('CreateThreadSuccess');
  });
  afterAll(() => t?.close());

  const events = (afterIndex: number) =>
    t.gql(
      'query($a: Int) { thread(id: "ev") { events(afterIndex: $a) { edges { node { index } } } } }',
      { a: afterIndex },
    );

  it('below -1 is BAD_USER_INPUT naming $.afterIndex', async () => {
    const r = await events(-5);
    expect(r.data?.thread ?? null).toBeNull();
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.message).toMatch(/\$\.afterIndex/);
  });

  it('-1 still reads from the start', async () => {
    const r = await events(-1);
    expect(r.errors).toBeUndefined();
    expect(
      r.data.thread.events.edges.map((e: { node: { index: number } }) => e.node.index),
    ).toEqual([0]);
  });
});
