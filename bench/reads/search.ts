/**
 * Section 5b: `searchNodes(query, first: 20)` over 1,000,000 nodes with text payloads, p50 and
 * p99 over HTTP against the raw full-text query on the same database in this run (SQLite: the
 * FTS5 MATCH ranked by bm25 with its snippet; Postgres: websearch_to_tsquery over the GIN-indexed
 * tsvector ranked by ts_rank, with ts_headline for the page). The nodes are written through the
 * engine (appendNodes batches, several threads at once), so the index is the one commits keep.
 * Payload text draws from a vocabulary of 5,000 tokens, so a one-token query matches about one
 * node in two hundred.
 */
import { performance } from 'node:perf_hooks';
import type { JsonValue } from '../../src/core/json.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { fmt } from '../harness.js';
import {
  type BackendName,
  buildCapMs,
  gql,
  log,
  ms,
  must,
  openBenchDb,
  p,
  type ReadsSizes,
  row,
  type SectionResult,
  startApp,
  timed,
  verdict,
} from './common.js';
import { queryFields } from './schema-check.js';

const VOCABULARY = 5_000;
const QUERIES = ['w42', 'w1234', 'w777 w4000', '"w9 w10"', 'w2500 -w3'];
const SEARCH = `query ($q: String!) {
  searchNodes(query: $q, first: 20) {
    edges { node { threadId score snippet { text highlights { start length } } node { id kind } } }
  }
}`;
const THREADS = 20;
const BATCH = 1_000;
const PARALLEL = 4;
const SAMPLES = 100;
const BUILD_CAP_S = 300;

/** The raw query of `q` (one token or two), the page of 20 with its snippet, as the API asks. */
function rawSearch(backend: BackendName, q: string): { text: string; values: unknown[] } {
  if (backend === 'sqlite') {
    const match = q
      .replace(/"/g, '')
      .split(/\s+/)
      .map((w) => (w.startsWith('-') ? `NOT "${w.slice(1)}"` : `"${w}"`))
      .join(' ');
    return {
      text:
        'SELECT t."thread_id", t."sequence", n."id", -bm25("node_search") AS score, ' +
        "snippet(\"node_search\", 0, '[', ']', '…', 16) AS snippet FROM \"node_search\" " +
        'JOIN "node_text" t ON t."id" = "node_search".rowid ' +
        'JOIN "thread" h ON h."id" = t."thread_id" ' +
        'JOIN "node" n ON n."thread_id" = t."thread_id" AND n."sequence" = t."sequence" ' +
        'WHERE "node_search" MATCH $1 AND h."tenant_id" = $2 ORDER BY bm25("node_search") LIMIT 20',
      values: [match, 'default'],
    };
  }
  return {
    text:
      'SELECT hit.*, ts_headline(\'simple\', hit."body", q.query) AS snippet FROM (' +
      'SELECT t."thread_id", t."sequence", n."id", t."body", ts_rank(t."tsv", q.query) AS score ' +
      'FROM "node_text" t JOIN "thread" h ON h."id" = t."thread_id" ' +
      'JOIN "node" n ON n."thread_id" = t."thread_id" AND n."sequence" = t."sequence", ' +
      "(SELECT websearch_to_tsquery('simple', $1) AS query) q " +
      'WHERE t."tsv" @@ q.query AND h."tenant_id" = $2 ORDER BY score DESC LIMIT 20) hit, ' +
      "(SELECT websearch_to_tsquery('simple', $1) AS query) q ORDER BY hit.score DESC",
    values: [q, 'default'],
  };
}

function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function textNodes(count: number, seed: number) {
  const rand = lcg(seed);
  return Array.from({ length: count }, (_, i) => ({
    kind: (i % 2 === 0 ? 'inference' : 'tool_result') as 'inference' | 'tool_result',
    payload: {
      text: Array.from({ length: 24 }, () => `w${Math.floor(rand() * VOCABULARY)}`).join(' '),
      note: `step ${i} of the agent`,
    } as JsonValue,
  }));
}

async function build(engine: Engine, total: number): Promise<{ built: number; ms: number }> {
  const started = performance.now();
  const perThread = Math.ceil(total / THREADS);
  let built = 0;
  let next = 0;
  let lastReport = started;
  const cap = buildCapMs(BUILD_CAP_S);
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < THREADS && performance.now() - started < cap) {
        const t = next++;
        const threadId = `search-${t}`;
        must(await engine.createThread({ threadId }));
        for (let done = 0; done < perThread && performance.now() - started < cap; done += BATCH) {
          const size = Math.min(BATCH, perThread - done);
          must(
            await engine.appendNodes({ threadId, nodes: textNodes(size, t * 1_000_003 + done) }),
          );
          built += size;
          if (performance.now() - lastReport >= 10_000) {
            lastReport = performance.now();
            const s = (lastReport - started) / 1000;
            log(`search: ${fmt(built)} nodes in ${fmt(s, 1)} s (${fmt(built / s)} nodes/s)`);
          }
        }
      }
    }),
  );
  return { built, ms: performance.now() - started };
}

export async function runSearch(
  backend: BackendName,
  root: string,
  sizes: ReadsSizes,
): Promise<SectionResult> {
  if (!queryFields().has('searchNodes')) {
    console.log('searchNodes: not measured (Query.searchNodes not in schema)');
    return {
      rows: [row('searchNodes', 'not measured (Query.searchNodes not in schema)')],
      notes: [],
    };
  }
  const db = await openBenchDb(backend, root, 'search');
  try {
    const builder = createEngine({ databaseUrl: db.url });
    const { built, ms: buildMs } = await build(builder, sizes.searchNodes);
    await builder.close();
    const capped = built < sizes.searchNodes;
    const note = `built ${fmt(built)} nodes with text payloads in ${fmt(buildMs / 1000, 1)} s (${fmt((built * 1000) / buildMs)} nodes/s through appendNodes, ${PARALLEL} threads at once)${capped ? ` — CAPPED: ${fmt(sizes.searchNodes)} asked` : ''}`;
    log(`${backend}: ${note}`);
    const engine = createEngine({ databaseUrl: db.url });
    const { url, app } = await startApp(db.url, engine);
    const raw = await db.raw();
    const api: number[] = [];
    const rawTimes: number[] = [];
    let hits = 0;
    try {
      for (const q of QUERIES) {
        await gql(url, SEARCH, { q });
        const r = rawSearch(backend, q);
        await raw.query(r.text, r.values);
      }
      for (let s = 0; s < SAMPLES; s++) {
        const q = QUERIES[s % QUERIES.length]!;
        api.push(
          await timed(async () => {
            const answer = await gql(url, SEARCH, { q });
            hits += (answer.data.searchNodes as { edges: unknown[] }).edges.length;
          }),
        );
        const r = rawSearch(backend, q);
        rawTimes.push(await timed(() => raw.query(r.text, r.values)));
      }
    } finally {
      await raw.close();
      await app.stop();
      await engine.close();
    }
    const ratio = p(rawTimes, 50) / p(api, 50);
    const over = `${fmt(built)} nodes${capped ? ' (build CAPPED)' : ''}`;
    return {
      rows: [
        row(
          `searchNodes(first: 20) over ${over}, API p50 / p99 (n=${api.length}, ${QUERIES.length} queries in turn)`,
          `${ms(p(api, 50))} / ${ms(p(api, 99))}`,
        ),
        row(
          'searchNodes, raw full-text query (same match, rank, snippet, LIMIT 20), p50 / p99',
          `${ms(p(rawTimes, 50))} / ${ms(p(rawTimes, 99))}`,
          'baseline',
        ),
        row(
          'searchNodes, raw / API at p50',
          `${fmt(ratio * 100, 1)}%`,
          '(reported)',
          verdict(hits > 0),
        ),
      ],
      notes: [note, `${fmt(hits / SAMPLES, 1)} hits per search on average`],
    };
  } finally {
    await db.drop();
  }
}
