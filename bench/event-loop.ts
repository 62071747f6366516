/**
 * `npm run bench -- event-loop`: how long one large request holds the server's event loop. A
 * thread whose root has 20,000 children (so also a 20,000-node frontier and a 20,000-node state)
 * is read through the API list by list, and a 60,000-node AgentState is imported with
 * `importState`; while each request runs, a probe sends `{ __typename }` every 5 ms. Reported:
 * the longest event-loop stall (`monitorEventLoopDelay`, 1 ms resolution) and the slowest probe.
 * Target: no request stalls the loop for more than 100 ms. Each request runs a few times and the
 * run with the shortest stall is shown.
 *
 * The server runs in this process over a real loopback port, on a fresh SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createEngine } from '../src/engine/index.js';
import { buildApp } from '../src/server/app.js';
import { loadConfig } from '../src/server/config.js';
import { migrate } from '../src/store/migrate/index.js';
import { openThreadStore } from '../src/store/read-model/index.js';
import { fmt } from './harness.js';

const WIDE = Number(process.env.WEFT_BENCH_WIDE_NODES ?? 20_000);
const IMPORTED = Number(process.env.WEFT_BENCH_IMPORT_NODES ?? 60_000);
const BATCH = 1_000;
const PROBE_EVERY_MS = 5;
const REPEATS = Math.max(1, Number(process.env.WEFT_BENCH_EVENT_LOOP_ROUNDS ?? 3));

interface Server {
  url: string;
  engine: ReturnType<typeof createEngine>;
  close(): Promise<void>;
}

async function startServer(dir: string): Promise<Server> {
  const databaseUrl = `file:${join(dir, 'event-loop.db')}`;
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

async function gql(url: string, query: string, variables?: object): Promise<unknown> {
  const send = () =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
  // A kept-alive socket the server closed while the bench was between rows: send again once.
  const response = await send().catch(send);
  const json = (await response.json()) as { data?: unknown; errors?: unknown };
  if (json.errors !== undefined) throw new Error(JSON.stringify(json.errors).slice(0, 300));
  return json.data;
}

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
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-event-loop-'));
  const server = await startServer(dir);
  try {
    console.log(`\n## event loop: one large request beside a { __typename } probe\n`);
    const rootId = await seedWide(server.url);
    const state = await importedState(server);
    const rows: Array<[string, (round: number) => Promise<unknown>]> = [
      [
        `frontier of ${WIDE} nodes`,
        () => gql(server.url, '{ thread(id: "wide") { frontier { id sequence payload } } }'),
      ],
      [
        `children of a node with ${WIDE} children`,
        () =>
          gql(
            server.url,
            `{ causalNode(threadId: "wide", id: "${rootId}") { children { id sequence payload } } }`,
          ),
      ],
      [
        `state of a ${WIDE + 1}-node thread`,
        () => gql(server.url, '{ thread(id: "wide") { state } }'),
      ],
      [
        'frontierNodes(first: 1000) of the same frontier',
        () =>
          gql(
            server.url,
            '{ thread(id: "wide") { frontierNodes(first: 1000) { edges { node { id sequence payload } } } } }',
          ),
      ],
      [
        'childNodes(first: 1000) of the same node',
        () =>
          gql(
            server.url,
            `{ causalNode(threadId: "wide", id: "${rootId}") { childNodes(first: 1000) { edges { node { id sequence payload } } } } }`,
          ),
      ],
      [
        `state(atIndex: ${WIDE / BATCH}) of the same thread (a replay)`,
        () => gql(server.url, `{ thread(id: "wide") { state(atIndex: ${WIDE / BATCH}) } }`),
      ],
      [
        `importState of ${IMPORTED} nodes`,
        (round) =>
          gql(
            server.url,
            'mutation($t: ID!, $s: JSON!) { importState(input: { threadId: $t, state: $s }) { __typename } }',
            { t: `imported-${round}`, s: state },
          ).then((data) => {
            const typename = (data as { importState: { __typename: string } }).importState
              .__typename;
            if (typename !== 'ImportStateSuccess') throw new Error(typename);
          }),
      ],
    ];
    console.log(
      `Each request ${REPEATS} times; the run with the shortest longest stall is shown (on a shared machine, the others add the time the process was not scheduled).\n`,
    );
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
            refusal = ` (refused: ${(error as Error).message.slice(0, 60)}…)`;
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
    rmSync(dir, { recursive: true, force: true });
  }
}
