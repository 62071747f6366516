/**
 * `npm run bench -- event-loop [--backends=sqlite,postgres]`: how long one large request holds
 * the server's event loop. A thread whose root has 20,000 children (so also a 20,000-node
 * frontier and a 20,000-node state) is read through the API list by list, the state of a thread
 * of 20,000 nodes with 2 KB payloads is asked for, and a 60,000-node AgentState is imported with
 * `importState`; while each request runs, a probe sends `{ __typename }` every 5 ms. Reported:
 * the longest event-loop stall (`monitorEventLoopDelay`, 1 ms resolution) and the slowest probe.
 * Target: no request stalls the loop for more than 100 ms. Each request runs a few times and the
 * run with the shortest stall is shown.
 *
 * The server runs in this process over a real loopback port, on a fresh SQLite file and a fresh
 * Postgres database (skipped, with the reason, when Postgres does not answer). The bench's own
 * client work is kept off the measured time as far as it can be: request bodies are serialised
 * before the measurement starts, and answers are only parsed when they hold errors.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createEngine } from '../src/engine/index.js';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { migrate } from '../src/store/migrate/index.js';
import { openThreadStore } from '../src/store/read-model/index.js';
import { fmt } from './harness.js';
import {
  postgresUnavailable,
  type Scratch,
  scratchPostgres,
  scratchSqlite,
} from './peers/databases.js';

const WIDE = Number(process.env.WEFT_BENCH_WIDE_NODES ?? 20_000);
/** Characters of each payload of the heavy thread (20,000 × 2 KB: about 40 MB of state). */
const HEAVY_PAYLOAD = 2_000;
const IMPORTED = Number(process.env.WEFT_BENCH_IMPORT_NODES ?? 60_000);
const BATCH = 1_000;
const PROBE_EVERY_MS = 5;
const REPEATS = Math.max(1, Number(process.env.WEFT_BENCH_EVENT_LOOP_ROUNDS ?? 3));

interface Server {
  url: string;
  engine: ReturnType<typeof createEngine>;
  close(): Promise<void>;
}

async function startServer(databaseUrl: string): Promise<Server> {
  await migrate(databaseUrl);
  const store = openThreadStore(databaseUrl);
  const engine = createEngine({ store });
  const app = buildApp({
    config: loadConfig({
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      WEFT_REQUEST_LOG: 'off',
    }),
    engine,
  });
  const url = await app.start();
  return {
    url,
    engine,
    async close() {
      await app.stop(100);
      await engine.close();
    },
  };
}

/** A request body serialised ahead, so that measuring it does not measure the client's stringify. */
const body = (query: string, variables?: object) => JSON.stringify({ query, variables });

/** Posts `request` (a body); the answer's data, parsed only when `parse`; throws its errors. */
async function post(
  url: string,
  request: string | Buffer<ArrayBuffer>,
  parse = true,
): Promise<unknown> {
  const send = () =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: request });
  // A kept-alive socket the server closed while the bench was between rows: send again once.
  const response = await send().catch(send);
  const text = await response.text();
  if (!parse && !text.includes('"errors"')) return undefined;
  const json = JSON.parse(text) as { data?: unknown; errors?: unknown };
  if (json.errors !== undefined) throw new Error(JSON.stringify(json.errors).slice(0, 300));
  return json.data;
}

const gql = (url: string, query: string, variables?: object) => post(url, body(query, variables));

/** A root with WIDE children: each child names the root as its parent, so all are heads. */
async function seedWide(url: string): Promise<string> {
  await gql(url, 'mutation { createThread(input: { threadId: "wide" }) { __typename } }');
  const root = (await gql(
    url,
    'mutation { appendNodes(input: { threadId: "wide", nodes: [{ kind: SYSTEM, payload: { root: true } }] }) { ... on AppendNodesSuccess { nodes { id } } } }',
  )) as { appendNodes: { nodes: Array<{ id: string }> } };
  const rootId = root.appendNodes.nodes[0]!.id;
  for (let from = 0; from < WIDE; from += BATCH) {
    const nodes = Array.from({ length: Math.min(BATCH, WIDE - from) }, (_, k) => ({
      kind: 'ANSWER',
      payload: { i: from + k, text: `leaf ${from + k}` },
      parents: [rootId],
    }));
    await gql(
      url,
      'mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "wide", nodes: $n }) { __typename } }',
      { n: nodes },
    );
  }
  return rootId;
}

/** A thread `heavy` of WIDE nodes with payloads of HEAVY_PAYLOAD characters each. */
async function seedHeavy(server: Server): Promise<void> {
  await server.engine.createThread({ threadId: 'heavy' });
  for (let from = 0; from < WIDE; from += BATCH) {
    const nodes = Array.from({ length: Math.min(BATCH, WIDE - from) }, (_, k) => ({
      kind: 'answer' as const,
      payload: { i: from + k, text: `${from + k} `.padEnd(HEAVY_PAYLOAD, 'x') },
    }));
    const written = await server.engine.appendNodes({ threadId: 'heavy', nodes });
    if (!written.ok) throw new Error(written.error.message);
  }
}

/** An AgentState v1 of IMPORTED nodes in a chain, exported from a thread built in memory. */
async function importedState(server: Server): Promise<unknown> {
  await server.engine.createThread({ threadId: 'source' });
  for (let from = 0; from < IMPORTED; from += BATCH) {
    const nodes = Array.from({ length: Math.min(BATCH, IMPORTED - from) }, (_, k) => ({
      kind: 'answer' as const,
      payload: { i: from + k, text: `step ${from + k}` },
    }));
    const written = await server.engine.appendNodes({ threadId: 'source', nodes });
    if (!written.ok) throw new Error(written.error.message);
  }
  const state = await server.engine.stateAt('source');
  if (!state.ok) throw new Error(state.error.message);
  return state.value.agentState;
}

interface Stall {
  maxStallMs: number;
  slowestProbeMs: number;
  requestMs: number;
}

/** Runs `request` beside a probe and the loop-delay monitor; the request's own time too. */
async function measure(url: string, request: () => Promise<unknown>): Promise<Stall> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let slowestProbeMs = 0;
  let probing = true;
  const probes: Array<Promise<void>> = [];
  const timer = setInterval(() => {
    if (!probing) return;
    const sent = performance.now();
    probes.push(
      gql(url, '{ __typename }').then(() => {
        slowestProbeMs = Math.max(slowestProbeMs, performance.now() - sent);
      }),
    );
  }, PROBE_EVERY_MS);
  histogram.enable();
  const started = performance.now();
  await request();
  const requestMs = performance.now() - started;
  histogram.disable();
  probing = false;
  clearInterval(timer);
  await Promise.all(probes);
  return { maxStallMs: histogram.max / 1e6, slowestProbeMs, requestMs };
}

export async function runEventLoopBench(): Promise<void> {
  const option = process.argv.find((arg) => arg.startsWith('--backends='));
  const backends = (option?.slice('--backends='.length) ?? 'sqlite,postgres').split(',');
  console.log(`\n## event loop: one large request beside a { __typename } probe\n`);
  console.log(
    `Each request ${REPEATS} times; the run with the shortest longest stall is shown (on a shared machine, the others add the time the process was not scheduled).`,
  );
  for (const backend of backends) {
    if (backend === 'postgres') {
      const why = await postgresUnavailable();
      if (why !== undefined) {
        console.log(`\npostgres skipped: ${why}`);
        continue;
      }
    }
    const scratch: Scratch =
      backend === 'postgres' ? await scratchPostgres() : scratchSqlite('event-loop');
    const url = backend === 'postgres' ? scratch.location : `file:${scratch.location}`;
    try {
      await runRows(backend, url);
    } finally {
      await scratch.drop();
    }
  }
}

async function runRows(backend: string, databaseUrl: string): Promise<void> {
  const server = await startServer(databaseUrl);
  try {
    const rootId = await seedWide(server.url);
    await seedHeavy(server);
    const state = await importedState(server);
    // Encoded ahead too: the client's own encoding of 11 MB is not the server's stall.
    const imports = Array.from({ length: REPEATS }, (_, round) =>
      Buffer.from(
        body(
          'mutation($t: ID!, $s: JSON!) { importState(input: { threadId: $t, state: $s }) { __typename } }',
          { t: `imported-${round}`, s: state },
        ),
      ),
    );
    const read = (query: string) => {
      const request = body(query);
      return () => post(server.url, request, false);
    };
    const rows: Array<[string, (round: number) => Promise<unknown>]> = [
      [
        `frontier of ${WIDE} nodes`,
        read('{ thread(id: "wide") { frontier { id sequence payload } } }'),
      ],
      [
        `children of a node with ${WIDE} children`,
        read(
          `{ causalNode(threadId: "wide", id: "${rootId}") { children { id sequence payload } } }`,
        ),
      ],
      [`state of a ${WIDE + 1}-node thread`, read('{ thread(id: "wide") { state } }')],
      [
        `state of a ${WIDE}-node thread with 2 KB payloads`,
        read('{ thread(id: "heavy") { state } }'),
      ],
      [
        'frontierNodes(first: 1000) of the same frontier',
        read(
          '{ thread(id: "wide") { frontierNodes(first: 1000) { edges { node { id sequence payload } } } } }',
        ),
      ],
      [
        'childNodes(first: 1000) of the same node',
        read(
          `{ causalNode(threadId: "wide", id: "${rootId}") { childNodes(first: 1000) { edges { node { id sequence payload } } } } }`,
        ),
      ],
      [
        'nodes(first: 1000) of the 2 KB-payload thread',
        read(
          '{ thread(id: "heavy") { nodes(first: 1000) { edges { node { id sequence payload } } } } }',
        ),
      ],
      [
        `state(atIndex: ${WIDE / BATCH}) of the wide thread (a replay)`,
        read(`{ thread(id: "wide") { state(atIndex: ${WIDE / BATCH}) } }`),
      ],
      [
        `importState of ${IMPORTED} nodes`,
        (round) =>
          post(server.url, imports[round]!).then((data) => {
            const typename = (data as { importState: { __typename: string } }).importState
              .__typename;
            if (typename !== 'ImportStateSuccess') throw new Error(typename);
          }),
      ],
    ];
    console.log(`\n### ${backend}\n`);
    console.log('| request | answer | longest stall | slowest probe |');
    console.log('|---|---:|---:|---:|');
    for (const [label, request] of rows) {
      let best: Stall | undefined;
      let refusal = '';
      for (let round = 0; round < REPEATS; round++) {
        const stall = await measure(server.url, async () => {
          try {
            await request(round);
          } catch (error) {
            // A refusal is an answer too: the row shows how long it took.
            refusal = ` (refused: ${(error as Error).message.slice(0, 80)}…)`;
          }
        });
        if (best === undefined || stall.maxStallMs < best.maxStallMs) best = stall;
      }
      console.log(
        `| ${label}${refusal} | ${fmt(best!.requestMs)} ms | ${fmt(best!.maxStallMs)} ms | ${fmt(best!.slowestProbeMs)} ms |`,
      );
    }
  } finally {
    await server.close();
  }
}
