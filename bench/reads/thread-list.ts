/**
 * Section 2: `threads(first: 50, orderBy: { field: UPDATED_AT, direction: DESC }) { totalCount
 * edges { node { id updatedAt } } }` over many threads, against the raw driver's same ORDER BY
 * and LIMIT plus a COUNT, in this run (behind a bare node:http server with the same client: the
 * verdict; and in process: context). The threads are created through the engine, many
 * createThread commands in flight at once (their commits share write transactions). One server
 * and one raw connection, both warmed up; API and raw samples alternate.
 */
import { performance } from 'node:perf_hooks';
import { createEngine } from '../../src/engine/index.js';
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
  rawRatioRows,
  row,
  type SectionResult,
  startApp,
  startRawServer,
  timed,
} from './common.js';

const THREADS = `{
  threads(first: 50, orderBy: { field: UPDATED_AT, direction: DESC }) { totalCount edges { node { id updatedAt } } }
}`;
// Open mode: every caller is the default tenant, and the API filters on it (as the index does).
const PAGE =
  'SELECT "id", "updated_at" FROM "thread" WHERE "tenant_id" = $1 ORDER BY "updated_at" DESC, "id" DESC LIMIT 50';
const COUNT = 'SELECT COUNT(*) AS "n" FROM "thread" WHERE "tenant_id" = $1';
const IN_FLIGHT = 128;
/** Seconds of thread creation at most (see buildCapMs). */
const BUILD_CAP_S = 150;

export async function runThreadList(
  backend: BackendName,
  root: string,
  sizes: ReadsSizes,
): Promise<SectionResult> {
  const db = await openBenchDb(backend, root, 'threads');
  try {
    const engine = createEngine({ databaseUrl: db.url });
    const started = performance.now();
    const capMs = buildCapMs(BUILD_CAP_S);
    let next = 0;
    let lastReport = started;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < sizes.listThreads && performance.now() - started < capMs) {
          const i = next++;
          must(await engine.createThread({ threadId: `t-${String(i).padStart(6, '0')}` }));
          if (performance.now() - lastReport > 10_000) {
            lastReport = performance.now();
            log(
              `${backend}: ${fmt(i)} threads created (${fmt((lastReport - started) / 1000, 1)} s)`,
            );
          }
        }
      }),
    );
    const buildMs = performance.now() - started;
    const created = next;
    const capped =
      created < sizes.listThreads
        ? ` — CAPPED: only ${fmt(created)} of ${fmt(sizes.listThreads)} threads were created within the ${fmt(capMs / 1000)} s build cap, the figures below are over ${fmt(created)} threads`
        : '';
    const note = `created ${fmt(created)} threads with createThread, ${IN_FLIGHT} in flight, in ${fmt(buildMs / 1000, 1)} s (${fmt((created * 1000) / buildMs)} threads/s)${capped}`;
    log(`${backend}: ${note}`);
    const raw = await db.raw();
    const rawServerDb = await db.raw();
    // Statistics as Postgres's autovacuum would have them a minute later: planned on the counts
    // of the empty table it was migrated into, a page reads all 100,000 rows and sorts them.
    if (backend === 'postgres') await raw.query('ANALYZE "thread"');
    const { url, app } = await startApp(db.url, engine);
    const api: number[] = [];
    const rawMs: number[] = [];
    const rawHttp: number[] = [];
    const readWith = async (on: typeof raw) => {
      const page = await on.query(PAGE, ['default']);
      const [count] = await on.query(COUNT, ['default']);
      return { page, count: Number(count!.n) };
    };
    const rawServer = await startRawServer(async () => {
      const { page, count } = await readWith(rawServerDb);
      return {
        threads: {
          totalCount: count,
          edges: page.map((r) => ({ node: { id: r.id, updatedAt: r.updated_at } })),
        },
      };
    });
    try {
      const rawRead = () => readWith(raw);
      for (let i = 0; i < 5; i++) await gql(rawServer.url, THREADS);
      // Warm-up, and a check that both read the same page.
      for (let i = 0; i < 5; i++) await gql(url, THREADS);
      const answer = (await gql(url, THREADS)).data.threads as {
        totalCount: number;
        edges: Array<{ node: { id: string } }>;
      };
      const expected = await rawRead();
      if (
        answer.totalCount !== expected.count ||
        answer.totalCount !== created ||
        answer.edges.map((e) => e.node.id).join() !== expected.page.map((r) => r.id).join()
      ) {
        throw new Error('reads bench: threads() and the raw page disagree');
      }
      for (let s = 0; s < sizes.listSamples; s++) {
        api.push(await timed(() => gql(url, THREADS)));
        rawHttp.push(await timed(() => gql(rawServer.url, THREADS)));
        rawMs.push(await timed(rawRead));
      }
    } finally {
      await raw.close();
      await rawServer.close();
      await rawServerDb.close();
      await app.stop();
      await engine.close();
    }
    return {
      rows: [
        row(
          `threads(first: 50, UPDATED_AT DESC) + totalCount over ${fmt(created)} threads${capped === '' ? '' : ' (build CAPPED)'}, API p50 / p99 (n=${api.length})`,
          `${ms(p(api, 50))} / ${ms(p(api, 99))}`,
        ),
        row(
          'threads, raw in process ORDER BY updated_at DESC, id DESC LIMIT 50 + COUNT(*), p50 / p99',
          `${ms(p(rawMs, 50))} / ${ms(p(rawMs, 99))}`,
        ),
        ...rawRatioRows('threads', api, rawHttp, rawMs),
        row(
          `threads: build (${fmt(created)} createThread${capped === '' ? '' : `, CAPPED at ${fmt(capMs / 1000)} s, ${fmt(sizes.listThreads)} asked`})`,
          `${fmt(buildMs / 1000, 1)} s`,
        ),
      ],
      notes: [note],
    };
  } finally {
    await db.drop();
  }
}
