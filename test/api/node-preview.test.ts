/**
 * `CausalNode.preview` on both backends and with encryption at rest: the one line a graph label
 * shows (a message's content, a tool call as name(args)), cut at `maxLength`; null once the node
 * is redacted, so a label never shows withheld text; a bad length is a typed error.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

const NODES = `query ($max: Int) { thread(id: "p") { nodes(first: 10) { edges { node {
  id kind preview(maxLength: $max) } } } } }`;

function suite(options: Parameters<typeof createTestApp>[0]) {
  let t: TestApp;
  const ids: string[] = [];

  beforeAll(async () => {
    t = await createTestApp(options);
    await t.gql('mutation { createThread(input: { threadId: "p" }) { __typename } }');
    const r = await t.gql(
      `mutation ($nodes: [NodeInput!]!) { appendNodes(input: { threadId: "p", nodes: $nodes }) {
        __typename ... on AppendNodesSuccess { nodes { id } } ... on Error { message } } }`,
      {
        nodes: [
          {
            kind: 'GOAL',
            payload: { role: 'human', messageId: 'm1', content: 'Find a flat in Oslo under 20k' },
          },
          {
            kind: 'TOOL_CALL',
            payload: { name: 'search', args: { city: 'Oslo', max: 20000 }, toolCallId: 'c1' },
          },
          { kind: 'TOOL_RESULT', payload: { temperature: 4 } },
        ],
      },
    );
    expect(r.data?.appendNodes.__typename, JSON.stringify(r)).toBe('AppendNodesSuccess');
    ids.push(...r.data.appendNodes.nodes.map((n: { id: string }) => n.id));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('shows each node in a line: content, name(args), else its values', async () => {
    const r = await t.gql(NODES);
    expect(r.errors).toBeUndefined();
    const previews = r.data.thread.nodes.edges.map(
      (e: { node: { preview: string } }) => e.node.preview,
    );
    expect(previews).toEqual([
      'Find a flat in Oslo under 20k',
      'search(city: Oslo, max: 20000)',
      '4',
    ]);
    const short = await t.gql(NODES, { max: 12 });
    expect(short.data.thread.nodes.edges[0].node.preview).toBe('Find a flat…');
  });

  it('is null once the node is redacted', async () => {
    const r = await t.gql(
      `mutation ($ids: [ID!]!) { redactNodes(input: { threadId: "p", nodeIds: $ids, reason: "privacy" }) { __typename } }`,
      { ids: [ids[0]] },
    );
    expect(r.data?.redactNodes.__typename, JSON.stringify(r)).toBe('RedactNodesSuccess');
    const after = await t.gql(NODES);
    expect(after.data.thread.nodes.edges[0].node.preview).toBeNull();
    expect(after.text).not.toContain('Oslo under');
  });

  it('refuses a length outside 1..500 with BAD_USER_INPUT', async () => {
    for (const max of [0, 501, -3]) {
      const r = await t.gql(NODES, { max });
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(r)).toBe('BAD_USER_INPUT');
    }
  });
}

describe('CausalNode.preview [sqlite]', () => suite({ backend: 'sqlite' }));
describe('CausalNode.preview [sqlite, encrypted]', () =>
  suite({ backend: 'sqlite', encryptionKey: new Uint8Array(randomBytes(32)) }));
describeWithPostgres('CausalNode.preview', () => suite({ backend: 'postgres' }));
