/**
 * Store benchmarks. Prints, measured in this run, each against a
 * baseline measured in the same run:
 * (a) 1,000-node batches appended through the engine on SQLite vs raw better-sqlite3 batched
 *     inserts of the same rows into the same tables (target ≥ 30%);
 * (b) 64 concurrent single-node appends on SQLite (synchronous=FULL): group commit vs one
 *     transaction per append (target ≥ 5×);
 * (c) the same batches through the engine on Postgres vs raw `pg` multi-row inserts (target ≥ 25%;
 *     skipped, with the reason, when Postgres does not answer);
 * (d) `stateAt` at random points of a 100,000-entry thread: p50 (target ≤ 50 ms);
 * (e) database bytes per node vs the canonical payload size (target ≤ 2× + 150 B; issue 33).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { canonicalJson } from '../src/core/canonical.js';
import type { JsonValue } from '../src/core/json.js';
import { createEngine, type Engine, projectLog } from '../src/engine/index.js';
import { DEFAULT_SNAPSHOT_POLICY } from '../src/engine/snapshots.js';
import { migrate } from '../src/store/migrate/index.js';
import { SQLITE_PRAGMAS } from '../src/store/prisma/index.js';
import { openThreadStore, type ThreadStoreOptions } from '../src/store/read-model/index.js';
import { buildLogForProfile } from './core.js';
import { fmt, percentile, printTable, type Row } from './harness.js';

const BATCH = 1_000;
const BATCHES = 10;
const CONCURRENT = 64;
const CONCURRENT_ROUNDS = 20;
const GROUP_TRIALS = 5;
/** WEFT_BENCH_LONG_THREAD: a smaller (d) thread while developing; the target is for 100,000. */
const LONG_THREAD = Number(process.env.WEFT_BENCH_LONG_THREAD ?? 100_000);
const STATE_AT_SAMPLES = 21;
const POSTGRES_URL =
  process.env.WEFT_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const progress = (message: string) => console.log(`  [store] ${message}`);

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const WORDS = ['agent', 'file', 'read', 'config', 'plan', 'result', 'tool', 'call', 'user', 'goal'];

/** ~250 B canonical payloads, deterministic. */
function payloads(count: number, seed: number): JsonValue[] {
  const rand = lcg(seed);
  return Array.from({ length: count }, (_, i) => ({
    step: i,
    text: Array.from({ length: 28 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' '),
    ok: rand() > 0.5,
    tags: ['bench', `b${seed}`],
  }));
}

const KINDS = ['inference', 'tool_call', 'tool_result', 'answer'] as const;

const nodesOf = (batch: JsonValue[]) =>
  batch.map((payload, i) => ({ kind: KINDS[i % KINDS.length]!, payload }));

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

const engineOn = (url: string, storeOptions: ThreadStoreOptions = {}): Engine =>
  createEngine({ store: openThreadStore(url, storeOptions) });

/**
 * Appends BATCHES batches of BATCH nodes (after one warm-up batch) and returns nodes/s and the
 * time of each measured batch.
 */
async function engineBatches(
  engine: Engine,
  label: string,
): Promise<{ threadId: string; nodesPerSec: number; batchMs: number[] }> {
  const { threadId } = must(await engine.createThread({}));
  must(await engine.appendNodes({ threadId, nodes: nodesOf(payloads(BATCH, 999)) }));
  const batchMs: number[] = [];
  for (let b = 0; b < BATCHES; b++) {
    const nodes = nodesOf(payloads(BATCH, b + 1));
    const start = performance.now();
    must(await engine.appendNodes({ threadId, nodes }));
    batchMs.push(performance.now() - start);
  }
  const ms = batchMs.reduce((a, b) => a + b, 0);
  progress(`${label}: ${BATCHES} × ${fmt(BATCH)} nodes through the engine in ${fmt(ms)} ms`);
  return { threadId, nodesPerSec: (BATCHES * BATCH * 1000) / ms, batchMs };
}

/**
 * The rows the engine stored for log entries [1, 2 + BATCHES) of a thread, one group per entry:
 * the warm-up batch (written untimed by the baselines: later nodes point at its nodes) and the
 * measured ones.
 */
interface BatchRows {
  entry: unknown[];
  nodes: unknown[][];
  parents: unknown[][];
  thread: unknown[];
}

const ENTRY_COLUMNS = [
  'thread_id',
  'log_index',
  'entry_id',
  'type',
  'recorded_at',
  'entry',
  'packed',
];
const NODE_COLUMNS = [
  'thread_id',
  'id',
  'sequence',
  'kind',
  'payload',
  'created_at',
  'resource_key',
  'log_index',
  'run_id',
  'taint',
  'usage',
  'is_frontier',
  'is_current',
];
const PARENT_COLUMNS = ['thread_id', 'child_seq', 'parent_seq', 'position'];
const quoted = (columns: string[]) => columns.map((c) => `"${c}"`).join(', ');

type Select = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

async function storedBatches(select: Select, threadId: string): Promise<BatchRows[]> {
  const out: BatchRows[] = [];
  const [thread] = await select(
    'SELECT "log_length", "state_hash", "frontier", "updated_at" FROM "thread" WHERE "id" = $1',
    [threadId],
  );
  for (let index = 1; index < 2 + BATCHES; index++) {
    const [entry] = await select(
      `SELECT ${quoted(ENTRY_COLUMNS)} FROM "log_entry" WHERE "thread_id" = $1 AND "log_index" = $2`,
      [threadId, index],
    );
    const nodes = await select(
      `SELECT ${quoted(NODE_COLUMNS)} FROM "node" WHERE "thread_id" = $1 AND "log_index" = $2 ORDER BY "sequence"`,
      [threadId, index],
    );
    const sequences = new Set(nodes.map((n) => Number(n.sequence)));
    const parents = (
      await select(`SELECT ${quoted(PARENT_COLUMNS)} FROM "node_parent" WHERE "thread_id" = $1`, [
        threadId,
      ])
    ).filter((p) => sequences.has(Number(p.child_seq)));
    out.push({
      entry: ENTRY_COLUMNS.map((c) => entry![c]),
      nodes: nodes.map((n) => NODE_COLUMNS.map((c) => n[c])),
      parents: parents.map((p) => PARENT_COLUMNS.map((c) => p[c])),
      thread: [thread!.log_length, thread!.state_hash, thread!.frontier, thread!.updated_at],
    });
  }
  return out;
}

/** Multi-row INSERT text for `rows` rows: `?` placeholders (SQLite) or `$n` (Postgres). */
function insertText(table: string, columns: string[], rows: number, dollar: boolean): string {
  let n = 0;
  const tuple = () => `(${columns.map(() => (dollar ? `$${++n}` : '?')).join(', ')})`;
  return `INSERT INTO "${table}" (${quoted(columns)}) VALUES ${Array.from({ length: rows }, tuple).join(', ')}`;
}

const CHUNK = 500;

/**
 * (a) baseline: the same rows into a fresh database with raw better-sqlite3, one transaction per
 * batch (prepared statements reused). Returns the time of each batch after the first.
 */
function rawSqlite(path: string, threadId: string, batches: BatchRows[]): number[] {
  const db = new Database(path);
  for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO "thread" ("id", "created_at", "updated_at", "metadata", "node_types", "allow_dynamic_node_types", "log_length", "state_hash", "frontier") VALUES (?, ?, ?, 'null', '[]', 0, 2, '', '[]')`,
  ).run(threadId, now, now);
  const statements = new Map<string, Database.Statement>();
  const statement = (table: string, columns: string[], rows: number) => {
    const key = `${table}:${rows}`;
    let s = statements.get(key);
    if (s === undefined) {
      s = db.prepare(insertText(table, columns, rows, false));
      statements.set(key, s);
    }
    return s;
  };
  const insert = (table: string, columns: string[], rows: unknown[][]) => {
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      statement(table, columns, chunk.length).run(...chunk.flat());
    }
  };
  const update = db.prepare(
    `UPDATE "thread" SET "log_length" = ?, "state_hash" = ?, "frontier" = ?, "updated_at" = ? WHERE "id" = ?`,
  );
  const writeBatch = db.transaction((b: BatchRows) => {
    insert('log_entry', ENTRY_COLUMNS, [b.entry]);
    insert('node', NODE_COLUMNS, b.nodes);
    insert('node_parent', PARENT_COLUMNS, b.parents);
    update.run(...b.thread, threadId);
  });
  writeBatch(batches[0]!);
  const batchMs: number[] = [];
  for (const b of batches.slice(1)) {
    const start = performance.now();
    writeBatch(b);
    batchMs.push(performance.now() - start);
  }
  db.close();
  return batchMs;
}

/** (c) baseline: the same rows with raw `pg` multi-row inserts, one transaction per batch. */
async function rawPostgres(url: string, threadId: string, batches: BatchRows[]): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO "thread" ("id", "created_at", "updated_at", "metadata", "node_types", "allow_dynamic_node_types", "log_length", "state_hash", "frontier") VALUES ($1, now(), now(), 'null', '[]', false, 2, '', '[]')`,
      [threadId],
    );
    const insert = async (table: string, columns: string[], rows: unknown[][]) => {
      for (let i = 0; i < rows.length; i += CHUNK) {
        const chunk = rows.slice(i, i + CHUNK);
        await client.query(insertText(table, columns, chunk.length, true), chunk.flat());
      }
    };
    let start = performance.now();
    for (const [i, b] of batches.entries()) {
      if (i === 1) start = performance.now();
      await client.query('BEGIN');
      await insert('log_entry', ENTRY_COLUMNS, [b.entry]);
      await insert('node', NODE_COLUMNS, b.nodes);
      await insert('node_parent', PARENT_COLUMNS, b.parents);
      await client.query(
        `UPDATE "thread" SET "log_length" = $1, "state_hash" = $2, "frontier" = $3, "updated_at" = $4 WHERE "id" = $5`,
        [...b.thread, threadId],
      );
      await client.query('COMMIT');
    }
    return ((batches.length - 1) * BATCH * 1000) / (performance.now() - start);
  } finally {
    await client.end();
  }
}

const ratioRow = (measure: string, ratio: number, target: number): Row => ({
  measure,
  value: `${fmt(ratio * 100, 1)}%`,
  target: `≥ ${fmt(target * 100)}%`,
  verdict: ratio >= target ? 'ok' : 'MISSED',
});

/**
 * Rounds of figure (a), engine and raw interleaved (engine, raw, engine, raw, …) so that a load
 * change on the machine hits both sides alike; the figure compares the median batch times over
 * all rounds.
 */
const SQLITE_ROUNDS = 5;

const median = (values: number[]) => percentile(values, 50);

async function benchSqliteBatches(root: string, rows: Row[]): Promise<string> {
  const engineMs: number[] = [];
  const rawMs: number[] = [];
  const ratios: number[] = [];
  let firstUrl = '';
  let batches: BatchRows[] = [];
  let firstThread = '';
  for (let round = 0; round < SQLITE_ROUNDS; round++) {
    const url = `file:${join(root, `batches-${round}.db`)}`;
    await migrate(url);
    const engine = engineOn(url);
    const measured = await engineBatches(engine, `sqlite round ${round + 1}/${SQLITE_ROUNDS}`);
    await engine.close();
    if (round === 0) {
      // The baseline writes exactly the rows the engine stored in the first round.
      firstUrl = url;
      firstThread = measured.threadId;
      const db = new Database(url.slice('file:'.length), { readonly: true });
      batches = await storedBatches(
        async (sql, params) =>
          db.prepare(sql.replace(/\$\d+/g, '?')).all(...params) as Record<string, unknown>[],
        measured.threadId,
      );
      db.close();
      const warmUrl = `file:${join(root, 'raw-warm.db')}`;
      await migrate(warmUrl);
      rawSqlite(warmUrl.slice('file:'.length), firstThread, batches); // warm-up
    }
    const rawUrl = `file:${join(root, `raw-${round}.db`)}`;
    await migrate(rawUrl);
    const raw = rawSqlite(rawUrl.slice('file:'.length), firstThread, batches);
    engineMs.push(...measured.batchMs);
    rawMs.push(...raw);
    ratios.push(median(raw) / median(measured.batchMs));
    progress(
      `sqlite round ${round + 1}: median batch raw ${fmt(median(raw), 1)} ms, engine ${fmt(median(measured.batchMs), 1)} ms`,
    );
  }
  const raw = (BATCH * 1000) / median(rawMs);
  const nodesPerSec = (BATCH * 1000) / median(engineMs);
  progress(
    `sqlite: raw better-sqlite3 ${fmt(raw)} nodes/s, engine ${fmt(nodesPerSec)} nodes/s (medians of ${SQLITE_ROUNDS} interleaved rounds; per-round ratios ${ratios.map((r) => `${fmt(r * 100, 1)}%`).join(', ')})`,
  );
  rows.push({
    measure: `(a) SQLite raw better-sqlite3, 1,000-node batches (median of ${SQLITE_ROUNDS} × ${BATCHES})`,
    value: `${fmt(raw)} nodes/s`,
    target: 'baseline',
    verdict: '',
  });
  rows.push({
    measure: `(a) SQLite engine appendNodes, 1,000-node batches (median of ${SQLITE_ROUNDS} × ${BATCHES})`,
    value: `${fmt(nodesPerSec)} nodes/s`,
    target: '',
    verdict: '',
  });
  rows.push(ratioRow('(a) SQLite engine vs raw', nodesPerSec / raw, 0.3));
  return firstUrl;
}

async function concurrentAppends(
  url: string,
  storeOptions: ThreadStoreOptions,
): Promise<{ perSec: number; transactions: number }> {
  const engine = engineOn(url, storeOptions);
  const threads: string[] = [];
  for (let i = 0; i < CONCURRENT; i++) threads.push(must(await engine.createThread({})).threadId);
  const round = (r: number) =>
    Promise.all(
      threads.map((threadId, i) =>
        engine
          .appendNodes({ threadId, nodes: [{ kind: 'inference', payload: { r, i } }] })
          .then(must),
      ),
    );
  await round(-1);
  const before = engine.store.writerStats().transactions;
  const start = performance.now();
  for (let r = 0; r < CONCURRENT_ROUNDS; r++) await round(r);
  const ms = performance.now() - start;
  const transactions = engine.store.writerStats().transactions - before;
  await engine.close();
  return { perSec: (CONCURRENT * CONCURRENT_ROUNDS * 1000) / ms, transactions };
}

/**
 * (b) in GROUP_TRIALS interleaved trials, each on fresh files: the figure compares the medians,
 * so a slow moment of a shared machine (or of its disk's fsync) hits both sides alike.
 */
async function benchGroupCommit(root: string, rows: Row[]): Promise<void> {
  const ones: Array<{ perSec: number; transactions: number }> = [];
  const groups: Array<{ perSec: number; transactions: number }> = [];
  for (let trial = 0; trial < GROUP_TRIALS; trial++) {
    const single = `file:${join(root, `single-${trial}.db`)}`;
    const grouped = `file:${join(root, `grouped-${trial}.db`)}`;
    await migrate(single);
    await migrate(grouped);
    ones.push(await concurrentAppends(single, { groupCommit: false }));
    groups.push(await concurrentAppends(grouped, { groupCommit: true }));
    progress(
      `group commit trial ${trial + 1}: ${fmt(groups[trial]!.perSec)} appends/s in ${groups[trial]!.transactions} transactions vs ${fmt(ones[trial]!.perSec)} appends/s in ${ones[trial]!.transactions}`,
    );
  }
  const one = median(ones.map((o) => o.perSec));
  const group = median(groups.map((g) => g.perSec));
  const appends = CONCURRENT * CONCURRENT_ROUNDS;
  rows.push({
    measure: `(b) ${CONCURRENT} concurrent appends × ${CONCURRENT_ROUNDS}, one transaction each (${ones[0]!.transactions} tx; median of ${GROUP_TRIALS})`,
    value: `${fmt(one)} appends/s`,
    target: 'baseline',
    verdict: '',
  });
  rows.push({
    measure: `(b) ${CONCURRENT} concurrent appends × ${CONCURRENT_ROUNDS}, group commit (${median(groups.map((g) => g.transactions))} tx for ${appends}; median of ${GROUP_TRIALS})`,
    value: `${fmt(group)} appends/s`,
    target: '',
    verdict: '',
  });
  const ratio = group / one;
  rows.push({
    measure: '(b) group commit vs one transaction per append',
    value: `${fmt(ratio, 1)}×`,
    target: '≥ 5×',
    verdict: ratio >= 5 ? 'ok' : 'MISSED',
  });
}

async function benchPostgres(rows: Row[]): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    rows.push({
      measure: '(c) Postgres engine vs raw pg',
      value: `SKIPPED: cannot connect to ${POSTGRES_URL} (${why})`,
      target: '≥ 25%',
      verdict: '',
    });
    return;
  }
  const names = [
    `weft_bench_${randomBytes(5).toString('hex')}`,
    `weft_bench_${randomBytes(5).toString('hex')}`,
  ];
  const urlOf = (name: string) => {
    const u = new URL(POSTGRES_URL);
    u.pathname = `/${name}`;
    return u.toString();
  };
  try {
    for (const name of names) await admin.query(`CREATE DATABASE "${name}"`);
    const [engineUrl, rawUrl] = names.map(urlOf) as [string, string];
    await migrate(engineUrl);
    await migrate(rawUrl);
    const engine = engineOn(engineUrl);
    const { threadId, nodesPerSec } = await engineBatches(engine, 'postgres');
    await engine.close();
    const reader = new pg.Client({ connectionString: engineUrl });
    await reader.connect();
    const batches = await storedBatches(
      async (sql, params) => (await reader.query(sql, params)).rows,
      threadId,
    );
    await reader.end();
    await rawPostgres(
      rawUrl,
      `${threadId}-warm`,
      batches.map((b) => ({
        ...b,
        entry: [`${threadId}-warm`, ...b.entry.slice(1)],
        nodes: b.nodes.map((n) => [`${threadId}-warm`, ...n.slice(1)]),
        parents: b.parents.map((p) => [`${threadId}-warm`, ...p.slice(1)]),
      })),
    );
    const raw = await rawPostgres(rawUrl, threadId, batches);
    progress(`postgres: raw pg ${fmt(raw)} nodes/s, engine ${fmt(nodesPerSec)} nodes/s`);
    rows.push({
      measure: '(c) Postgres raw pg multi-row INSERT, 1,000-node batches',
      value: `${fmt(raw)} nodes/s`,
      target: 'baseline',
      verdict: '',
    });
    rows.push({
      measure: '(c) Postgres engine appendNodes, 1,000-node batches',
      value: `${fmt(nodesPerSec)} nodes/s`,
      target: '',
      verdict: '',
    });
    rows.push(ratioRow('(c) Postgres engine vs raw', nodesPerSec / raw, 0.25));
  } finally {
    for (const name of names)
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

async function benchStateAt(root: string, rows: Row[]): Promise<void> {
  const url = `file:${join(root, 'long.db')}`;
  await migrate(url);
  progress(`building a ${fmt(LONG_THREAD)}-entry log in the core`);
  const entries = buildLogForProfile(LONG_THREAD);
  const threadId = 'bench-thread';
  // With the snapshots the engine writes by default along the way (every 100 entries here).
  const projected = must(projectLog(threadId, entries, {}, DEFAULT_SNAPSHOT_POLICY));
  const store = openThreadStore(url);
  progress('writing it in one transaction');
  must(await store.commit(projected.changes!));
  const snapshots = projected.changes!.snapshots ?? [];
  const snapshotBytes = snapshots.reduce((sum, s) => sum + Buffer.byteLength(s.state), 0);
  progress(
    `${fmt(snapshots.length)} snapshots, ${fmt(snapshotBytes / 1e6, 1)} MB of snapshot text (${fmt(snapshotBytes / LONG_THREAD)} B per entry)`,
  );
  const engine = createEngine({ store });
  progress(`stateAt at ${STATE_AT_SAMPLES} random points (nearest snapshot + replay of the tail)`);
  must(await engine.stateAt(threadId, 1));
  const rand = lcg(7);
  const times: number[] = [];
  // CPU time of the process per call too: on a loaded machine it shows what the wall time hides.
  const cpu: number[] = [];
  for (let i = 0; i < STATE_AT_SAMPLES; i++) {
    const at = 1 + Math.floor(rand() * (LONG_THREAD - 1));
    const start = performance.now();
    const startCpu = process.cpuUsage();
    must(await engine.stateAt(threadId, at));
    times.push(performance.now() - start);
    const used = process.cpuUsage(startCpu);
    cpu.push((used.user + used.system) / 1000);
  }
  await engine.close();
  const p50 = percentile(times, 50);
  const { entries: every, fullEvery } = DEFAULT_SNAPSHOT_POLICY;
  progress(
    `stateAt CPU time per call: p50 ${fmt(percentile(cpu, 50), 1)} ms, max ${fmt(Math.max(...cpu), 1)} ms`,
  );
  rows.push({
    measure: `(d) stateAt, random points of a ${fmt(LONG_THREAD)}-entry thread, p50 (snapshots every ${fmt(every)} entries, every ${fullEvery}th full)`,
    value: `${fmt(p50)} ms (p95 ${fmt(percentile(times, 95))} ms, max ${fmt(Math.max(...times))} ms)`,
    target: '≤ 50 ms',
    verdict: p50 <= 50 ? 'ok' : 'MISSED',
  });
}

function benchBytes(url: string, rows: Row[]): void {
  const db = new Database(url.slice('file:'.length));
  db.pragma('wal_checkpoint(TRUNCATE)');
  const pages =
    (db.pragma('page_count', { simple: true }) as number) -
    (db.pragma('freelist_count', { simple: true }) as number);
  const bytes = pages * (db.pragma('page_size', { simple: true }) as number);
  const { nodes, payload } = db
    .prepare(
      'SELECT count(*) AS nodes, sum(length(CAST("payload" AS BLOB))) AS payload FROM "node"',
    )
    .get() as { nodes: number; payload: number };
  // Where the bytes go: each table and index (pages in use, from the dbstat virtual table).
  const tables = db
    .prepare(
      `SELECT "name", sum("pgsize") AS "bytes" FROM "dbstat" GROUP BY "name" ORDER BY "bytes" DESC`,
    )
    .all() as { name: string; bytes: number }[];
  db.close();
  const shown = tables.filter((t) => t.bytes / nodes >= 1);
  progress(
    `bytes per node by table/index: ${shown.map((t) => `${t.name} ${fmt(t.bytes / nodes)}`).join(', ')}`,
  );
  const perNode = bytes / nodes;
  const payloadPerNode = payload / nodes;
  const sample = canonicalJson(payloads(1, 1)[0]!).length;
  const limit = 2 * payloadPerNode + 150;
  rows.push({
    measure: `(e) database bytes per node (${fmt(nodes)} nodes; canonical payload ${fmt(payloadPerNode)} B, e.g. ${sample} B)`,
    value: `${fmt(perNode)} B = ${fmt(perNode / payloadPerNode, 2)}× payload`,
    target: `≤ 2× + 150 B = ${fmt(limit)} B`,
    verdict: perNode <= limit ? 'ok' : 'MISSED',
  });
}

/**
 * `--figures=a,e` (or WEFT_BENCH_STORE_FIGURES=a,e) runs only the named figures (a and e share
 * their database). Default: all.
 */
function selectedFigures(argv: readonly string[]): Set<string> {
  const arg =
    argv.find((a) => a.startsWith('--figures=')) ??
    (process.env.WEFT_BENCH_STORE_FIGURES === undefined
      ? undefined
      : `--figures=${process.env.WEFT_BENCH_STORE_FIGURES}`);
  const all = ['a', 'b', 'c', 'd', 'e'];
  if (arg === undefined) return new Set(all);
  const picked = arg
    .slice('--figures='.length)
    .split(',')
    .filter((f) => f !== '');
  const unknown = picked.filter((f) => !all.includes(f));
  if (unknown.length > 0)
    throw new Error(`--figures takes letters among a–e, got ${unknown.join(', ')}`);
  return new Set(picked);
}

export async function runStoreBench(
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const figures = selectedFigures(argv);
  const root = mkdtempSync(join(tmpdir(), 'weft-bench-store-'));
  const rows: Row[] = [];
  const started = performance.now();
  try {
    progress(`files under ${root} (synchronous=FULL)`);
    if (figures.has('a') || figures.has('e')) {
      const batchesUrl = await benchSqliteBatches(root, rows);
      if (figures.has('e')) benchBytes(batchesUrl, rows);
    }
    if (figures.has('b')) await benchGroupCommit(root, rows);
    if (figures.has('c')) await benchPostgres(rows);
    if (figures.has('d')) await benchStateAt(root, rows);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  printTable(`Store benchmarks (${fmt((performance.now() - started) / 1000, 1)} s)`, rows);
}
