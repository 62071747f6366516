/**
 * The HTTP surface: bad requests get clear errors and write nothing, unexpected errors are
 * masked, limits hold, health endpoints and offline GraphiQL answer, and the external
 * graphql-http audit suite passes every MUST and SHOULD.
 */
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { maxBodyBytes: 4 * 1024 * 1024 } });
  const r = await t.gql('mutation { createThread(input: { threadId: "h" }) { __typename } }');
  expect(r.data.createThread.__typename).toBe('CreateThreadSuccess');
});
afterAll(() => t.close());

const logLength = async () =>
  (await t.gql('{ thread(id: "h") { logLength nodeCount } }')).data.thread as {
    logLength: number;
    nodeCount: number;
  };

describe('bad requests: a clear error, nothing written', () => {
  it('malformed JSON body → 400 with a message', async () => {
    const before = await logLength();
    const r = await t.post('{"query": "mutation { appendNodes(input: {threadId: \\"h\\"');
    expect(r.status).toBe(400);
    expect(r.errors?.[0]?.message).toMatch(/JSON/i);
    expect(await logLength()).toEqual(before);
  });

  it('wrong types → a validation error naming the argument', async () => {
    const before = await logLength();
    const literal = await t.gql(
      'mutation { appendNodes(input: { threadId: "h", expectedIndex: "one", nodes: [{ kind: SYSTEM, payload: 1 }] }) { __typename } }',
    );
    expect(literal.errors?.[0]?.message).toMatch(/Int cannot represent/);
    const variables = await t.gql(
      'mutation($i: AppendNodesInput!) { appendNodes(input: $i) { __typename } }',
      { i: { threadId: 'h', nodes: [{ kind: 'NOT_A_KIND', payload: 1 }] } },
    );
    expect(variables.errors?.[0]?.message).toMatch(/NOT_A_KIND.*NodeKind|NodeKind.*NOT_A_KIND/s);
    const negative = await t.gql(
      'mutation { appendNodes(input: { threadId: "h", expectedIndex: -1, nodes: [{ kind: SYSTEM, payload: 1 }] }) { __typename ... on ValidationError { issues { path message } } } }',
    );
    expect(negative.data.appendNodes.__typename).toBe('ValidationError');
    expect(negative.data.appendNodes.issues[0].path).toBe('$.input.expectedIndex');
    expect(await logLength()).toEqual(before);
  });

  it('oversized: a payload over 1 MiB, more than 1,000 nodes, a body over the limit', async () => {
    const before = await logLength();
    const big = await t.gql(
      'mutation($p: JSON!) { appendNodes(input: { threadId: "h", nodes: [{ kind: SYSTEM, payload: $p }] }) { __typename ... on ValidationError { issues { path message } } } }',
      { p: { blob: 'x'.repeat(1024 * 1024 + 10) } },
    );
    expect(big.data.appendNodes.__typename).toBe('ValidationError');
    expect(big.data.appendNodes.issues[0].message).toMatch(/over the limit/);
    const many = await t.gql(
      'mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "h", nodes: $n }) { __typename ... on ValidationError { issues { path } } } }',
      { n: Array.from({ length: 1001 }, (_, i) => ({ kind: 'SYSTEM', payload: i })) },
    );
    expect(many.data.appendNodes).toEqual({
      __typename: 'ValidationError',
      issues: [{ path: '$.input.nodes' }],
    });
    const body = JSON.stringify({
      query: '{ __typename }',
      variables: { pad: 'x'.repeat(5 * 1024 * 1024) },
    });
    const huge = await t.post(body, { 'content-length': String(Buffer.byteLength(body)) });
    expect(huge.status).toBe(413);
    expect(huge.errors?.[0]?.message).toMatch(/over the limit of 4194304/);
    expect(await logLength()).toEqual(before);
  });

  it('a query over the complexity limit is refused with a reason', async () => {
    const r = await t.gql(
      '{ threads(first: 1000) { edges { node { nodes(first: 1000) { edges { node { id } } } } } } }',
    );
    expect(r.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
  });
});

describe('unexpected errors are masked', () => {
  it('a plain exception becomes "Unexpected error." without its message', async () => {
    const broken = await createTestApp({ failing: ['countNodes'] });
    try {
      await broken.gql('mutation { createThread(input: { threadId: "x" }) { __typename } }');
      const r = await broken.gql('{ thread(id: "x") { id nodes(kinds: [GOAL]) { totalCount } } }');
      expect(r.errors?.[0]?.message).toBe('Unexpected error.');
      expect(r.text).not.toContain('secret');
      expect(r.text).not.toContain('disk on fire');
    } finally {
      await broken.close();
    }
  });
});

describe('endpoints', () => {
  it('/healthz and /readyz answer', async () => {
    const health = await t.app.yoga.fetch('http://weft.test/healthz');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await t.app.yoga.fetch('http://weft.test/readyz');
    expect(ready.status).toBe(200);
  });

  it('GraphiQL is served inline to browsers, with no CDN', async () => {
    const r = await t.app.yoga.fetch('http://weft.test/graphql', {
      headers: { accept: 'text/html' },
    });
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain('<title>Weft</title>');
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdnjs/);
    expect(html.length).toBeGreaterThan(100_000);
  });

  it('introspection and GraphiQL can be turned off', async () => {
    const closed = await createTestApp({ config: { introspection: false, graphiql: false } });
    try {
      const r = await closed.gql('{ __schema { types { name } } }');
      expect(r.errors?.[0]?.message).toMatch(/introspection/i);
      const page = await closed.app.yoga.fetch('http://weft.test/graphql', {
        headers: { accept: 'text/html' },
      });
      expect(await page.text()).not.toContain('<title>Weft</title>');
    } finally {
      await closed.close();
    }
  });
});

describe('graphql-http audits (MUST and SHOULD)', async () => {
  const audits = serverAudits({
    url: 'http://weft.test/graphql',
    fetchFn: (input: RequestInfo | URL, init?: RequestInit) =>
      t.app.yoga.fetch(new Request(input, init)),
  });
  const required = audits.filter((a) => a.name.startsWith('MUST') || a.name.startsWith('SHOULD'));
  it('the suite has MUST and SHOULD audits', () => {
    expect(required.length).toBeGreaterThan(20);
  });
  for (const audit of required) {
    it(audit.name, async () => {
      const result = await audit.fn();
      expect(result.status, 'reason' in result ? String(result.reason) : '').toBe('ok');
    });
  }
});
