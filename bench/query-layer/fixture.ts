/**
 * The query-layer bench's databases and rows: a fresh migrated database per backend (a SQLite
 * file, or a Postgres database dropped at the end), and the rows of a 1,000-node append exactly
 * as today's store writes them — taken from one append through the engine, read back, and
 * re-keyed for every later write (thread, sequences, log index, ids).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import type { JsonValue } from '../../src/core/json.js';
import { createEngine } from '../../src/engine/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { selectRows } from '../../src/store/read-model/select.js';
import { insertThreads } from '../../src/store/read-model/sql.js';
import {
  recordScript,
  type ScriptRunner,
  StatementTexts,
} from '../../src/store/read-model/write-script.js';
import {
  logEntry,
  type NodeParentRow,
  type NodeRow,
  node,
  nodeParent,
  type Provider,
  type StoredEntryRow,
} from '../../src/store/tables/index.js';

export const POSTGRES_URL =
  process.env.WEFT_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export const APPEND_NODES = 1_000;

export const log = (message: string) => console.log(`  [query-layer] ${message}`);

export interface BenchDb {
  provider: Provider;
  url: string;
  /** The SQLite file (SQLite only). */
  path: string;
  drop(): Promise<void>;
}

/** Why Postgres cannot be used, or undefined when it answers. */
export async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function openBenchDb(provider: Provider, root: string): Promise<BenchDb> {
  if (provider === 'sqlite') {
    const path = join(root, 'query-layer.db');
    const url = `file:${path}`;
    await migrate(url);
    return { provider, url, path, drop: async () => undefined };
  }
  const name = `weft_bench_qlayer_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const u = new URL(POSTGRES_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  await migrate(url);
  return {
    provider,
    url,
    path: '',
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await client.end();
    },
  };
}

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const WORDS = ['agent', 'file', 'read', 'config', 'plan', 'result', 'tool', 'call', 'user', 'goal'];
const KINDS = ['inference', 'tool_call', 'tool_result', 'answer'] as const;

/** ~250 B canonical payloads, deterministic (as bench/store.ts appends). */
function appendInput(count: number): Array<{ kind: (typeof KINDS)[number]; payload: JsonValue }> {
  const rand = lcg(7);
  return Array.from({ length: count }, (_, i) => ({
    kind: KINDS[i % KINDS.length]!,
    payload: {
      step: i,
      text: Array.from({ length: 28 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' '),
      ok: rand() > 0.5,
      tags: ['bench', 'query-layer'],
    },
  }));
}

/** The rows one append writes (the thread row's update aside). */
export interface AppendRows {
  entry: StoredEntryRow;
  nodes: NodeRow[];
  parents: NodeParentRow[];
}

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/** One 1,000-node append through the engine, and its rows as stored. */
export async function templateAppend(db: BenchDb): Promise<AppendRows> {
  const engine = createEngine({ store: openThreadStore(db.url) });
  const { threadId } = must(await engine.createThread({}));
  const appended = must(await engine.appendNodes({ threadId, nodes: appendInput(APPEND_NODES) }));
  void appended;
  await engine.close();
  const weft = createPrisma(db.url);
  try {
    const nodes = await selectRows(
      weft,
      node,
      `${node.c.threadId} = ? AND ${node.c.sequence} > ?`,
      [threadId, 0],
      ` ORDER BY ${node.c.sequence}`,
    );
    const logIndex = nodes[0]!.logIndex;
    const [entry] = await selectRows(
      weft,
      logEntry,
      `${logEntry.c.threadId} = ? AND ${logEntry.c.index} = ?`,
      [threadId, logIndex],
    );
    const parents = await selectRows(
      weft,
      nodeParent,
      `${nodeParent.c.threadId} = ?`,
      [threadId],
      ` ORDER BY ${nodeParent.c.childSeq}, ${nodeParent.c.position}`,
    );
    if (nodes.length !== APPEND_NODES || entry === undefined) {
      throw new Error(
        `the template append stored ${nodes.length} nodes and ${entry ? 1 : 0} entry`,
      );
    }
    return { entry, nodes, parents };
  } finally {
    await weft.prisma.$disconnect();
  }
}

/**
 * The template's rows as the `k`-th append (1-based) of `threadId`: log index k, sequences
 * after the k - 1 appends before it, ids unique per append; parents point into the previous
 * append as the template's first node points at the thread's frontier.
 */
export function appendRows(template: AppendRows, threadId: string, k: number): AppendRows {
  const first = template.nodes[0]!.sequence;
  const shift = (sequence: number) => sequence - first + 1 + (k - 1) * APPEND_NODES;
  return {
    entry: { ...template.entry, threadId, index: k, entryId: `${template.entry.entryId}-${k}` },
    nodes: template.nodes.map((n) => ({
      ...n,
      threadId,
      id: `${n.id}-${k}`,
      sequence: shift(n.sequence),
      logIndex: k,
    })),
    parents: template.parents
      .map((p) => ({ ...p, threadId, childSeq: shift(p.childSeq), parentSeq: shift(p.parentSeq) }))
      .filter((p) => p.parentSeq >= 1),
  };
}

/** Thread rows for the bench's threads (the appends' foreign key), written through `runner`. */
export async function createThreads(
  provider: Provider,
  runner: ScriptRunner,
  ids: readonly string[],
): Promise<void> {
  const now = new Date();
  const rows = ids.map((id) => ({
    id,
    createdAt: now,
    updatedAt: now,
    metadata: '{}',
    nodeTypes: '[]',
    allowDynamicNodeTypes: false,
    logLength: 0,
    stateHash: '',
    frontier: '[]',
    forkedFromId: null,
    forkedUpToIndex: null,
    baseThreadId: null,
    baseLogLength: null,
    baseNodeCount: null,
    deletedAt: null,
    expiresAt: null,
    spendInputTokens: null,
    spendOutputTokens: null,
    spendCostUsd: null,
    spendCalls: null,
    payloadSalt: null,
  }));
  await runner.runAll(recordScript(new StatementTexts(provider), (s) => insertThreads(s, rows)));
}

export type { WeftPrisma };
