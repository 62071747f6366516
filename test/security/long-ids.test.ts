/**
 * Ids a request names may be any length, and messages name them ("CausalNode <id> does not
 * exist"). A 100,000-character id is shown in a message as its first SHOWN_WORD_PREFIX
 * characters and "…" (a word of up to MAX_SHOWN_WORD, such as a state hash, is shown whole), in
 * errors[] and in typed errors alike, issues included; the structured fields (`id`) still carry
 * it whole. Built in one place (ApiError), so no message echoes one back in full.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SHOWN_WORD, SHOWN_WORD_PREFIX } from '../../src/graphql/error-classes.js';
import { createTestApp, type TestApp } from '../api/support.js';

const LONG = `x${'y'.repeat(99_999)}`;
const SHOWN = `${LONG.slice(0, SHOWN_WORD_PREFIX)}…`;

/** Every message in `answer` (errors[], typed errors, issues), however deep. */
function messages(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const own = (value as { message?: unknown }).message;
  return [
    ...(typeof own === 'string' ? [own] : []),
    ...Object.values(value).flatMap((inner) => messages(inner)),
  ];
}

describe('a long id in messages', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    const made = await t.gql('mutation { createThread(input: { threadId: "t" }) { __typename } }');
    expect(made.data.createThread.__typename).toBe('CreateThreadSuccess');
  });
  afterAll(() => t?.close());

  /** The answer's messages: at least one, each naming the id cut, none much longer than that. */
  function expectShownCut(answer: unknown, shown = SHOWN): void {
    const all = messages(answer);
    expect(all.length, JSON.stringify(answer).slice(0, 500)).toBeGreaterThan(0);
    expect(all.some((m) => m.includes(shown))).toBe(true);
    for (const message of all) expect(message.length).toBeLessThan(500);
  }

  it('NOT_FOUND in errors[] names the node by its first characters', async () => {
    const answer = await t.gql('query($id: ID!) { causalNode(threadId: "t", id: $id) { id } }', {
      id: LONG,
    });
    expect(answer.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expectShownCut(answer.errors);
  });

  it('a typed NotFoundError cuts its message and keeps the id whole', async () => {
    // Run ids are bounded (a longer one is refused as invalid), but well past what is shown.
    const id = `r${'s'.repeat(199)}`;
    const answer = await t.gql(
      `mutation($r: ID!) { cancelRun(input: { runId: $r }) {
        __typename ... on NotFoundError { message id } } }`,
      { r: id },
    );
    expect(answer.data.cancelRun.__typename).toBe('NotFoundError');
    expect(answer.data.cancelRun.id).toBe(id);
    expectShownCut(answer.data, `${id.slice(0, SHOWN_WORD_PREFIX)}…`);
  });

  it('a typed ValidationError cuts its message and its issues', async () => {
    const answer = await t.gql(
      `mutation($p: ID!) { appendNodes(input: { threadId: "t",
        nodes: [{ kind: GOAL, payload: 1, parents: [$p] }] }) {
        __typename ... on Error { message } ... on ValidationError { issues { path message } } } }`,
      { p: LONG },
    );
    expect(answer.errors).toBeUndefined();
    expectShownCut(answer.data);
  });

  it('leaves words up to the limit whole', async () => {
    const id = 'z'.repeat(MAX_SHOWN_WORD);
    const answer = await t.gql('query($id: ID!) { causalNode(threadId: "t", id: $id) { id } }', {
      id,
    });
    expect(answer.errors?.[0]?.message).toContain(` ${id} `);
  });
});
