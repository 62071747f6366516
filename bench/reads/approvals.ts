/**
 * Section 5a: `approvals(filter: { state: [PENDING] }, first: 50) { totalCount edges { node { … } } }`
 * over many pending requests, against the raw SQL (the same WHERE, ORDER BY and LIMIT plus a
 * COUNT) in this run. The requests are made through the engine: runs started with startRun and
 * put to waiting with a `request_human_input` dispatch (docs/run-lifecycle.md), RUNS_PER_THREAD
 * runs per thread, many threads at once. One server and one raw connection, both warmed up; API
 * and raw samples alternate. Until Query.approvals is in schema/schema.graphql this section
 * measures nothing and says so.
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
  verdict,
} from './common.js';
import { queryFields } from './schema-check.js';

const APPROVALS = `{
  approvals(filter: { state: [PENDING] }, first: 50) {
    totalCount edges { node { threadId runId state requestedAt requestIndex waitingFor prompt } }
  }
}`;
// Open mode: every caller is the default tenant (the index is on tenant, state, requested_at).
const PAGE =
  'SELECT "thread_id", "run_id", "state", "requested_at", "request_index", "waiting_for", "prompt" FROM "approval" WHERE "tenant_id" = $1 AND "state" = $2 ORDER BY "requested_at" DESC, "thread_id" DESC, "run_id" DESC LIMIT 50';
const COUNT = 'SELECT COUNT(*) AS "n" FROM "approval" WHERE "tenant_id" = $1 AND "state" = $2';
const RUNS_PER_THREAD = 50;
const IN_FLIGHT = 64;
const SAMPLES = 100;
/** Seconds of building at most (see buildCapMs). */
const BUILD_CAP_S = 120;

export async function runApprovals(
  backend: BackendName,
  root: string,
  sizes: ReadsSizes,
): Promise<SectionResult> {
  if (!queryFields().has('approvals')) {
    console.log('approvals: not measured (Query.approvals not in schema)');
    return {
      rows: [row('approvals', 'not measured (Query.approvals not in schema)')],
      notes: [],
    };
  }
  const db = await openBenchDb(backend, root, 'approvals');
  try {
    const engine = createEngine({ databaseUrl: db.url });
    const threads = Math.ceil(sizes.approvals / RUNS_PER_THREAD);
    const started = performance.now();
    const capMs = buildCapMs(BUILD_CAP_S);
    let next = 0;
    let made = 0;
    let lastReport = started;
    await Promise.all(
      Array.from({ length: Math.min(IN_FLIGHT, threads) }, async () => {
        while (next < threads && performance.now() - started < capMs) {
          const t = next++;
          const threadId = `a-${t}`;
          must(await engine.createThread({ threadId }));
          const runs = Math.min(RUNS_PER_THREAD, sizes.approvals - t * RUNS_PER_THREAD);
          for (let r = 0; r < runs; r++) {
            const { runId } = must(await engine.startRun({ threadId, goal: `task ${t}/${r}` }));
            must(
              await engine.dispatch({
                runId,
                threadId,
                action: {
                  type: 'request_human_input',
                  payload: { pending_approval: { question: `may run ${r} of ${t} go on?` } },
                },
              }),
            );
            made++;
          }
          if (performance.now() - lastReport > 10_000) {
            lastReport = performance.now();
            log(
              `${backend}: ${fmt(made)} pending requests made (${fmt((lastReport - started) / 1000, 1)} s)`,
            );
          }
        }
      }),
    );
    const buildMs = performance.now() - started;
    const capped =
      made < sizes.approvals
        ? ` — CAPPED: only ${fmt(made)} of ${fmt(sizes.approvals)} requests were made within the ${fmt(capMs / 1000)} s build cap`
        : '';
    const note = `made ${fmt(made)} pending requests (startRun + request_human_input, ${RUNS_PER_THREAD} runs per thread, ${IN_FLIGHT} threads at once) in ${fmt(buildMs / 1000, 1)} s${capped}`;
    log(`${backend}: ${note}`);
    const { url, app } = await startApp(db.url, engine);
    const raw = await db.raw();
    const rawServerDb = await db.raw();
    const api: number[] = [];
    const rawMs: number[] = [];
    const rawHttp: number[] = [];
    let check = '';
    const readWith = async (on: typeof raw) => {
      const page = await on.query(PAGE, ['default', 'pending']);
      const [count] = await on.query(COUNT, ['default', 'pending']);
      return { page, count: Number(count!.n) };
    };
    // The answer's shape: prompts parsed (a JSON field), the rest as the driver reads it.
    const rawServer = await startRawServer(async () => {
      const { page, count } = await readWith(rawServerDb);
      return {
        approvals: {
          totalCount: count,
          edges: page.map((r) => ({
            node: {
              threadId: r.thread_id,
              runId: r.run_id,
              state: r.state,
              requestedAt: r.requested_at,
              requestIndex: Number(r.request_index),
              waitingFor: r.waiting_for,
              prompt: r.prompt === null ? null : JSON.parse(String(r.prompt)),
            },
          })),
        },
      };
    });
    try {
      const rawRead = () => readWith(raw);
      for (let i = 0; i < 5; i++) await gql(rawServer.url, APPROVALS);
      for (let i = 0; i < 5; i++) await gql(url, APPROVALS);
      const answer = (await gql(url, APPROVALS)).data.approvals as {
        totalCount: number;
        edges: Array<{ node: { threadId: string; runId: string } }>;
      };
      const expected = await rawRead();
      const key = (t: unknown, r: unknown) => `${String(t)}/${String(r)}`;
      const rawKeys = new Set(expected.page.map((x) => key(x.thread_id, x.run_id)));
      const shared = answer.edges.filter((e) => rawKeys.has(key(e.node.threadId, e.node.runId)));
      check =
        answer.totalCount === expected.count &&
        expected.count === made &&
        answer.edges.length === expected.page.length
          ? `totalCount ${fmt(answer.totalCount)} on both; ${shared.length} of ${answer.edges.length} rows of the page in the raw page too`
          : `DIFFERENT: totalCount ${answer.totalCount} vs ${expected.count} (made ${made}), ${answer.edges.length} vs ${expected.page.length} rows`;
      for (let s = 0; s < SAMPLES; s++) {
        api.push(await timed(() => gql(url, APPROVALS)));
        rawHttp.push(await timed(() => gql(rawServer.url, APPROVALS)));
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
          `approvals(PENDING, first: 50) + totalCount over ${fmt(made)} pending${capped === '' ? '' : ' (build CAPPED)'}, API p50 / p99 (n=${api.length})`,
          `${ms(p(api, 50))} / ${ms(p(api, 99))}`,
        ),
        row(
          'approvals, raw in process WHERE state = pending ORDER BY requested_at DESC LIMIT 50 + COUNT(*), p50 / p99',
          `${ms(p(rawMs, 50))} / ${ms(p(rawMs, 99))}`,
        ),
        ...rawRatioRows('approvals', api, rawHttp, rawMs),
        row(
          'approvals: the API and the raw read agree',
          check,
          'same',
          verdict(!check.startsWith('DIFFERENT')),
        ),
        row(`approvals: build (${fmt(made)} waiting runs)`, `${fmt(buildMs / 1000, 1)} s`),
      ],
      notes: [note],
    };
  } finally {
    await db.drop();
  }
}
