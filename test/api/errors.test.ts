/**
 * Every typed error of the API is reachable through HTTP: one document per error class of
 * src/graphql/error-classes.ts (BudgetExceededError with both of its codes), each refusal
 * writing nothing. The last test fails when a new error class appears that no test here reaches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as classes from '../../src/graphql/error-classes.js';
import { createTestApp, type TestApp } from './support.js';

// biome-ignore lint/suspicious/noExplicitAny: response data, read loosely; assertions check it
type Loose = any;

let t: TestApp;
const reached = new Map<string, Set<string>>();

/** The errors of thread mutations… */
const ERR_T = `__typename ... on Error { code message }
  ... on ConflictError { expectedIndex actualIndex }
  ... on ValidationError { issues { path message } }
  ... on InvalidStateError { runId }
  ... on NotFoundError { entity id }
  ... on IdempotencyKeyReusedError { key }`;
/** …and of run mutations (appendNodes included: it charges runs). */
const ERR = `${ERR_T} ... on InvalidTransitionError { from to } ... on BudgetExceededError { runId }`;

async function ok(query: string, variables?: Record<string, unknown>): Promise<Loose> {
  const r = await t.gql(query, variables);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data;
}

/** The single mutation/field result of `query`, which must be the typed error `typename`. */
async function typed(query: string, typename: string, variables?: Record<string, unknown>) {
  const data = await ok(query, variables);
  const [result] = Object.values(data as Record<string, Loose>);
  expect(result.__typename, JSON.stringify(result)).toBe(typename);
  const codes = reached.get(typename) ?? new Set<string>();
  codes.add(result.code);
  reached.set(typename, codes);
  return result;
}

const logLength = async (threadId: string): Promise<number> =>
  (await ok('query($id: ID!) { thread(id: $id) { logLength } }', { id: threadId })).thread
    .logLength;

async function startRun(threadId: string, limits: string): Promise<string> {
  const data = await ok(
    `mutation($t: ID!) { startRun(input: { threadId: $t, goal: "g", ${limits} }) {
      ${ERR} ... on StartRunSuccess { run { id } } } }`,
    { t: threadId },
  );
  return data.startRun.run.id;
}

const DISPATCH = `mutation($r: ID!, $a: ActionInput!) { dispatch(input: { runId: $r, action: $a }) {
  ${ERR} ... on DispatchSuccess { logIndex run { status lastError iterationCount } } } }`;
const goto = (node: string) => ({ type: 'GOTO_NODE', payload: { node_id: node } });

beforeAll(async () => {
  t = await createTestApp();
  await ok(`mutation { createThread(input: { threadId: "e1", idempotencyKey: "k1" }) {
    ${ERR_T} ... on CreateThreadSuccess { thread { id } } } }`);
  await ok(`mutation { appendNodes(input: { threadId: "e1", nodes: [{ kind: SYSTEM, payload: "s" },
    { kind: ANSWER, payload: "a" }] }) { ${ERR} } }`);
});
afterAll(async () => {
  await t.close();
});

describe('typed errors through HTTP', () => {
  it('ValidationError, NotFoundError, ConflictError, IdempotencyKeyReusedError', async () => {
    const before = await logLength('e1');
    const invalid = await typed(
      `mutation { appendNodes(input: { threadId: "e1", expectedIndex: -1, nodes: [{ kind: SYSTEM, payload: 1 }] }) { ${ERR} } }`,
      'ValidationError',
    );
    expect(invalid.issues[0].path).toBe('$.input.expectedIndex');
    const missing = await typed(
      `mutation { recordUsage(input: { runId: "nope", model: "m", inputTokens: 1, outputTokens: 1 }) { ${ERR} } }`,
      'NotFoundError',
    );
    expect(missing).toMatchObject({ entity: 'Run', id: 'nope' });
    const stale = await typed(
      `mutation { appendNodes(input: { threadId: "e1", expectedIndex: 1, nodes: [{ kind: SYSTEM, payload: 1 }] }) { ${ERR} } }`,
      'ConflictError',
    );
    expect(stale).toMatchObject({ expectedIndex: 1, actualIndex: before });
    const reused = await typed(
      `mutation { createThread(input: { threadId: "e2", idempotencyKey: "k1" }) { ${ERR_T} } }`,
      'IdempotencyKeyReusedError',
    );
    expect(reused.key).toBe('k1');
    expect(await logLength('e1')).toBe(before);
    const e2 = await t.gql('{ thread(id: "e2") { id } }');
    expect(e2.data).toEqual({ thread: null });
  });

  it('InvalidTransitionError and InvalidStateError on runs', async () => {
    const runId = await startRun('e1', 'maxIterations: 10');
    await ok(DISPATCH, { r: runId, a: goto('plan') });
    const notWaiting = await typed(
      `mutation($r: ID!) { resolveApproval(input: { runId: $r, decision: "approved" }) { ${ERR} } }`,
      'InvalidTransitionError',
      { r: runId },
    );
    expect(notWaiting).toMatchObject({ code: 'INVALID_TRANSITION', to: 'RUNNING' });
    await ok(`mutation($r: ID!) { cancelRun(input: { runId: $r }) { ${ERR} } }`, { r: runId });
    const terminal = await typed(DISPATCH, 'InvalidStateError', { r: runId, a: goto('x') });
    expect(terminal).toMatchObject({ code: 'INVALID_ACTION', runId });
  });

  it('ProjectionOverflowError under an impossible ceiling', async () => {
    const data = await ok(`{ thread(id: "e1") { projection(input: { maxPromptTokens: 1 }) {
      __typename ... on ProjectionOverflowError { code requiredTokens maxPromptTokens } } } }`);
    const projection = data.thread.projection;
    expect(projection).toMatchObject({
      __typename: 'ProjectionOverflowError',
      code: 'PROJECTION_OVERFLOW',
      maxPromptTokens: 1,
    });
    reached.set('ProjectionOverflowError', new Set([projection.code]));
  });
});

describe('BudgetExceededError: a run whose limits are spent accepts no more work', () => {
  it('USD budget: usage is charged and fails the run; dispatch and approval are refused, writing nothing', async () => {
    const runId = await startRun('e1', 'budgetUsd: 1');
    await ok(DISPATCH, { r: runId, a: goto('plan') });
    const usage = await ok(
      `mutation($r: ID!) { recordUsage(input: { runId: $r, model: "m", inputTokens: 10, outputTokens: 5, costUsd: 1 }) {
        ${ERR} ... on RecordUsageSuccess { run { status lastError spend { costUsd } budget { thresholdsFired } } } } }`,
      { r: runId },
    );
    // Usage is a fact: it is recorded, and reaching the budget fails the run.
    expect(usage.recordUsage.run).toMatchObject({
      status: 'FAILED',
      spend: { costUsd: 1 },
      budget: { thresholdsFired: [50, 75, 90, 100] },
    });
    const before = await logLength('e1');
    const refused = await typed(DISPATCH, 'BudgetExceededError', {
      r: runId,
      a: { type: 'UPDATE_MEMORY', payload: { updates: { more: 1 } } },
    });
    expect(refused).toMatchObject({ code: 'BUDGET_EXCEEDED', runId });
    expect(refused.message).toContain('$1 spent of $1');
    const approval = await typed(
      `mutation($r: ID!) { resolveApproval(input: { runId: $r, decision: "approved" }) { ${ERR} } }`,
      'BudgetExceededError',
      { r: runId },
    );
    expect(approval.code).toBe('BUDGET_EXCEEDED');
    expect(await logLength('e1')).toBe(before);
    // A malformed action still says what is wrong with it.
    await typed(DISPATCH, 'ValidationError', {
      r: runId,
      a: { type: 'GOTO_NODE', payload: { nope: 1 } },
    });
    // Late usage is still charged, and the saga can still unwind.
    const late = await ok(
      `mutation($r: ID!) { recordUsage(input: { runId: $r, model: "m", inputTokens: 1, outputTokens: 1, costUsd: 0.5 }) {
        ${ERR} ... on RecordUsageSuccess { run { status spend { costUsd } } } } }`,
      { r: runId },
    );
    expect(late.recordUsage.run).toEqual({ status: 'FAILED', spend: { costUsd: 1.5 } });
    const rollback = await ok(DISPATCH, {
      r: runId,
      a: { type: 'SET_STATUS', payload: { status: 'cancelled' } },
    });
    expect(rollback.dispatch.run.status).toBe('CANCELLED');
  });

  it('token budget: the same refusal once total tokens go above maxTokenBudget', async () => {
    const runId = await startRun('e1', 'maxTokenBudget: 100');
    await ok(DISPATCH, { r: runId, a: goto('plan') });
    const at = await ok(
      `mutation($r: ID!) { recordUsage(input: { runId: $r, model: "m", inputTokens: 60, outputTokens: 40 }) {
        ${ERR} ... on RecordUsageSuccess { run { status } } } }`,
      { r: runId },
    );
    expect(at.recordUsage.run.status).toBe('RUNNING'); // 100 of 100 is not above the budget
    await ok(DISPATCH, { r: runId, a: goto('act') });
    await ok(
      `mutation($r: ID!) { recordUsage(input: { runId: $r, model: "m", inputTokens: 1, outputTokens: 0 }) { ${ERR} } }`,
      { r: runId },
    );
    const before = await logLength('e1');
    const refused = await typed(DISPATCH, 'BudgetExceededError', { r: runId, a: goto('next') });
    expect(refused).toMatchObject({ code: 'BUDGET_EXCEEDED', runId });
    expect(refused.message).toContain('101 tokens used of 100');
    expect(await logLength('e1')).toBe(before);
  });

  it('iteration limit: the dispatch past maxIterations fails the run, the next is refused', async () => {
    const runId = await startRun('e1', 'maxIterations: 2');
    await ok(DISPATCH, { r: runId, a: goto('a') });
    await ok(DISPATCH, { r: runId, a: goto('b') });
    const over = await ok(DISPATCH, { r: runId, a: goto('c') });
    expect(over.dispatch.run).toMatchObject({ status: 'FAILED', iterationCount: 3 });
    const before = await logLength('e1');
    const refused = await typed(DISPATCH, 'BudgetExceededError', { r: runId, a: goto('d') });
    expect(refused).toMatchObject({ code: 'ITERATION_LIMIT_EXCEEDED', runId });
    expect(await logLength('e1')).toBe(before);
  });
});

describe('answers bounded by size', () => {
  it('AnswerTooLargeError: a state over 4 MiB of JSON is refused, naming the paged fields', async () => {
    await ok('mutation { createThread(input: { threadId: "big" }) { __typename } }');
    // Five payloads of 0.9 MB each (each under the 1 MiB payload limit): 4.5 MB of state.
    for (let i = 0; i < 5; i++) {
      await ok(
        'mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "big", nodes: $n }) { __typename } }',
        { n: [{ kind: 'ANSWER', payload: `${i}`.repeat(900_000) }] },
      );
    }
    const r = await t.gql('{ thread(id: "big") { state } }');
    expect(r.data).toEqual({ thread: null });
    const [error] = r.errors as Loose[];
    expect(error.extensions).toMatchObject({
      code: 'ANSWER_TOO_LARGE',
      weftCode: 'ANSWER_TOO_LARGE',
      maxBytes: 4 * 1024 * 1024,
    });
    expect(error.message).toContain('nodes(first: 1000, after: endCursor)');
    expect(error.extensions.paged).toContain('frontierNodes');
    reached.set('AnswerTooLargeError', new Set([error.extensions.code]));
    // The state of a shorter prefix fits; the paged alternative answers in pages.
    const before = await ok('{ thread(id: "big") { state(atIndex: 2) } }');
    expect(before.thread.state.nodes).toHaveLength(1);
    const paged = await ok(
      '{ thread(id: "big") { nodes(first: 2) { edges { node { sequence } } pageInfo { hasNextPage } } } }',
    );
    expect(paged.thread.nodes.pageInfo.hasNextPage).toBe(true);
    // The state past the bound at an index says where its nodes are.
    const at = await t.gql('{ thread(id: "big") { state(atIndex: 6) } }');
    expect((at.errors as Loose[])[0].message).toContain('logIndex below 6');
  });
});

describe('audit', () => {
  it('every error class of error-classes.ts was reached through the API', () => {
    const names = Object.entries(classes)
      .filter(
        ([, value]) => typeof value === 'function' && value.prototype instanceof classes.ApiError,
      )
      .map(([name]) => name)
      .sort();
    expect(names.length).toBeGreaterThanOrEqual(8);
    // A read cancelled by the database's statement timeout is reached through the API on
    // Postgres, in test/security/search-cost.test.ts: this file runs on SQLite only.
    const elsewhere = new Set(['QueryTimeoutError']);
    expect([...reached.keys()].sort()).toEqual(names.filter((n) => !elsewhere.has(n)));
    expect([...(reached.get('BudgetExceededError') ?? [])].sort()).toEqual([
      'BUDGET_EXCEEDED',
      'ITERATION_LIMIT_EXCEEDED',
    ]);
  });
});
