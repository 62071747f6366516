/**
 * Hostile input that used to end in a masked INTERNAL_SERVER_ERROR (or be stored silently
 * changed) gets a typed client error instead — cursors with an invalid date, values nested
 * thousands of levels deep, a list literal nested 2,400 deep, an integer past 2^53 that JSON has
 * already rounded — and an error that is still unexpected is logged once, with its cause and the
 * request id, while the client sees only INTERNAL_SERVER_ERROR. Through the server, on SQLite and
 * Postgres where the value reaches storage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ErrorLogLine, useErrorLog } from '../../src/server/logging.js';
import {
  documentNesting,
  jsonNesting,
  MAX_BODY_NESTING,
  MAX_DOCUMENT_NESTING,
  useDocumentNestingLimit,
} from '../../src/server/value-depth.js';
import { createTestApp, type TestApp } from '../api/support.js';
import { postgresAvailable } from '../support/services.js';

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`typed-errors: Postgres cases skipped (${pg.reason})`);
}

/** JSON text of `{"a":{"a":…1}}`, `depth` objects deep (JSON.stringify itself would overflow). */
const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** A request body whose `$m` variable is the JSON text `m`. */
const withM = (query: string, m: string) =>
  `{"query":${JSON.stringify(query)},"variables":{"m":${m}}}`;
/** A cursor of list `k` holding `key`, as the server makes them. */
const cursor = (k: string, key: unknown) =>
  Buffer.from(JSON.stringify({ k, v: key }), 'utf8').toString('base64url');
const listLiteral = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

const REFUSAL = '__typename ... on ValidationError { code issues { path message } }';
const CREATE = `mutation($m: JSON, $key: String) { createThread(input: {
  metadata: $m, idempotencyKey: $key }) { ${REFUSAL} } }`;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pg.available)(`typed errors on ${backend}`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ backend });
      const made = await t.gql(
        'mutation { createThread(input: { threadId: "ok" }) { __typename } }',
      );
      expect(made.data.createThread.__typename).toBe('CreateThreadSuccess');
      const run = await t.gql(
        'mutation { startRun(input: { threadId: "ok", goal: "g", runId: "r" }) { __typename } }',
      );
      expect(run.data.startRun.__typename).toBe('StartRunSuccess');
    });
    afterAll(() => t?.close());

    it('a threads or runs cursor holding an invalid date is BAD_USER_INPUT naming $.after', async () => {
      for (const c of ['not a date', '2026-02-31T99:00:00Z']) {
        const threads = await t.gql(
          'query($a: String) { threads(after: $a) { edges { cursor } } }',
          {
            a: cursor('threads', { c, id: 'ok' }),
          },
        );
        expect(threads.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(threads.errors?.[0]?.message).toContain('$.after');
        const runs = await t.gql('query($a: String) { runs(after: $a) { edges { cursor } } }', {
          a: cursor('runs', { c, t: 'ok', id: 'r' }),
        });
        expect(runs.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(runs.errors?.[0]?.message).toContain('$.after');
      }
      // A cursor the server gave still pages.
      const page = await t.gql('{ threads(first: 1) { edges { cursor } } }');
      const next = await t.gql('query($a: String) { threads(after: $a) { edges { cursor } } }', {
        a: page.data.threads.edges[0].cursor,
      });
      expect(next.errors).toBeUndefined();
    });

    it('thread metadata, run memory and node payloads nested over a thousand deep are VALIDATION_FAILED naming the field, with or without an idempotency key', async () => {
      for (const key of [null, 'deep-key']) {
        const body = `{"query":${JSON.stringify(CREATE)},"variables":{"key":${JSON.stringify(key)},"m":${nested(1_050)}}}`;
        const created = await t.post(body);
        expect(created.status).toBe(200);
        const result = (
          created.data as {
            createThread: { __typename: string; code: string; issues: Array<{ path: string }> };
          }
        ).createThread;
        expect(result.__typename).toBe('ValidationError');
        expect(result.code).toBe('VALIDATION_FAILED');
        expect(result.issues[0]!.path.startsWith('$.metadata.a.a')).toBe(true);

        const memory = await t.post(
          `{"query":${JSON.stringify(`mutation($m: JSON, $key: String) { startRun(input: { threadId: "ok", goal: "g", memory: $m, idempotencyKey: $key }) { ${REFUSAL} } }`)},"variables":{"key":${JSON.stringify(key)},"m":${nested(1_050)}}}`,
        );
        const started = (
          memory.data as { startRun: { __typename: string; issues: Array<{ path: string }> } }
        ).startRun;
        expect(started.__typename).toBe('ValidationError');
        expect(started.issues[0]!.path.startsWith('$.memory.a.a')).toBe(true);

        const payload = await t.post(
          `{"query":${JSON.stringify(`mutation($m: JSON!, $key: String) { appendNodes(input: { threadId: "ok", idempotencyKey: $key, nodes: [{ kind: GOAL, payload: $m }] }) { ${REFUSAL} } }`)},"variables":{"key":${JSON.stringify(key)},"m":${nested(1_050)}}}`,
        );
        const appended = (
          payload.data as { appendNodes: { __typename: string; issues: Array<{ path: string }> } }
        ).appendNodes;
        expect(appended.__typename).toBe('ValidationError');
        expect(appended.issues[0]!.path).toMatch(/payload\.a\.a/);
      }
      // Metadata as deep as the bound still works.
      const fine = await t.post(withM(CREATE, nested(256)));
      expect((fine.data as { createThread: { __typename: string } }).createThread.__typename).toBe(
        'CreateThreadSuccess',
      );
      const over = await t.post(withM(CREATE, nested(257)));
      expect((over.data as { createThread: { __typename: string } }).createThread.__typename).toBe(
        'ValidationError',
      );
    });

    it('a request body nesting objects and arrays thousands deep is refused before it is parsed: 400 BAD_USER_INPUT, nothing written', async () => {
      const before = await t.gql('{ threads(first: 100) { edges { cursor } } }');
      for (const [query, depth] of [
        [CREATE, 10_000],
        [
          `mutation($m: JSON) { startRun(input: { threadId: "ok", goal: "g", memory: $m }) { ${REFUSAL} } }`,
          2_000,
        ],
        [
          `mutation($m: JSON!) { appendNodes(input: { threadId: "ok", nodes: [{ kind: GOAL, payload: $m }] }) { ${REFUSAL} } }`,
          MAX_BODY_NESTING + 1,
        ],
      ] as const) {
        const refused = await t.post(withM(query, nested(depth)));
        expect(refused.status).toBe(400);
        expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(refused.errors?.[0]?.message).toContain(`more than ${MAX_BODY_NESTING} levels`);
      }
      // Brackets inside strings do not count; a body just inside the bound reaches the engine.
      const quoted = await t.post(withM(CREATE, JSON.stringify({ s: '['.repeat(5_000) })));
      expect(
        (quoted.data as { createThread: { __typename: string } }).createThread.__typename,
      ).toBe('CreateThreadSuccess');
      const after = await t.gql('{ threads(first: 100) { edges { cursor } } }');
      expect(after.data.threads.edges).toHaveLength(before.data.threads.edges.length + 1);
      expect(jsonNesting(nested(MAX_BODY_NESTING + 50), MAX_BODY_NESTING)).toBe(
        MAX_BODY_NESTING + 1,
      );
      expect(jsonNesting('{"a":"}}}{{{[[[\\"]]]","b":[[1]]}')).toBe(3);
    });

    it('integers beyond 2^53 − 1 in a payload, metadata or literal are VALIDATION_FAILED naming the path; 2^53 − 1 reads back exactly', async () => {
      const APPEND = `mutation($m: JSON!) { appendNodes(input: { threadId: "ok", nodes: [{ kind: GOAL, payload: $m }] }) {
        ${REFUSAL} ... on AppendNodesSuccess { nodes { payload } } } }`;
      // Raw JSON text: the server's parser is what rounds 2^53 + 1 to 2^53.
      for (const big of ['9007199254740993', '-9007199254740993', '1e20']) {
        const appended = await t.post(withM(APPEND, `{"list":[1,${big}]}`));
        const result = (
          appended.data as {
            appendNodes: {
              __typename: string;
              code: string;
              issues: Array<{ path: string; message: string }>;
            };
          }
        ).appendNodes;
        expect(result.__typename).toBe('ValidationError');
        expect(result.code).toBe('VALIDATION_FAILED');
        expect(result.issues[0]!.path).toBe('$.nodes[0].payload.list[1]');
        expect(result.issues[0]!.message).toContain('send it as a string');

        const created = await t.post(withM(CREATE, `{"n":${big}}`));
        const refused = (
          created.data as { createThread: { __typename: string; issues: Array<{ path: string }> } }
        ).createThread;
        expect(refused.__typename).toBe('ValidationError');
        expect(refused.issues[0]!.path).toBe('$.metadata.n');
      }
      const literal = await t.gql(
        'mutation { appendNodes(input: { threadId: "ok", nodes: [{ kind: GOAL, payload: { n: 9007199254740993 } }] }) { __typename } }',
      );
      expect(literal.data.appendNodes.__typename).toBe('ValidationError');

      const exact = await t.post(withM(APPEND, '{"n":9007199254740991,"m":-9007199254740991}'));
      expect(exact.text).toContain('"payload":{"m":-9007199254740991,"n":9007199254740991}');
    });
  });
}

describe('a list literal nested 2,400 deep', () => {
  let t: TestApp;
  const lines: ErrorLogLine[] = [];
  beforeAll(async () => {
    t = await createTestApp({
      plugins: [useDocumentNestingLimit(), useErrorLog((l) => lines.push(l))],
    });
  });
  afterAll(() => t?.close());

  it('is refused before parsing with a 400 BAD_USER_INPUT, and nothing is logged as unexpected', async () => {
    for (const query of [
      `{ threads(first: ${listLiteral(2_400)}) { edges { cursor } } }`,
      `mutation { createThread(input: { metadata: ${listLiteral(2_400)} }) { __typename } }`,
      `query($v: ${listLiteral(2_400).replace('1', 'Int')}) { __typename }`,
    ]) {
      const response = await t.gql(query);
      expect(response.status).toBe(400);
      expect(response.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(response.errors?.[0]?.message).toContain(`${MAX_DOCUMENT_NESTING} levels`);
    }
    expect(lines).toEqual([]);
    // An ordinary query, and one deep only in selections, still get their usual answers.
    expect((await t.gql('{ threads { edges { cursor } } }')).errors).toBeUndefined();
    const deepSelection = await t.gql(
      `{ thread(id: "h") { ${'forkedFrom { thread { '.repeat(50)}id${' } }'.repeat(50)} } }`,
    );
    // The selection limits answer it (which one first is theirs to decide), not this one.
    expect(['QUERY_TOO_DEEP', 'QUERY_TOO_COMPLEX']).toContain(
      deepSelection.errors?.[0]?.extensions?.code,
    );
  });

  it('documentNesting counts brackets of every kind, but not inside strings, block strings or comments', () => {
    expect(documentNesting('{ a(x: [[1]]) { b } }')).toBe(4);
    expect(documentNesting('{ a(s: "[[[[\\"[[", t: """ {{{{ \\""" [[[ """) # ((((((\n }')).toBe(2);
    expect(documentNesting(listLiteral(10_000), 300)).toBe(301);
  });
});

describe('an unexpected error', () => {
  it('is logged once with its cause and the request id; the client sees only INTERNAL_SERVER_ERROR', async () => {
    const lines: ErrorLogLine[] = [];
    const t = await createTestApp({
      failing: ['listThreads'],
      plugins: [useErrorLog((l) => lines.push(l))],
    });
    try {
      const url = await t.app.start();
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'req-hostile-1' },
        body: JSON.stringify({ query: '{ threads { edges { cursor } } }' }),
      });
      const text = await response.text();
      expect(text).toContain('INTERNAL_SERVER_ERROR');
      expect(text).not.toContain('disk on fire');
      expect(text).not.toContain('/secret/path');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        level: 'error',
        msg: 'unexpected error',
        requestId: 'req-hostile-1',
        phase: 'execute',
        path: 'threads',
        error: { message: 'listThreads: disk on fire at /secret/path' },
      });
      expect(lines[0]!.error.stack).toContain('disk on fire');
    } finally {
      await t.close();
    }
  });

  it('the server as built refuses a 5,000-deep literal before parsing (the limit is wired in)', async () => {
    const t = await createTestApp();
    try {
      const response = await t.gql(
        `{ threads(first: ${listLiteral(5_000)}) { edges { cursor } } }`,
      );
      expect(response.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    } finally {
      await t.close();
    }
  });
});
