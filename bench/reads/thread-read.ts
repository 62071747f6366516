/**
 * Section 1: a never-cached `thread(id) { logLength nodeCount nodes(first: 50) { … } }` over
 * HTTP on threads of two sizes, against the same rows read with the raw driver in this run: behind a
 * bare node:http server with the same client (the verdict) and in process (context).
 *
 * "Never cached": the answering server's engine never loads the threads — the page is read from
 * the read models, not from a folded state — and the section checks that its state cache is
 * still empty after every sample. Both sides are warmed on another thread first (connections
 * open, statements prepared); then API and raw samples alternate, sizes alternate, over the
 * threads of each size in turn.
 */
import { performance } from 'node:perf_hooks';
import { createEngine } from '../../src/engine/index.js';
import { fmt } from '../harness.js';
import {
  type BackendName,
  buildThreads,
  gql,
  log,
  ms,
  openBenchDb,
  p,
  type RawDb,
  type ReadsSizes,
  rawRatioRows,
  row,
  type SectionResult,
  startApp,
  startRawServer,
  timed,
  verdict,
} from './common.js';

const THREAD = `query ($id: ID!) {
  thread(id: $id) { logLength nodeCount nodes(first: 50) { edges { node { id kind sequence payload } } } }
}`;

const THREAD_ROW = 'SELECT "id", "log_length" FROM "thread" WHERE "id" = $1';
const THREAD_ROW_COUNTED = 'SELECT "id", "log_length", "node_count" FROM "thread" WHERE "id" = $1';
const COUNT = 'SELECT COUNT(*) AS "n" FROM "node" WHERE "thread_id" = $1';
const FIRST_NODES =
  'SELECT "id", "kind", "sequence", "payload" FROM "node" WHERE "thread_id" = $1 ORDER BY "sequence" LIMIT 50';

/**
 * The raw read: the thread row and the first 50 node rows, with the node count from the row's
 * stored `node_count` (`stored`, when the schema keeps one) or from COUNT(*).
 */
async function rawRead(db: RawDb, id: string, stored: boolean) {
  const [thread] = await db.query(stored ? THREAD_ROW_COUNTED : THREAD_ROW, [id]);
  const nodeCount = stored
    ? Number(thread!.node_count)
    : Number((await db.query(COUNT, [id]))[0]!.n);
  const nodes = await db.query(FIRST_NODES, [id]);
  return { logLength: Number(thread!.log_length), nodeCount, nodes };
}

/** Whether the thread rows keep a node count that matches COUNT(*) (then the raw read uses it). */
async function storedCountHolds(db: RawDb, ids: readonly string[]): Promise<boolean> {
  try {
    for (const id of ids) {
      const [thread] = await db.query(THREAD_ROW_COUNTED, [id]);
      const [count] = await db.query(COUNT, [id]);
      if (Number(thread!.node_count) !== Number(count!.n)) return false;
    }
    return true;
  } catch {
    return false; // no such column
  }
}

/** A pause after the warm-up, so that what a fresh engine starts in the background is done. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 100));

interface Samples {
  api: number[];
  raw: number[];
  rawHttp: number[];
  rawCount: number[];
}

/** The raw read in the API's answer shape (payloads parsed, as the JSON scalar returns them). */
async function rawAnswer(db: RawDb, id: string, stored: boolean) {
  const read = await rawRead(db, id, stored);
  return {
    thread: {
      logLength: read.logLength,
      nodeCount: read.nodeCount,
      nodes: {
        edges: read.nodes.map((n) => ({
          node: {
            id: n.id,
            kind: n.kind,
            sequence: Number(n.sequence),
            payload: JSON.parse(String(n.payload)),
          },
        })),
      },
    },
  };
}

export async function runThreadRead(
  backend: BackendName,
  root: string,
  sizes: ReadsSizes,
): Promise<SectionResult> {
  const db = await openBenchDb(backend, root, 'thread');
  const rows: SectionResult['rows'] = [];
  const notes: string[] = [];
  try {
    const small = Array.from({ length: sizes.smallThreads }, (_, i) => `small-${i}`);
    const big = Array.from({ length: sizes.bigThreads }, (_, i) => `big-${i}`);
    const builder = createEngine({ databaseUrl: db.url });
    await buildThreads(builder, ['warm'], 100, 1, 'warm');
    const smallMs = await buildThreads(builder, small, sizes.smallThread, 2, 'small threads');
    const bigMs = await buildThreads(builder, big, sizes.bigThread, 2, 'big threads', 5_000);
    await builder.close();
    const built = (n: number, size: number, t: number) =>
      `${n} × ${fmt(size)} nodes in ${fmt(t / 1000, 1)} s (${fmt((n * size * 1000) / t)} nodes/s, appendNodes batches of 1,000)`;
    notes.push(`built ${built(small.length, sizes.smallThread, smallMs)}`);
    notes.push(`built ${built(big.length, sizes.bigThread, bigMs)}`);
    log(`${backend}: ${notes.join('; ')}`);
    const probe = await db.raw();
    const stored = await storedCountHolds(probe, [...small, ...big]);
    await probe.close();
    notes.push(
      stored
        ? "raw baseline: the node count is the thread row's stored node_count (it matches COUNT(*)); the COUNT(*) variant is shown as context"
        : 'raw baseline: the node count is COUNT(*) (the thread rows keep no node_count matching it in this tree)',
    );

    const samples: Record<'small' | 'big', Samples> = {
      small: { api: [], raw: [], rawHttp: [], rawCount: [] },
      big: { api: [], raw: [], rawHttp: [], rawCount: [] },
    };
    let checked = false;
    const mismatches: string[] = [];
    const started = performance.now();
    // One server whose engine never loads these threads: the page is answered from the read
    // models, so the engine's state cache stays empty (checked below) however often it is read.
    const engine = createEngine({ databaseUrl: db.url });
    const { url, app } = await startApp(db.url, engine);
    const raw = await db.raw();
    const rawServerDb = await db.raw();
    const rawServer = await startRawServer((v) => rawAnswer(rawServerDb, String(v.id), stored));
    let cachedAfter = -1;
    const floor: number[] = [];
    try {
      for (let w = 0; w < 20; w++) {
        await gql(url, THREAD, { id: 'warm' });
        await gql(rawServer.url, THREAD, { id: 'warm' });
        await rawRead(raw, 'warm', stored);
        if (stored) await rawRead(raw, 'warm', false);
      }
      await settle();
      for (let s = 0; s < sizes.threadSamples; s++) {
        for (const [size, ids] of [
          ['small', small],
          ['big', big],
        ] as const) {
          const id = ids[s % ids.length]!;
          if (size === 'small') floor.push(await timed(() => gql(url, '{ __typename }')));
          let answer: Record<string, unknown> = {};
          samples[size].api.push(
            await timed(async () => {
              answer = (await gql(url, THREAD, { id })).data;
            }),
          );
          let read: Awaited<ReturnType<typeof rawRead>> | undefined;
          samples[size].raw.push(
            await timed(async () => {
              read = await rawRead(raw, id, stored);
            }),
          );
          samples[size].rawHttp.push(await timed(() => gql(rawServer.url, THREAD, { id })));
          if (stored) samples[size].rawCount.push(await timed(() => rawRead(raw, id, false)));
          if (!checked) mismatches.push(...checkSame(answer, read!).map((m) => `${size}: ${m}`));
        }
        checked = true;
        if ((s + 1) % 50 === 0) {
          log(
            `${backend}: ${s + 1}/${sizes.threadSamples} samples of each size (${fmt((performance.now() - started) / 1000, 1)} s)`,
          );
        }
      }
      cachedAfter = engine.cacheStats().threads;
    } finally {
      await raw.close();
      await rawServer.close();
      await rawServerDb.close();
      await app.stop();
      await engine.close();
    }
    notes.push(
      `the answering engine held ${cachedAfter} thread states after every sample (nothing folded: the page comes from the read models)`,
    );
    rows.push(
      row(
        `{ __typename } on the same server, p50 / p99 (the cost of any request, n=${floor.length})`,
        `${ms(p(floor, 50))} / ${ms(p(floor, 99))}`,
        '(context)',
      ),
      row(
        'thread(id): thread states the answering engine loaded (folds) while serving the samples',
        String(cachedAfter),
        '0',
        verdict(cachedAfter === 0),
      ),
    );
    for (const [size, nodes] of [
      ['small', sizes.smallThread],
      ['big', sizes.bigThread],
    ] as const) {
      const t = samples[size];
      rows.push(
        row(
          `thread(id) ${fmt(nodes)} nodes, API p50 / p99 (over HTTP, engine holding no state, n=${t.api.length})`,
          `${ms(p(t.api, 50))} / ${ms(p(t.api, 99))}`,
        ),
        row(
          `thread(id) ${fmt(nodes)} nodes, raw in process p50 / p99 (thread row + ${stored ? 'stored count' : 'COUNT(*)'} + 50 nodes)`,
          `${ms(p(t.raw, 50))} / ${ms(p(t.raw, 99))}`,
        ),
        ...(stored
          ? [
              row(
                `thread(id) ${fmt(nodes)} nodes, raw p50 with COUNT(*) instead of the stored count`,
                `${ms(p(t.rawCount, 50))} (API reaches ${fmt((p(t.rawCount, 50) / p(t.api, 50)) * 100, 1)}% of it)`,
                '(context)',
              ),
            ]
          : []),
        ...rawRatioRows(`thread(id) ${fmt(nodes)} nodes`, t.api, t.rawHttp, t.raw),
      );
    }
    rows.push(
      row(
        'thread(id): the API answers what the raw read finds (first sample of each size)',
        mismatches.length === 0 ? 'same rows' : `DIFFERENT: ${mismatches.join('; ')}`,
        'same',
        verdict(mismatches.length === 0),
      ),
    );
    const growth = p(samples.big.api, 50) / p(samples.small.api, 50);
    rows.push(
      row(
        `thread(id) API p50, ${fmt(sizes.bigThread)} / ${fmt(sizes.smallThread)} nodes`,
        `${fmt(growth, 2)}×`,
        '≤ 2×',
        verdict(growth <= 2),
      ),
    );
    return { rows, notes };
  } finally {
    await db.drop();
  }
}

/** The API answered what the raw read found (first sample of each size). */
function checkSame(
  answer: Record<string, unknown>,
  read: Awaited<ReturnType<typeof rawRead>>,
): string[] {
  const thread = answer.thread as {
    logLength: number;
    nodeCount: number;
    nodes: { edges: Array<{ node: { id: string; sequence: number; payload: unknown } }> };
  };
  const edges = thread.nodes.edges;
  const problems: string[] = [];
  if (thread.logLength !== read.logLength)
    problems.push(`logLength ${thread.logLength} vs ${read.logLength}`);
  if (thread.nodeCount !== read.nodeCount)
    problems.push(`nodeCount ${thread.nodeCount} vs ${read.nodeCount}`);
  if (edges.length !== read.nodes.length)
    problems.push(`${edges.length} nodes vs ${read.nodes.length}`);
  const differing = edges.findIndex(
    (e, i) =>
      e.node.id !== read.nodes[i]?.id ||
      e.node.sequence !== Number(read.nodes[i]?.sequence) ||
      JSON.stringify(e.node.payload) !== JSON.stringify(JSON.parse(String(read.nodes[i]?.payload))),
  );
  if (differing >= 0) problems.push(`node ${differing} differs`);
  return problems;
}
