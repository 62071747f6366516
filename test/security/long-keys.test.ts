/**
 * Keys that are indexed have a length bound, so a long one is a typed VALIDATION_FAILED naming
 * the field instead of an internal error from the database (Postgres refuses index entries over
 * about 2.7 KB, and encryption at rest makes a stored key a third longer). Through the server,
 * on SQLite and Postgres, with and without encryption at rest.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESOURCE_KEY_BYTES } from '../../src/core/graph/append.js';
import { createTestApp, type TestApp } from '../api/support.js';
import { postgresAvailable } from '../support/services.js';

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`long-keys: Postgres cases skipped (${pg.reason})`);
}

const APPEND = `mutation($k: String!) { appendNodes(input: { threadId: "t", nodes: [{ kind: ANSWER, payload: 1, resourceKey: $k }] }) {
  __typename ... on ValidationError { code issues { path message } } } }`;

for (const backend of ['sqlite', 'postgres'] as const) {
  for (const encrypted of [false, true]) {
    describe.skipIf(backend === 'postgres' && !pg.available)(
      `long keys on ${backend}${encrypted ? ', encrypted' : ''}`,
      () => {
        let t: TestApp;
        beforeAll(async () => {
          t = await createTestApp({
            backend,
            ...(encrypted ? { encryptionKey: randomBytes(32) } : {}),
          });
          const made = await t.gql(
            'mutation { createThread(input: { threadId: "t" }) { __typename } }',
          );
          expect(made.data.createThread.__typename).toBe('CreateThreadSuccess');
        });
        afterAll(() => t?.close());

        const logLength = async () =>
          (await t.gql('{ thread(id: "t") { logLength } }')).data.thread.logLength;

        it('a resource key at the bound is stored and read back; one byte more is refused, nothing written', async () => {
          // Three-byte characters: the bound is on UTF-8 bytes, not characters.
          const atBound = 'é'.repeat(MAX_RESOURCE_KEY_BYTES / 2);
          const ok = await t.gql(APPEND, { k: atBound });
          expect(ok.data.appendNodes.__typename).toBe('AppendNodesSuccess');
          const read = await t.gql('{ thread(id: "t") { resources { resourceKey } } }');
          expect(read.errors).toBeUndefined();
          expect(
            read.data.thread.resources.map((r: { resourceKey: string }) => r.resourceKey),
          ).toContain(atBound);
          const before = await logLength();
          for (const k of [`${atBound}x`, '€'.repeat(5_000)]) {
            const refused = await t.gql(APPEND, { k });
            expect(refused.data.appendNodes).toMatchObject({
              __typename: 'ValidationError',
              code: 'VALIDATION_FAILED',
              issues: [{ path: '$[0].resourceKey' }],
            });
            expect(refused.data.appendNodes.issues[0].message).toContain(
              `over the limit of ${MAX_RESOURCE_KEY_BYTES}`,
            );
          }
          expect(await logLength()).toBe(before);
        });

        it('a model name over 512 characters in recordUsage is refused, nothing written', async () => {
          const started = await t.gql(
            'mutation { startRun(input: { threadId: "t", goal: "g", runId: "r" }) { __typename } }',
          );
          expect(started.data.startRun.__typename).toBe('StartRunSuccess');
          const before = await logLength();
          const refused = await t.gql(
            `mutation($m: String!) { recordUsage(input: { runId: "r", threadId: "t", model: $m, inputTokens: 1, outputTokens: 1 }) {
              __typename ... on ValidationError { code issues { path message } } } }`,
            { m: 'm'.repeat(5_000) },
          );
          expect(refused.errors).toBeUndefined();
          expect(refused.data.recordUsage).toMatchObject({
            __typename: 'ValidationError',
            code: 'VALIDATION_FAILED',
          });
          expect(JSON.stringify(refused.data.recordUsage.issues)).toContain('model');
          expect(await logLength()).toBe(before);
        });
      },
    );
  }
}
