/**
 * `Query.searchNodes` on SQLite (FTS5) and Postgres (tsvector): ranking, snippet highlights,
 * the kinds and thread filters, paging through the ranked list with no duplicate or gap,
 * hostile queries (typed errors or empty answers, never a 500), nodes appended after a search,
 * tenant isolation, and encryption at rest (search off by default, nothing indexed; on with
 * the plain-text option).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createReads, type Reads, scopeReads } from '../../src/reads/index.js';
import { type App, buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { rawQuery } from '../../src/store/prisma/raw.js';
import { openThreadStore, type ThreadStoreOptions } from '../../src/store/read-model/index.js';
import { openReadQueries } from '../../src/store/read-model/queries.js';
import { node, nodeText } from '../../src/store/tables/index.js';
import { createAuthApp } from '../auth/support.js';
import { describeWithPostgres } from '../support/services.js';
import { freshPostgresUrl, freshSqliteUrl } from './support.js';

// biome-ignore lint/suspicious/noExplicitAny: tests read response data loosely
type Json = any;

interface SearchApp {
  url: string;
  engine: Engine;
  reads: Reads;
  gql(query: string, variables?: Record<string, unknown>): Promise<Json>;
  /** The read queries the app made (their names), in order, since the list was last emptied. */
  queried: string[];
  /** A column of every row of `table` in the database (what the store wrote). */
  column(table: { sql: string }, column: string): Promise<unknown[]>;
  close(): Promise<void>;
}

/** An app on a fresh database whose store is opened with `storeOptions`. */
async function openApp(
  backend: 'sqlite' | 'postgres',
  storeOptions: ThreadStoreOptions = {},
): Promise<SearchApp> {
  const url = backend === 'postgres' ? await freshPostgresUrl() : await freshSqliteUrl();
  const engine = createEngine({
    store: openThreadStore(url, storeOptions),
    clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
    ids: createSequentialIds('id'),
  });
  // The app's read queries, each call named in `queried` (the real queries on the real store).
  const queries = openReadQueries({ databaseUrl: url }, engine.store.codec);
  const queried: string[] = [];
  const counted = new Proxy(queries, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        queried.push(String(name));
        return value.apply(target, args);
      };
    },
  });
  const reads = createReads(engine, counted);
  const config = loadConfig({ DATABASE_URL: url, PORT: '0', WEFT_REQUEST_LOG: 'off' });
  const app: App = buildApp({ config, engine, reads });
  const db = createPrisma(url);
  return {
    url,
    engine,
    reads,
    queried,
    async gql(query, variables) {
      const response = await app.yoga.fetch('http://weft.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...(await response.json()) };
    },
    column: async (table, column) =>
      (await rawQuery(db, `SELECT ${column} AS v FROM ${table.sql}`)).map((r) => r.v),
    async close() {
      await app.stop();
      await queries.close();
      await engine.close();
      await db.prisma.$disconnect();
    },
  };
}

const HIT = `cursor node { threadId score snippet { text highlights { start length } }
  node { id kind sequence threadId payload } }`;
const SEARCH = `query($q: String!, $filter: NodeSearchFilter, $first: Int, $after: String) {
  searchNodes(query: $q, filter: $filter, first: $first, after: $after) {
    edges { ${HIT} }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

/** The highlighted words of a snippet, lowercased. */
const highlighted = (snippet: {
  text: string;
  highlights: Array<{ start: number; length: number }>;
}) => snippet.highlights.map((h) => snippet.text.slice(h.start, h.start + h.length).toLowerCase());

function suite(backend: 'sqlite' | 'postgres') {
  let t: SearchApp;
  const ids: Record<string, string> = {};

  const ok = async (query: string, variables?: Record<string, unknown>) => {
    const r = await t.gql(query, variables);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data;
  };
  const append = async (
    threadId: string,
    nodes: Array<{ name: string; kind: string; payload: unknown }>,
  ) => {
    const data = await ok(
      `mutation($t: ID!, $nodes: [NodeInput!]!) { appendNodes(input: { threadId: $t, nodes: $nodes }) {
        __typename ... on AppendNodesSuccess { nodes { id } } ... on Error { message } } }`,
      { t: threadId, nodes: nodes.map((n) => ({ kind: n.kind, payload: n.payload })) },
    );
    expect(data.appendNodes.__typename, JSON.stringify(data)).toBe('AppendNodesSuccess');
    nodes.forEach((n, i) => {
      ids[n.name] = data.appendNodes.nodes[i].id;
    });
  };
  const search = async (q: string, extra: Record<string, unknown> = {}) =>
    (await ok(SEARCH, { q, ...extra })).searchNodes;
  const names = (page: Json): string[] =>
    page.edges.map((e: Json) => Object.keys(ids).find((k) => ids[k] === e.node.node.id));

  beforeAll(async () => {
    t = await openApp(backend);
    for (const id of ['docs', 'other', 'many']) {
      await ok(`mutation { createThread(input: { threadId: "${id}" }) { __typename } }`);
    }
    await append('docs', [
      { name: 'goal', kind: 'GOAL', payload: { text: 'deploy weft server right now' } },
      {
        name: 'busy',
        kind: 'INFERENCE',
        payload: { text: 'weft weft deploy weft and weft' },
      },
      {
        name: 'cats',
        kind: 'TOOL_RESULT',
        payload: { hits: 3, title: 'unrelated text about cats' },
      },
      {
        name: 'nested',
        kind: 'ANSWER',
        payload: { summary: 'cats and dogs', more: { list: ['a weft of threads', 7, null] } },
      },
      // Keys, numbers and booleans are not text: nothing of this node is indexed.
      { name: 'keys', kind: 'TOOL_CALL', payload: { weft: 1, deploy: true, zebra: [2] } },
    ]);
    await append('other', [
      {
        name: 'elsewhere',
        kind: 'GOAL',
        payload: { text: 'deploy weft elsewhere, somewhere far away from here and there' },
      },
    ]);
    await append(
      'many',
      Array.from({ length: 23 }, (_, i) => ({
        name: `m${i}`,
        kind: 'INFERENCE',
        // All of one length: those with the word twice rank first, ties by sequence.
        payload: { text: `needle ${i % 3 === 0 ? 'needle' : 'straw'} hay`, i },
      })),
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('ranks the node matching more often first, and needs every word', async () => {
    const page = await search('weft deploy');
    // Of two nodes of one length, the one with more matches first; a longer one with as many
    // matches as the shorter after it (bm25 normalises by length, ts_rank does not: ties by thread).
    expect(names(page)).toEqual(['busy', 'goal', 'elsewhere']);
    const scores = page.edges.map((e: Json) => e.node.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(scores[0]).toBeGreaterThan(scores.at(-1));
    const first = page.edges[0].node;
    expect(first.threadId).toBe('docs');
    expect(first.node).toMatchObject({ id: ids.busy, kind: 'INFERENCE', threadId: 'docs' });
  });

  it('indexes string values only, nested ones included, not keys or numbers', async () => {
    expect(names(await search('threads'))).toEqual(['nested']);
    expect(names(await search('zebra'))).toEqual([]);
    expect(names(await search('cats'))).toEqual(expect.arrayContaining(['cats', 'nested']));
    expect(names(await search('hits'))).toEqual([]);
  });

  it('highlights the matched words in a plain-text snippet', async () => {
    const page = await search('deploy');
    expect(page.edges.length).toBe(3);
    for (const edge of page.edges) {
      const { snippet } = edge.node;
      expect(snippet.highlights.length).toBeGreaterThan(0);
      expect(highlighted(snippet).every((w: string) => w === 'deploy')).toBe(true);
      expect(snippet.text).not.toMatch(/[\uE000\uE001]/);
      expect(snippet.text).toContain('deploy');
    }
  });

  it('understands phrases, or, and exclusions', async () => {
    expect(names(await search('"weft server"'))).toEqual(['goal']);
    expect(new Set(names(await search('dogs or elsewhere')))).toEqual(
      new Set(['nested', 'elsewhere']),
    );
    expect(new Set(names(await search('weft -server')))).toEqual(
      new Set(['busy', 'nested', 'elsewhere']),
    );
    // Only an exclusion: nothing to look for.
    expect(names(await search('-weft'))).toEqual([]);
  });

  it('filters by kinds and by thread', async () => {
    expect(new Set(names(await search('deploy', { filter: { kinds: ['GOAL'] } })))).toEqual(
      new Set(['goal', 'elsewhere']),
    );
    expect(
      names(await search('deploy', { filter: { kinds: ['GOAL'], threadId: 'other' } })),
    ).toEqual(['elsewhere']);
    expect(new Set(names(await search('weft', { filter: { threadId: 'docs' } })))).toEqual(
      new Set(['goal', 'busy', 'nested']),
    );
    expect(names(await search('weft', { filter: { threadId: 'nope' } }))).toEqual([]);
    expect(names(await search('weft', { filter: { kinds: [] } }))).toEqual([]);
  });

  it('pages through the ranked list with no duplicate or gap', async () => {
    const all = await search('needle', { first: 100 });
    expect(all.edges.length).toBe(23);
    expect(all.pageInfo.hasNextPage).toBe(false);
    // Nodes with the word twice rank above the others.
    const twice = new Set(names(all).slice(0, 8));
    expect(twice).toEqual(new Set([0, 3, 6, 9, 12, 15, 18, 21].map((i) => `m${i}`)));
    const paged: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await search('needle', { first: 5, ...(after === undefined ? {} : { after }) });
      paged.push(...names(page));
      expect(page.pageInfo.hasPreviousPage).toBe(after !== undefined);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(paged).toEqual(names(all));
    const empty = await search('needle', { first: 0 });
    expect(empty.edges).toEqual([]);
    expect(empty.pageInfo.hasNextPage).toBe(true);
  });

  it('refuses a cursor of another search', async () => {
    const page = await search('needle', { first: 2 });
    const r = await t.gql(SEARCH, { q: 'weft', after: page.pageInfo.endCursor });
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const filtered = await t.gql(SEARCH, {
      q: 'needle',
      after: page.pageInfo.endCursor,
      filter: { kinds: ['GOAL'] },
    });
    expect(filtered.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const bogus = await t.gql(SEARCH, { q: 'needle', after: 'not-a-cursor' });
    expect(bogus.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('answers hostile queries with results or typed errors, never a 500', async () => {
    const hostile = [
      '"',
      '""',
      '*',
      'weft*',
      'NEAR(',
      'NEAR(weft deploy)',
      'NEAR(weft deploy, 2)',
      '-',
      '--',
      '(',
      ')(',
      '(weft',
      'weft)',
      'weft"',
      '"weft',
      'weft AND',
      'AND',
      'OR',
      'or weft',
      'NOT weft',
      'weft NOT',
      'body:weft',
      '{body}: weft',
      '^weft',
      "'",
      '\\',
      ':',
      '&|!<->',
      "weft' OR '1'='1",
      '; DROP TABLE node_text; --',
      '\u00a0',
      '💥',
      'a'.repeat(1000),
    ];
    for (const q of hostile) {
      const r = await t.gql(SEARCH, { q });
      expect(r.status, q).toBe(200);
      if (r.errors !== undefined) {
        expect(r.errors[0].extensions.code, `${q}: ${JSON.stringify(r.errors)}`).toBe(
          'BAD_USER_INPUT',
        );
      } else {
        expect(Array.isArray(r.data.searchNodes.edges), q).toBe(true);
      }
    }
    // FTS operators are words like any other: they match only themselves.
    expect(names(await search('NEAR(weft deploy)'))).toEqual([]);
    expect(names(await search('weft*'))).toEqual(names(await search('weft')));
  });

  it('refuses an empty or too long query and a page over 100', async () => {
    for (const variables of [
      { q: '' },
      { q: '   ' },
      { q: 'a'.repeat(1001) },
      { q: 'weft\u0000' },
      { q: 'weft', first: 101 },
      { q: 'weft', first: -1 },
    ]) {
      const r = await t.gql(SEARCH, variables);
      expect(r.status).toBe(200);
      expect(r.errors?.[0]?.extensions?.code, JSON.stringify(variables)).toBe('BAD_USER_INPUT');
      expect(r.errors?.[0]?.extensions?.issues?.length).toBe(1);
    }
  });

  it('reads no node when a search selects only scores and snippets', async () => {
    t.queried.length = 0;
    const lean = await ok(
      'query($q: String!) { searchNodes(query: $q) { edges { node { score snippet { text } } } } }',
      { q: 'weft deploy' },
    );
    expect(lean.searchNodes.edges.map((e: Json) => e.node.snippet.text).length).toBe(3);
    expect(t.queried).toEqual([]);
    // Selecting the node reads the page's nodes.
    expect(names(await search('weft deploy'))).toEqual(['busy', 'goal', 'elsewhere']);
    expect(t.queried).toContain('nodes');
  });

  it('finds nodes appended after a search', async () => {
    expect(names(await search('aardvark'))).toEqual([]);
    await append('other', [{ name: 'late', kind: 'ANSWER', payload: { text: 'an aardvark' } }]);
    expect(names(await search('aardvark'))).toEqual(['late']);
  });

  it('keeps tenants apart', async () => {
    const acme = t.engine.forTenant('acme');
    expect((await acme.createThread({ threadId: 'docs' })).ok).toBe(true);
    const appended = await acme.appendNodes({
      threadId: 'docs',
      nodes: [{ kind: 'goal', payload: { text: 'deploy the acme weft' } }],
    });
    expect(appended.ok).toBe(true);
    const scoped = scopeReads(t.reads, t.engine.tenants, 'acme');
    const page = { text: 'weft', take: 10, offset: 0, tenantId: 'ignored' };
    const mine = await scoped.searchNodes(page);
    const hits = mine.ok ? mine.value : [];
    expect(hits.map((h) => h.threadId)).toEqual(['docs']);
    // The hit names the node as the tenant reads it.
    const nodes = await scoped.nodes(hits.map((h) => ({ threadId: h.threadId, id: h.nodeId })));
    expect(nodes.map((n) => n?.threadId)).toEqual(['docs']);
    const inThread = await scoped.searchNodes({ ...page, threadId: 'other' });
    expect(inThread.ok && inThread.value).toEqual([]);
    // The default tenant (open mode) does not see acme's node.
    expect(names(await search('acme'))).toEqual([]);
  });
}

function encryptionSuite(backend: 'sqlite' | 'postgres') {
  const key = new Uint8Array(32).fill(7);
  const appendSecret = async (t: SearchApp) => {
    await t.gql('mutation { createThread(input: { threadId: "s" }) { __typename } }');
    const r = await t.gql(
      'mutation { appendNodes(input: { threadId: "s", nodes: [{ kind: GOAL, payload: { text: "classified walrus" } }] }) { __typename } }',
    );
    expect(r.data.appendNodes.__typename).toBe('AppendNodesSuccess');
  };

  it('is off by default: a typed error, and nothing in the index', async () => {
    const t = await openApp(backend, { encryptionKey: key });
    try {
      await appendSecret(t);
      const r = await t.gql(SEARCH, { q: 'walrus' });
      expect(r.status).toBe(200);
      expect(r.errors?.[0]?.extensions?.code).toBe('SEARCH_DISABLED');
      expect(r.errors?.[0]?.message).toMatch(/encrypted at rest.*WEFT_SEARCH_PLAINTEXT_INDEX=1/);
      // Even for another tenant's thread or no match, search says it is off.
      const filtered = await t.gql(SEARCH, { q: 'walrus', filter: { threadId: 'nope' } });
      expect(filtered.errors?.[0]?.extensions?.code).toBe('SEARCH_DISABLED');
      expect(await t.column(nodeText, nodeText.c.body)).toEqual([]);
      expect(String((await t.column(node, node.c.payload))[0])).toMatch(/^wenc2:/);
    } finally {
      await t.close();
    }
  });

  it('is on with searchPlaintextIndex: the payload sealed, its text indexed', async () => {
    const t = await openApp(backend, { encryptionKey: key, searchPlaintextIndex: true });
    try {
      await appendSecret(t);
      const page = (await t.gql(SEARCH, { q: 'walrus' })).data.searchNodes;
      expect(page.edges.map((e: Json) => e.node.node.payload)).toEqual([
        { text: 'classified walrus' },
      ]);
      expect(highlighted(page.edges[0].node.snippet)).toEqual(['walrus']);
      expect(await t.column(nodeText, nodeText.c.body)).toEqual(['classified walrus']);
      expect(String((await t.column(node, node.c.payload))[0])).toMatch(/^wenc2:/);
    } finally {
      await t.close();
    }
  });
}

describe('searchNodes (SQLite)', () => suite('sqlite'));
describeWithPostgres('searchNodes (Postgres)', () => suite('postgres'));
describe('searchNodes with encryption at rest (SQLite)', () => encryptionSuite('sqlite'));
describeWithPostgres('searchNodes with encryption at rest (Postgres)', () =>
  encryptionSuite('postgres'),
);

describe('searchNodes with API keys', () => {
  it('answers each tenant from its own threads, named by their ids', async () => {
    const t = await createAuthApp();
    try {
      const acme = (await t.key('acme', ['read', 'write'])).key;
      const globex = (await t.key('globex', ['read', 'write'])).key;
      for (const [k, word] of [
        [acme, 'anvil'],
        [globex, 'globe'],
      ] as const) {
        const created = await t.gql(
          k,
          'mutation { createThread(input: { threadId: "t1" }) { __typename } }',
        );
        expect(created.data.createThread.__typename).toBe('CreateThreadSuccess');
        const appended = await t.gql(
          k,
          `mutation { appendNodes(input: { threadId: "t1", nodes: [{ kind: GOAL, payload: { text: "shared ${word}" } }] }) { __typename } }`,
        );
        expect(appended.data.appendNodes.__typename).toBe('AppendNodesSuccess');
      }
      const texts = async (k: string, q: string, filter?: Json) => {
        const r = await t.gql(k, SEARCH, { q, filter });
        expect(r.errors).toBeUndefined();
        return r.data.searchNodes.edges.map((e: Json) => [
          e.node.threadId,
          e.node.node.payload.text,
        ]);
      };
      expect(await texts(acme, 'shared')).toEqual([['t1', 'shared anvil']]);
      expect(await texts(globex, 'shared', { threadId: 't1' })).toEqual([['t1', 'shared globe']]);
      expect(await texts(globex, 'anvil')).toEqual([]);
      const none = await t.gql(undefined, SEARCH, { q: 'shared' });
      expect(none.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    } finally {
      await t.close();
    }
  });
});
