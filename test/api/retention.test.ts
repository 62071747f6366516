/**
 * Retention through GraphQL on both backends: `expiresAt` set at creation (given, the server's
 * default, or null for none), shown as `Thread.expiresAt`, set and cleared with setThreadExpiry
 * (scope write), with typed errors for what the engine refuses and BAD_USER_INPUT for a
 * malformed date (as every DateTime argument).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

const SET = `mutation Set($input: SetThreadExpiryInput!) { setThreadExpiry(input: $input) {
  __typename ... on SetThreadExpirySuccess { threadId expiresAt thread { id expiresAt logLength } }
  ... on Error { code message } ... on ValidationError { issues { path } } } }`;

function retentionApi(backend: 'sqlite' | 'postgres') {
  let t: TestApp;
  beforeAll(async () => {
    // The test clock starts at 2026-03-01T00:00:00Z; the default is 7 days.
    t = await createTestApp({ backend, engine: { retentionDays: 7 } });
  });
  afterAll(() => t?.close());

  it('expiresAt at creation: given, the default, or none', async () => {
    const created = await t.gql(`mutation {
      a: createThread(input: { threadId: "given", expiresAt: "2026-06-01T12:00:00Z" }) { __typename }
      b: createThread(input: { threadId: "default" }) { __typename }
      c: createThread(input: { threadId: "never", expiresAt: null }) { __typename }
    }`);
    expect(created.errors).toBeUndefined();
    const read = await t.gql(`{
      given: thread(id: "given") { expiresAt }
      default: thread(id: "default") { createdAt expiresAt }
      never: thread(id: "never") { expiresAt }
    }`);
    expect(read.data.given.expiresAt).toBe('2026-06-01T12:00:00.000Z');
    expect(Date.parse(read.data.default.expiresAt) - Date.parse(read.data.default.createdAt)).toBe(
      7 * 86_400_000,
    );
    expect(read.data.never.expiresAt).toBeNull();
  });

  it('setThreadExpiry sets and clears it, answering typed errors', async () => {
    const set = await t.gql(SET, {
      input: { threadId: 'never', expiresAt: '2027-01-01T00:00:00Z', idempotencyKey: 'x1' },
    });
    expect(set.data.setThreadExpiry).toEqual({
      __typename: 'SetThreadExpirySuccess',
      threadId: 'never',
      expiresAt: '2027-01-01T00:00:00.000Z',
      thread: { id: 'never', expiresAt: '2027-01-01T00:00:00.000Z', logLength: 1 },
    });
    const cleared = await t.gql(SET, { input: { threadId: 'given', expiresAt: null } });
    expect(cleared.data.setThreadExpiry).toMatchObject({
      expiresAt: null,
      thread: { expiresAt: null },
    });
    // Omitted is not null: it is refused rather than taken as "clear".
    const missing = await t.gql(SET, { input: { threadId: 'given' } });
    expect(missing.data.setThreadExpiry).toMatchObject({
      __typename: 'ValidationError',
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$.expiresAt' }],
    });
    const unknown = await t.gql(SET, { input: { threadId: 'nope', expiresAt: null } });
    expect(unknown.data.setThreadExpiry).toMatchObject({ __typename: 'NotFoundError' });
    const reused = await t.gql(SET, {
      input: { threadId: 'never', expiresAt: null, idempotencyKey: 'x1' },
    });
    expect(reused.data.setThreadExpiry).toMatchObject({ __typename: 'IdempotencyKeyReusedError' });
    // A malformed date never reaches the resolver: BAD_USER_INPUT, as every DateTime argument.
    const bad = await t.gql(SET, { input: { threadId: 'never', expiresAt: 'next tuesday' } });
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const badLiteral = await t.gql(
      'mutation { createThread(input: { threadId: "z", expiresAt: "2026-02-30" }) { __typename } }',
    );
    expect(badLiteral.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const state = await t.gql('{ thread(id: "never") { logLength expiresAt } }');
    expect(state.data.thread).toEqual({ logLength: 1, expiresAt: '2027-01-01T00:00:00.000Z' });
  });

  it('a date in the past: the next sweep deletes the thread, as deleteThread does', async () => {
    const set = await t.gql(SET, {
      input: { threadId: 'default', expiresAt: '2000-01-01T00:00:00Z' },
    });
    expect(set.data.setThreadExpiry.__typename).toBe('SetThreadExpirySuccess');
    const sweep = await t.engine.deleteExpiredThreads();
    expect(sweep.ok && sweep.value.deleted.map((d) => d.threadId)).toEqual(['default']);
    const gone = await t.gql('{ thread(id: "default") { id } }');
    expect(gone.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const audit = await t.gql(
      '{ auditEntries(first: 5) { edges { node { actor action threadId } } } }',
    );
    expect(audit.data.auditEntries.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { actor: 'retention', action: 'thread_deleted', threadId: 'default' },
    ]);
  });
}

describe('retention API [sqlite]', () => {
  retentionApi('sqlite');
});

describeWithPostgres('retention API', () => {
  retentionApi('postgres');
});
