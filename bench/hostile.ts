/**
 * `npm run bench -- hostile`: does a hostile client cost normal traffic? For each attack of the
 * hostile-client review (items 1, 4, 6, 7 and 10) and of the search finding in docs/security.md,
 * a probe sends `{ __typename }` at a steady rate beside the attack, and its p99 is compared with
 * the same probe with no attack, measured just before (baseline, attack, baseline, attack …) in
 * this run. Target: ≤ 2× everywhere.
 *
 * The server and the probe run in this process over a real loopback port; each attack runs in a
 * child process, so that building hostile documents or holding hundreds of sockets costs the
 * attacker's CPU, not the event loop that serves the probe (what we measure is the server's
 * fairness, not the bench's). Attackers use a small fixed concurrency, every loop is bounded in
 * count and in time and stops by itself, and only 127.0.0.1 is targeted.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { createEngine } from '../src/engine/index.js';
import { createEventHub } from '../src/events/index.js';
import { buildApp } from '../src/server/app.js';
import { apiKeys, createAuthenticator } from '../src/server/auth/index.js';
import { loadConfig } from '../src/server/config.js';
import { migrate } from '../src/store/migrate/index.js';
import { createPrisma } from '../src/store/prisma/index.js';
import { openThreadStore } from '../src/store/read-model/index.js';
import { fmt, percentile } from './harness.js';
import { openBenchDb } from './reads/common.js';

const PHASE_MS = Number(process.env.WEFT_BENCH_HOSTILE_MS ?? 5000);
/** Baseline-then-attack rounds per attack; the median round is reported. */
const ROUNDS = Math.max(1, Number(process.env.WEFT_BENCH_HOSTILE_ROUNDS ?? 5));
/** Attacker requests in flight at once: about fairness, not about saturating the machine. */
const CONCURRENCY = 8;
/** The probe's pace: one request every PROBE_EVERY_MS, sent on schedule (open loop). */
const PROBE_EVERY_MS = 10;
/** Probe requests in flight at most; a stalled server cannot make the probe pile up forever. */
const PROBE_MAX_IN_FLIGHT = 64;
/** Upper bound on any one attacker loop, whatever its deadline says. */
const MAX_REQUESTS_PER_WORKER = 20_000;
const WS_FLOOD = 500;
const WS_FLOOD_MAX_OPENS = 5_000;
const SUBSCRIBE_ATTEMPTS = 2_000;
/** The pace of the appender whose commits fan out to the subscriptions (50 a second). */
const APPEND_EVERY_MS = Number(process.env.WEFT_BENCH_APPEND_EVERY_MS ?? 20);
const BIG_NODES = 1_200;

type AttackName =
  | 'search-bomb'
  | 'search-aliases'
  | 'search-bomb-postgres'
  | 'origin-host'
  | 'large-pages'
  | 'deep-nesting'
  | 'ws-flood'
  | 'ws-subscriptions'
  | 'keyless-surface';

interface AttackSpec {
  attack: AttackName;
  url: string;
  /** A valid key for attacks that need one to get past authentication. */
  key?: string;
  ms: number;
}

interface Attack {
  name: AttackName;
  /** The review item it checks: `6` of the hostile-client review, `finding 1` of security.md. */
  item: string;
  label: string;
  keyed: boolean;
  /** The server's database (SQLite unless said). */
  backend?: 'postgres';
}

/** Nodes of one word repeated to the longest indexed text (64 KiB) that the search attacks hit. */
const BOMB_NODES = 4;
const BOMB_TEXT = 'k '.repeat(32_767);
const PHRASE = `"${Array.from({ length: 10 }, () => 'k').join(' ')}"`;
/** The most searches one operation may hold (5,000 complexity each, of 50,000). */
const ALLOWED_SEARCHES = 9;

const ATTACKS: Attack[] = [
  {
    name: 'search-bomb',
    item: 'finding 1',
    label: `searchNodes "k" and a 10-word phrase over ${BOMB_NODES} nodes of "k " × 32,767`,
    keyed: true,
  },
  {
    name: 'search-aliases',
    item: 'finding 1',
    label: `30 aliased searchNodes (refused) / ${ALLOWED_SEARCHES} aliased (answered), same nodes`,
    keyed: true,
  },
  {
    name: 'search-bomb-postgres',
    item: 'finding 1',
    label: `Postgres: 10-word phrase over ${BOMB_NODES} nodes of "k " × 32,767`,
    keyed: true,
    backend: 'postgres',
  },
  {
    name: 'origin-host',
    item: '1',
    label: 'foreign Origin + rebinding Host (open mode, 403)',
    keyed: false,
  },
  { name: 'large-pages', item: '4', label: 'nodes(first: 1000) on 1,200 nodes', keyed: true },
  {
    name: 'deep-nesting',
    item: '6',
    label: 'list literal 2,400 deep + metadata 10,000 deep',
    keyed: true,
  },
  {
    name: 'ws-flood',
    item: '7',
    label: `${WS_FLOOD} sockets: no connection_init / init without key`,
    keyed: true,
  },
  {
    name: 'ws-subscriptions',
    item: '7',
    label: `one socket, ${fmt(SUBSCRIBE_ATTEMPTS)} subscribes + ${
      APPEND_EVERY_MS > 0 ? `${fmt(1000 / APPEND_EVERY_MS)} appends/s` : 'appends back to back'
    }`,
    keyed: true,
  },
  {
    name: 'keyless-surface',
    item: '10',
    label: 'keyless __typename / introspection / /metrics',
    keyed: true,
  },
];

// ---------------------------------------------------------------------------------------------
// The attacker (a child process).

interface Tally {
  byStatus: Record<string, number>;
  /** Sockets still open when the attack ended (the WebSocket flood). */
  held?: number;
}

const count = (tally: Tally, status: string | number) => {
  tally.byStatus[status] = (tally.byStatus[status] ?? 0) + 1;
};

/** One HTTP request with exactly these headers (fetch does not let us set Host). */
function send(
  url: string,
  agent: Agent,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(options.body === undefined
            ? {}
            : { 'content-length': Buffer.byteLength(options.body) }),
          ...options.headers,
        },
      },
      (res) => {
        // The status and what the answer calls itself (an error code or a result type), so the
        // tally shows the attack was refused the way it should be.
        let head = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (head.length < 4096) head += chunk;
        });
        res.on('end', () => {
          const said = /"code":"([A-Z_]+)"/.exec(head) ?? /"__typename":"(\w+)"/.exec(head);
          resolve(`${res.statusCode ?? 0}${said === null ? '' : ` ${said[1]}`}`);
        });
        res.on('error', () => resolve('response error'));
      },
    );
    req.on('error', () => resolve('request error'));
    req.end(options.body);
  });
}

/** CONCURRENCY workers, each sending `next(i)` back to back until the deadline. */
async function hammer(
  spec: AttackSpec,
  next: (i: number) => {
    path?: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
  },
): Promise<Tally> {
  const tally: Tally = { byStatus: {} };
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const deadline = performance.now() + spec.ms;
  const origin = new URL(spec.url).origin;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = 0; i < MAX_REQUESTS_PER_WORKER && performance.now() < deadline; i++) {
        const r = next(i * CONCURRENCY + worker);
        count(tally, await send(r.path === undefined ? spec.url : origin + r.path, agent, r));
      }
    }),
  );
  agent.destroy();
  return tally;
}

const listLiteral = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
/** JSON text `{"a":{"a":…1}}`, `depth` objects deep (JSON.stringify itself would overflow). */
const nestedJson = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

async function attackOriginHost(spec: AttackSpec): Promise<Tally> {
  const port = new URL(spec.url).port;
  const write = JSON.stringify({
    query: 'mutation { createThread(input: { threadId: "stolen" }) { __typename } }',
  });
  return hammer(spec, (i) =>
    i % 2 === 0
      ? { headers: { origin: 'https://evil.example' }, body: write }
      : {
          headers: { host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
          body: write,
        },
  );
}

async function attackLargePages(spec: AttackSpec): Promise<Tally> {
  const body = JSON.stringify({
    query:
      '{ thread(id: "big") { nodes(first: 1000) { edges { node { sequence payload parents { sequence } } } } } }',
  });
  const headers = { authorization: `Bearer ${spec.key}` };
  return hammer(spec, () => ({ headers, body }));
}

async function attackDeepNesting(spec: AttackSpec): Promise<Tally> {
  // Built once: the attack is what the server does with them, not our string building.
  const list = JSON.stringify({
    query: `{ threads(first: ${listLiteral(2_400)}) { edges { cursor } } }`,
  });
  const metadata = `{"query":${JSON.stringify(
    'mutation($m: JSON) { createThread(input: { metadata: $m }) { __typename } }',
  )},"variables":{"m":${nestedJson(10_000)}}}`;
  const headers = { authorization: `Bearer ${spec.key}` };
  return hammer(spec, (i) => ({ headers, body: i % 2 === 0 ? list : metadata }));
}

/** Keeps WS_FLOOD sockets open that never authenticate; reopens what the server closes. */
async function attackWsFlood(spec: AttackSpec): Promise<Tally> {
  const tally: Tally = { byStatus: {} };
  const wsUrl = spec.url.replace(/^http/, 'ws');
  const open = new Set<WebSocket>();
  const deadline = performance.now() + spec.ms;
  let opens = 0;
  const openOne = (i: number): Promise<void> =>
    new Promise((resolve) => {
      opens++;
      const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
      open.add(ws);
      ws.on('open', () => {
        // Half never say connection_init; half say it without a key.
        if (i % 2 === 1) ws.send(JSON.stringify({ type: 'connection_init', payload: {} }));
        resolve();
      });
      ws.on('unexpected-response', (_req, res) => {
        count(tally, res.statusCode ?? 0);
        res.resume();
        open.delete(ws);
        resolve();
      });
      ws.on('close', (code) => {
        count(tally, `close ${code}`);
        open.delete(ws);
        resolve();
      });
      ws.on('error', () => resolve());
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = worker; opens < WS_FLOOD_MAX_OPENS && performance.now() < deadline; i++) {
        if (open.size >= WS_FLOOD) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        await openOne(i);
      }
    }),
  );
  tally.held = open.size;
  for (const ws of open) ws.terminate();
  tally.byStatus['sockets opened'] = opens;
  return tally;
}

/** One authenticated socket asks for SUBSCRIBE_ATTEMPTS subscriptions on one thread while
 * appends to that thread fan out to every subscription the server accepted. */
async function attackWsSubscriptions(spec: AttackSpec): Promise<Tally> {
  const tally: Tally = { byStatus: {} };
  const ws = new WebSocket(spec.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  await new Promise<void>((resolve, reject) => {
    ws.on('open', () => {
      ws.send(
        JSON.stringify({
          type: 'connection_init',
          payload: { authorization: `Bearer ${spec.key}` },
        }),
      );
    });
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; payload?: unknown };
      if (message.type === 'connection_ack') resolve();
      else if (message.type === 'error') count(tally, 'refused');
      else if (message.type === 'next') count(tally, 'event');
    });
    ws.on('close', (code) => reject(new Error(`subscription socket closed: ${code}`)));
  });
  for (let i = 0; i < SUBSCRIBE_ATTEMPTS; i++) {
    ws.send(
      JSON.stringify({
        id: `s${i}`,
        type: 'subscribe',
        payload: { query: 'subscription { threadEvents(threadId: "subs") { index } }' },
      }),
    );
  }
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const deadline = performance.now() + spec.ms;
  const append = JSON.stringify({
    query:
      'mutation { appendNodes(input: { threadId: "subs", nodes: [{ kind: INFERENCE, payload: { x: 1 } }] }) { __typename } }',
  });
  // One appender at a steady pace (a busy agent): the cost measured is the fan-out of each
  // append to every subscription the socket holds. Appends sent back to back would load the
  // server by themselves, with or without the subscriptions.
  const started = performance.now();
  for (let i = 0; i < MAX_REQUESTS_PER_WORKER && performance.now() < deadline; i++) {
    const wait = started + i * APPEND_EVERY_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    count(
      tally,
      await send(spec.url, agent, {
        headers: { authorization: `Bearer ${spec.key}` },
        body: append,
      }),
    );
  }
  agent.destroy();
  ws.terminate();
  return tally;
}

async function attackKeylessSurface(spec: AttackSpec): Promise<Tally> {
  const typename = JSON.stringify({ query: '{ __typename }' });
  const introspection = JSON.stringify({
    query: '{ __schema { types { name fields { name type { name kind ofType { name } } } } } }',
  });
  return hammer(spec, (i) =>
    i % 3 === 0
      ? { body: typename }
      : i % 3 === 1
        ? { body: introspection }
        : { path: '/metrics', method: 'GET' },
  );
}

const searchBody = (q: string, aliases = 1) =>
  JSON.stringify({
    query: `query($q: String!) { ${Array.from(
      { length: aliases },
      (_, i) => `s${i}: searchNodes(query: $q) { edges { node { score snippet { text } } } }`,
    ).join(' ')} }`,
    variables: { q },
  });

async function attackSearchBomb(spec: AttackSpec): Promise<Tally> {
  const word = searchBody('k');
  const phrase = searchBody(PHRASE);
  const headers = { authorization: `Bearer ${spec.key}` };
  return hammer(spec, (i) => ({ headers, body: i % 2 === 0 ? word : phrase }));
}

async function attackSearchAliases(spec: AttackSpec): Promise<Tally> {
  const refused = searchBody('k', 30);
  const allowed = searchBody('k', ALLOWED_SEARCHES);
  const headers = { authorization: `Bearer ${spec.key}` };
  return hammer(spec, (i) => ({ headers, body: i % 2 === 0 ? refused : allowed }));
}

async function attackSearchBombPostgres(spec: AttackSpec): Promise<Tally> {
  const phrase = searchBody(PHRASE);
  const headers = { authorization: `Bearer ${spec.key}` };
  return hammer(spec, () => ({ headers, body: phrase }));
}

const ATTACKERS: Record<AttackName, (spec: AttackSpec) => Promise<Tally>> = {
  'search-bomb': attackSearchBomb,
  'search-aliases': attackSearchAliases,
  'search-bomb-postgres': attackSearchBombPostgres,
  'origin-host': attackOriginHost,
  'large-pages': attackLargePages,
  'deep-nesting': attackDeepNesting,
  'ws-flood': attackWsFlood,
  'ws-subscriptions': attackWsSubscriptions,
  'keyless-surface': attackKeylessSurface,
};

async function attackerMain(spec: AttackSpec): Promise<void> {
  // The parent starts its probe when it reads this line.
  process.stdout.write('started\n');
  const tally = await ATTACKERS[spec.attack](spec);
  process.stdout.write(`${JSON.stringify(tally)}\n`);
}

// ---------------------------------------------------------------------------------------------
// The probe and the server (this process).

interface Probe {
  requests: number;
  failures: number;
  /** Requests not sent because PROBE_MAX_IN_FLIGHT were still unanswered. */
  skipped: number;
  p50: number;
  p99: number;
}

/** `{ __typename }` every PROBE_EVERY_MS for `ms`, on schedule whatever the answers take. */
async function probe(url: string, key: string | undefined, ms: number): Promise<Probe> {
  const body = JSON.stringify({ query: '{ __typename }' });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
  };
  const latencies: number[] = [];
  const pending = new Set<Promise<void>>();
  let failures = 0;
  let skipped = 0;
  const started = performance.now();
  for (let i = 0; i < Math.ceil(ms / PROBE_EVERY_MS); i++) {
    const due = started + i * PROBE_EVERY_MS;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (pending.size >= PROBE_MAX_IN_FLIGHT) {
      // The server is that far behind: the p99 of what was answered understates it.
      skipped++;
      continue;
    }
    const t0 = performance.now();
    const one = fetch(url, { method: 'POST', headers, body })
      .then(async (response) => {
        const text = await response.text();
        latencies.push(performance.now() - t0);
        if (response.status !== 200 || !text.includes('"__typename"')) failures++;
      })
      .catch(() => {
        failures++;
      })
      .finally(() => pending.delete(one));
    pending.add(one);
  }
  await Promise.all(pending);
  return {
    requests: latencies.length,
    failures,
    skipped,
    p50: latencies.length > 0 ? percentile(latencies, 50) : Number.NaN,
    p99: latencies.length > 0 ? percentile(latencies, 99) : Number.NaN,
  };
}

/** Starts the attack in a child process; resolves once it runs, with its tally to come. */
async function startAttacker(spec: AttackSpec): Promise<{ done: Promise<Tally | undefined> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SELF], {
    env: { ...process.env, WEFT_HOSTILE_ATTACK: JSON.stringify(spec) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes('started\n')) markStarted();
  });
  // Should the attacker hang, it is ended by its own id well after its deadline.
  const guard = setTimeout(() => child.kill('SIGKILL'), spec.ms + 30_000);
  const done = new Promise<Tally | undefined>((resolve) => {
    child.on('exit', () => {
      clearTimeout(guard);
      markStarted();
      const last = out.trim().split('\n').at(-1);
      try {
        resolve(last === undefined || last === 'started' ? undefined : JSON.parse(last));
      } catch {
        resolve(undefined);
      }
    });
  });
  await started;
  return { done };
}

const SELF = fileURLToPath(import.meta.url);

interface Server {
  url: string;
  admin?: string;
  reader?: string;
  close(): Promise<void>;
}

export async function startServer(
  dir: string,
  mode: 'open' | 'keys',
  databaseUrl = `file:${join(dir, `${mode}.db`)}`,
): Promise<Server> {
  await migrate(databaseUrl);
  const store = openThreadStore(databaseUrl);
  const hub = createEventHub({ store });
  await hub.ready;
  const engine = createEngine({ store, publisher: hub });
  const db = createPrisma(databaseUrl);
  const keys = apiKeys(db);
  const auth = createAuthenticator({ keys, mode, openCheckMs: 0, revalidateMs: 1000 });
  const app = buildApp({
    // The server's defaults (limits included), but for the JSON request log, which would drown
    // the table.
    config: loadConfig({
      DATABASE_URL: databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      WEFT_REQUEST_LOG: process.env.WEFT_REQUEST_LOG ?? 'off',
    }),
    engine,
    auth,
    extendContext: () => ({ events: hub }),
  });
  const url = await app.start();
  const server: Server = {
    url,
    async close() {
      await app.stop(100);
      await hub.close();
      await engine.close();
      await db.prisma.$disconnect();
    },
  };
  if (mode === 'keys') {
    server.admin = (await keys.create({ tenant: 'acme', scopes: ['admin'] as never })).key;
    server.reader = (await keys.create({ tenant: 'acme', scopes: ['read'] as never })).key;
  }
  return server;
}

async function gql(url: string, key: string | undefined, query: string, variables?: object) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify({ query, variables }),
  });
  const json = (await response.json()) as { data?: Record<string, { __typename: string }> };
  const payload = Object.values(json.data ?? {})[0];
  if (payload?.__typename?.endsWith('Success') !== true) {
    throw new Error(`setup failed: ${JSON.stringify(json).slice(0, 300)}`);
  }
}

/** The threads the attacks read and subscribe to, created through the API with the admin key. */
export async function seed(server: Server): Promise<void> {
  const { url, admin } = server;
  await gql(url, admin, 'mutation { createThread(input: { threadId: "big" }) { __typename } }');
  await gql(url, admin, 'mutation { createThread(input: { threadId: "subs" }) { __typename } }');
  const BATCH = 100;
  for (let from = 0; from < BIG_NODES; from += BATCH) {
    const nodes = Array.from({ length: BATCH }, (_, k) => ({
      kind: 'ANSWER',
      payload: { i: from + k },
      resourceKey: `k${(from + k) % 600}`,
    }));
    await gql(
      url,
      admin,
      'mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "big", nodes: $n }) { __typename } }',
      { n: nodes },
    );
  }
}

/** The nodes the search attacks hit: BOMB_NODES of one repeated word, and a few ordinary ones. */
export async function seedSearch(server: Server): Promise<void> {
  const { url, admin } = server;
  await gql(url, admin, 'mutation { createThread(input: { threadId: "bombs" }) { __typename } }');
  const nodes = [
    ...Array.from({ length: BOMB_NODES }, () => ({ kind: 'ANSWER', payload: { text: BOMB_TEXT } })),
    ...Array.from({ length: 20 }, (_, i) => ({
      kind: 'ANSWER',
      payload: { text: `k number ${i}` },
    })),
  ];
  await gql(
    url,
    admin,
    'mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "bombs", nodes: $n }) { __typename } }',
    { n: nodes },
  );
}

const summarize = (tally: Tally | undefined): string =>
  tally === undefined
    ? 'attacker gave no tally'
    : `${Object.entries(tally.byStatus)
        .map(([status, n]) => `${status}: ${fmt(n)}`)
        .join(', ')}${tally.held === undefined ? '' : `; still open at the end: ${tally.held}`}`;

export async function runHostileBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-hostile-'));
  const open = await startServer(dir, 'open');
  const keyed = await startServer(dir, 'keys');
  // WEFT_BENCH_HOSTILE_ONLY=large-pages,deep-nesting runs some attacks only (all by default).
  const only = process.env.WEFT_BENCH_HOSTILE_ONLY?.split(',').map((s) => s.trim());
  const selected = ATTACKS.filter((a) => only === undefined || only.includes(a.name));
  // A keyed server on a fresh Postgres database, for the attacks that name it.
  const pgDb = selected.some((a) => a.backend === 'postgres')
    ? await openBenchDb('postgres', dir, 'hostile')
    : undefined;
  const pgServer = pgDb === undefined ? undefined : await startServer(dir, 'keys', pgDb.url);
  try {
    await seed(keyed);
    await seedSearch(keyed);
    if (pgServer !== undefined) await seedSearch(pgServer);
    // Warm-up: JIT and connection pools on both servers.
    await probe(open.url, undefined, 1000);
    await probe(keyed.url, keyed.reader, 1000);
    if (pgServer !== undefined) await probe(pgServer.url, pgServer.reader, 1000);
    const rows: string[][] = [];
    const tallies: string[] = [];
    for (const attack of selected) {
      const server =
        attack.backend === 'postgres' && pgServer !== undefined
          ? pgServer
          : attack.keyed
            ? keyed
            : open;
      const probeKey = attack.keyed ? server.reader : undefined;
      const spec: AttackSpec = { attack: attack.name, url: server.url, ms: PHASE_MS };
      if (attack.keyed && attack.name !== 'keyless-surface' && attack.name !== 'ws-flood') {
        spec.key = server.admin!;
      }
      // Baseline, attack, baseline, attack …: the round with the median ratio is reported, so
      // that one stray pause of a shared machine decides no result either way.
      const rounds: Array<{ baseline: Probe; under: Probe; tally: Tally | undefined }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const baseline = await probe(server.url, probeKey, PHASE_MS);
        const attacker = await startAttacker(spec);
        const under = await probe(server.url, probeKey, PHASE_MS);
        rounds.push({ baseline, under, tally: await attacker.done });
      }
      const ratioOf = (r: (typeof rounds)[number]) => r.under.p99 / r.baseline.p99;
      const sorted = [...rounds].sort((a, b) => ratioOf(a) - ratioOf(b));
      const { baseline, under, tally } = sorted[Math.floor((sorted.length - 1) / 2)]!;
      const ratio = under.p99 / baseline.p99;
      const lost = rounds.reduce((n, r) => n + r.under.failures + r.under.skipped, 0);
      rows.push([
        `${attack.item}`,
        attack.label,
        `${fmt(under.p50, 1)} / ${fmt(under.p99, 1)} ms`,
        `${fmt(baseline.p99, 1)} ms`,
        `${fmt(ratio, 2)}×`,
        rounds.map((r) => `${fmt(ratioOf(r), 2)}×`).join(' '),
        '≤ 2×',
        ratio <= 2 && lost === 0 ? 'ok' : 'MISSED',
        `${under.failures} / ${under.skipped}`,
      ]);
      tallies.push(`  ${attack.name}: ${summarize(tally)}`);
      tallies.push(
        `    every round, probe p99 baseline → under attack: ${rounds.map((r) => `${fmt(r.baseline.p99, 1)} → ${fmt(r.under.p99, 1)} ms`).join(', ')}`,
      );
    }
    const head = [
      'review item',
      'attack',
      'probe p50 / p99 under attack',
      'baseline p99',
      'ratio',
      'every round',
      'target',
      'result',
      'probe failed / skipped',
    ];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) =>
      `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
    console.log(
      `\nHostile load (SQLite, attackers at concurrency ${CONCURRENCY} in a child process, ` +
        `probe { __typename } every ${PROBE_EVERY_MS} ms, ${PHASE_MS / 1000} s per phase, ` +
        `${ROUNDS} rounds of baseline then attack, the median round shown)\n`,
    );
    console.log(line(head));
    console.log(line(widths.map((w) => '-'.repeat(w))));
    for (const row of rows) console.log(line(row));
    console.log('\nWhat the attackers were answered:');
    for (const t of tallies) console.log(t);
    console.log('');
  } finally {
    await open.close();
    await keyed.close();
    await pgServer?.close();
    await pgDb?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run as the attacker child: started by runHostileBench with its spec in the environment.
if (process.env.WEFT_HOSTILE_ATTACK !== undefined && process.argv[1] === SELF) {
  await attackerMain(JSON.parse(process.env.WEFT_HOSTILE_ATTACK) as AttackSpec);
}
