/**
 * What one tenant's searches may cost others, and tell them (review items 1 and 4), on SQLite
 * and Postgres: a node of one word repeated 32,767 times is searched for with bounded snippets;
 * only the newest MAX_SEARCH_CANDIDATES matches are ranked, however good an older one is; thirty
 * aliased searches are refused by the complexity limit; a Postgres read held past
 * WEFT_QUERY_TIMEOUT_MS answers QUERY_TIMEOUT and the server goes on answering; a tenant's
 * scores are the same whether or not another tenant has nodes holding the word.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { SEARCH_COMPLEXITY } from '../../src/graphql/search.js';
import { createReads, type Reads, scopeReads } from '../../src/reads/index.js';
import { type App, buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import {
  MAX_SEARCH_CANDIDATES,
  MAX_SEARCH_WORDS,
} from '../../src/store/read-model/search-queries.js';
import {
  createMatcher,
  SNIPPET_HEAD,
  SNIPPET_WORDS,
  snippetOfHead,
  snippetOfText,
} from '../../src/store/read-model/search-text.js';
import { freshPostgresUrl, freshSqliteUrl } from '../api/support.js';
import { describeWithPostgres } from '../support/services.js';

// biome-ignore lint/suspicious/noExplicitAny: tests read response data loosely
type Json = any;

interface SearchApp {
  url: string;
  engine: Engine;
  reads: Reads;
  gql(query: string, variables?: Record<string, unknown>): Promise<Json>;
  close(): Promise<void>;
}

async function openApp(
  backend: 'sqlite' | 'postgres',
  queryTimeoutMs?: number,
): Promise<SearchApp> {
  const url = backend === 'postgres' ? await freshPostgresUrl() : await freshSqliteUrl();
  const engine = createEngine({
    store: openThreadStore(url, { queryTimeoutMs }),
    clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
    ids: createSequentialIds('id'),
  });
  const reads = createReads(engine, { databaseUrl: url, queryTimeoutMs });
  const config = loadConfig({ DATABASE_URL: url, PORT: '0', WEFT_REQUEST_LOG: 'off' });
  const app: App = buildApp({ config, engine, reads });
  return {
    url,
    engine,
    reads,
    async gql(query, variables) {
      const response = await app.yoga.fetch('http://weft.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...(await response.json()) };
    },
    async close() {
      await app.stop();
      await reads.close();
      await engine.close();
    },
  };
}

const SEARCH = `query($q: String!, $first: Int) { searchNodes(query: $q, first: $first) {
  edges { node { score snippet { text highlights { start length } } node { sequence } } } } }`;

/** A node of one word repeated to the longest text the index keeps (64 KiB). */
const BOMB = { text: 'k '.repeat(32_767) };

const wordsIn = (text: string) => text.split(/\s+/).filter((w) => w !== '' && w !== '…');

function suite(backend: 'sqlite' | 'postgres') {
  let t: SearchApp;
  const ok = async (query: string, variables?: Record<string, unknown>) => {
    const r = await t.gql(query, variables);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data;
  };
  const append = async (threadId: string, nodes: Array<{ payload: unknown }>) => {
    for (let from = 0; from < nodes.length; from += 250) {
      const data = await ok(
        `mutation($t: ID!, $nodes: [NodeInput!]!) { appendNodes(input: { threadId: $t, nodes: $nodes }) {
          __typename ... on Error { message } } }`,
        {
          t: threadId,
          nodes: nodes
            .slice(from, from + 250)
            .map((n) => ({ kind: 'INFERENCE', payload: n.payload })),
        },
      );
      expect(data.appendNodes.__typename, JSON.stringify(data)).toBe('AppendNodesSuccess');
    }
  };

  beforeAll(async () => {
    t = await openApp(backend);
    for (const id of ['bombs', 'many']) {
      await ok(`mutation { createThread(input: { threadId: "${id}" }) { __typename } }`);
    }
    await append('bombs', [{ payload: BOMB }, { payload: BOMB }, { payload: BOMB }]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers a search over nodes of one repeated word with bounded snippets', async () => {
    for (const q of ['k', '"k k k k k k k k k k"']) {
      const { edges } = (await ok(SEARCH, { q })).searchNodes;
      expect(edges.length, q).toBe(3);
      for (const { node } of edges) {
        expect(wordsIn(node.snippet.text).length).toBeLessThanOrEqual(SNIPPET_WORDS);
        expect(node.snippet.text.endsWith('…')).toBe(true);
        expect(node.snippet.highlights.length).toBeGreaterThan(0);
        expect(node.snippet.highlights.length).toBeLessThanOrEqual(SNIPPET_WORDS);
      }
    }
  });

  it(`looks for a query's first ${MAX_SEARCH_WORDS} words only`, async () => {
    const count = async (q: string) =>
      (await ok(SEARCH, { q, first: 10 })).searchNodes.edges.length;
    // A word no node holds finds nothing among the first 32 words, and is ignored past them.
    expect(await count(`zebra ${'k '.repeat(MAX_SEARCH_WORDS - 1)}`)).toBe(0);
    expect(await count(`${'k '.repeat(MAX_SEARCH_WORDS)}zebra`)).toBe(3);
    // A phrase that runs past the limit keeps its first words.
    expect(await count(`"${'k '.repeat(MAX_SEARCH_WORDS)}zebra"`)).toBe(3);
    expect(await count(`"${'k '.repeat(MAX_SEARCH_WORDS - 2)}zebra k"`)).toBe(0);
  });

  it(`cuts snippets from a text's first ${SNIPPET_HEAD} characters, reading the whole text when the passage runs past them`, async () => {
    const filler = (n: number) => 'filler '.repeat(n);
    const texts = [
      `${filler(3)}narwhal in the first words ${filler(40)}`,
      // The passage crosses the head's end, and the first match lies past it.
      `${filler(Math.floor((SNIPPET_HEAD - 40) / 7))}narwhal across the head's end ${filler(30)}`,
      `${filler(Math.ceil(SNIPPET_HEAD / 7) + 500)}narwhal deep in the text ${filler(30)}`,
      `${filler(2)}narwhal`,
    ];
    await ok(`mutation { createThread(input: { threadId: "heads" }) { __typename } }`);
    await append(
      'heads',
      texts.map((text) => ({ payload: { text } })),
    );
    const { edges } = (
      await ok(
        `query($q: String!) { searchNodes(query: $q, filter: { threadId: "heads" }) {
          edges { node { snippet { text highlights { start length } } node { sequence } } } } }`,
        { q: 'narwhal' },
      )
    ).searchNodes;
    expect(edges.length).toBe(texts.length);
    const matcher = createMatcher([['narwhal']]);
    for (const { node } of edges) {
      const text = texts[node.node.sequence - 1]!;
      expect(node.snippet).toEqual(snippetOfText(text, matcher));
      expect(node.snippet.highlights.length).toBe(1);
    }
  });

  it('ranks only the newest matches, however good an older one is', async () => {
    // The oldest five say the word fifty times each: the best matches, but older than the
    // MAX_SEARCH_CANDIDATES newest, each of which says it once.
    await append('many', [
      ...Array.from({ length: 5 }, (_, i) => ({
        payload: { text: `${'quokka '.repeat(50)}old ${i}` },
      })),
      ...Array.from({ length: MAX_SEARCH_CANDIDATES }, (_, i) => ({
        payload: { text: `one quokka among many other words of filler text, number ${i}` },
      })),
    ]);
    const seen = new Set<number>();
    let after: string | undefined;
    for (;;) {
      const page = (
        await ok(
          `query($after: String) { searchNodes(query: "quokka", first: 100, after: $after) {
            edges { node { node { sequence } } } pageInfo { hasNextPage endCursor } } }`,
          { after },
        )
      ).searchNodes;
      for (const e of page.edges) seen.add(e.node.node.sequence);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen.size).toBe(MAX_SEARCH_CANDIDATES);
    for (let sequence = 1; sequence <= 5; sequence++) expect(seen.has(sequence)).toBe(false);
  });

  it('refuses thirty aliased searches in one operation with QUERY_TOO_COMPLEX', async () => {
    const aliased = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `s${i}: searchNodes(query: "k", first: 1) { edges { node { score } } }`).join(' ')} }`;
    const refused = await t.gql(aliased(30));
    expect(refused.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect(refused.data ?? undefined).toBeUndefined();
    // As many as the limit holds are answered.
    const most = Math.floor(50_000 / (SEARCH_COMPLEXITY + 10));
    const answered = await t.gql(aliased(most));
    expect(answered.errors).toBeUndefined();
    expect(Object.keys(answered.data).length).toBe(most);
  });

  it("gives a tenant the same scores whether or not another tenant's nodes hold the word", async () => {
    const a = t.engine.forTenant('tenant-a');
    const b = t.engine.forTenant('tenant-b');
    expect((await a.createThread({ threadId: 'notes' })).ok).toBe(true);
    const texts = ['the walrus sleeps', 'walrus walrus on the ice', 'a long note about a walrus'];
    expect(
      (
        await a.appendNodes({
          threadId: 'notes',
          nodes: texts.map((text) => ({ kind: 'goal' as const, payload: { text } })),
        })
      ).ok,
    ).toBe(true);
    const scoresOfA = async () => {
      const found = await scopeReads(t.reads, t.engine.tenants, 'tenant-a').searchNodes({
        tenantId: 'tenant-a',
        text: 'walrus ice',
        take: 10,
        offset: 0,
      });
      expect(found.ok).toBe(true);
      return found.ok ? found.value.map((h) => [h.sequence, h.score]) : [];
    };
    const before = await scoresOfA();
    expect(before.length).toBe(1);
    const alone = await scopeReads(t.reads, t.engine.tenants, 'tenant-a').searchNodes({
      tenantId: 'tenant-a',
      text: 'walrus',
      take: 10,
      offset: 0,
    });
    const aloneScores = alone.ok ? alone.value.map((h) => [h.sequence, h.score]) : [];
    expect(aloneScores.length).toBe(3);
    // Tenant b writes many nodes holding the words, and many without them.
    expect((await b.createThread({ threadId: 'notes' })).ok).toBe(true);
    expect(
      (
        await b.appendNodes({
          threadId: 'notes',
          nodes: Array.from({ length: 200 }, (_, i) => ({
            kind: 'goal' as const,
            payload: { text: i % 2 === 0 ? `walrus ${i} on the ice ice ice` : `seal number ${i}` },
          })),
        })
      ).ok,
    ).toBe(true);
    expect(await scoresOfA()).toEqual(before);
    const again = await scopeReads(t.reads, t.engine.tenants, 'tenant-a').searchNodes({
      tenantId: 'tenant-a',
      text: 'walrus',
      take: 10,
      offset: 0,
    });
    expect(again.ok && again.value.map((h) => [h.sequence, h.score])).toEqual(aloneScores);
  });
}

describe("snippets from a text's head", () => {
  it("are the whole text's snippet, or none when the head cannot tell", () => {
    // Texts of short words, a few of them the word looked for, cut everywhere near the passage.
    const words = ['a', 'bb', 'walrus', 'ccc', 'd', 'éé', '—', 'walrus!', '12'];
    const matcher = createMatcher([['walrus']]);
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    let answered = 0;
    for (let t = 0; t < 200; t++) {
      const text = Array.from(
        { length: 5 + Math.floor(next() * 80) },
        () => words[Math.floor(next() * words.length)]!,
      ).join(next() < 0.5 ? ' ' : '  ');
      const whole = snippetOfText(text, matcher);
      for (let cut = 1; cut < text.length; cut += 1 + Math.floor(next() * 7)) {
        const snippet = snippetOfHead(text.slice(0, cut), true, matcher);
        if (snippet === undefined) continue;
        answered++;
        expect(snippet, `${JSON.stringify(text)} cut at ${cut}`).toEqual(whole);
      }
      expect(snippetOfHead(text, false, matcher)).toEqual(whole);
    }
    expect(answered).toBeGreaterThan(100);
  });
});

describe('search cost and scores (SQLite)', () => suite('sqlite'));
describeWithPostgres('search cost and scores (Postgres)', () => suite('postgres'));

describeWithPostgres('a Postgres read past WEFT_QUERY_TIMEOUT_MS', () => {
  it('answers QUERY_TIMEOUT, and the server goes on answering', async () => {
    const t = await openApp('postgres', 300);
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      await t.gql('mutation { createThread(input: { threadId: "s" }) { __typename } }');
      await t.gql(
        'mutation { appendNodes(input: { threadId: "s", nodes: [{ kind: GOAL, payload: { text: "a walrus" } }] }) { __typename } }',
      );
      // Another session holds the search index's table: a search waits for it, without end but
      // for the timeout.
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE node_text IN ACCESS EXCLUSIVE MODE');
      const timedOut = await t.gql(SEARCH, { q: 'walrus' });
      expect(timedOut.status).toBe(200);
      expect(timedOut.errors?.[0]?.extensions?.code, JSON.stringify(timedOut)).toBe(
        'QUERY_TIMEOUT',
      );
      expect(timedOut.errors?.[0]?.message).toMatch(/WEFT_QUERY_TIMEOUT_MS/);
      expect((await t.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });
      await holder.query('COMMIT');
      const found = await t.gql(SEARCH, { q: 'walrus' });
      expect(found.errors).toBeUndefined();
      expect(found.data.searchNodes.edges.length).toBe(1);
    } finally {
      await holder.end();
      await t.close();
    }
  });
});
