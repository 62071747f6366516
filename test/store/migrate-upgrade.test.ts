/**
 * Upgrading a database with data: a database at 0002 holding a thread (entries as text, edges by
 * node id, an old-format snapshot row) migrates to 0003 (edges by node sequence, packed entries,
 * checked snapshots) with nothing lost — the read models, the log read back byte-identical, a
 * strict verification — and the result matches the Prisma schema.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createPostgresIntrospectionFactory,
  createSqliteIntrospectionFactory,
  diff,
  type Provider,
} from '../../scripts/lib/schema-engine.js';
import { canonicalJson } from '../../src/core/canonical.js';
import type { LogEntry } from '../../src/core/log/index.js';
import {
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  planCreateThread,
  planStartRun,
  type ThreadEvent,
  type ThreadState,
} from '../../src/core/thread/index.js';
import { createEngine, projectLog } from '../../src/engine/index.js';
import { migrate, migrationsDir, PRISMA_DIR } from '../../src/store/migrate/index.js';
import { openThreadStore, type ReadModelChanges } from '../../src/store/read-model/index.js';
import { NODE_TEXT_GIN_INDEX, nodeSearch } from '../../src/store/tables/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';

const tmpRoot = mkdtempSync(join(tmpdir(), 'weft-upgrade-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

/** A copy of prisma/ with the migrations after `last` removed. */
function migrationsUpTo(last: string): string {
  const dir = join(tmpRoot, `prisma-${last}-${Math.random().toString(36).slice(2)}`);
  cpSync(PRISMA_DIR, dir, { recursive: true });
  for (const provider of ['sqlite', 'postgres'] as const) {
    const migrations = migrationsDir(provider, dir);
    for (const name of readdirSync(migrations)) {
      if (name > last) rmSync(join(migrations, name), { recursive: true, force: true });
    }
  }
  return dir;
}

/** A thread's log built by the core: a run, a resource chain, a fan-in of two parents. */
function buildLog(threadId: string): { entries: LogEntry[]; state: ThreadState } {
  let state = createThreadMachine().initial;
  const entries: LogEntry[] = [];
  let clock = Date.parse('2026-02-01T10:00:00.000Z');
  const commit = (plan: { ok: true; value: ThreadEvent } | { ok: false; error: unknown }) => {
    if (!plan.ok) throw new Error(JSON.stringify(plan.error));
    clock += 1000;
    const committed = commitEvent(state, plan.value, {
      id: `e${entries.length}`,
      recordedAt: new Date(clock).toISOString(),
    });
    if (!committed.ok) throw new Error(committed.error.message);
    state = committed.value.state;
    entries.push(committed.value.entry);
  };
  const now = () => new Date(clock + 1000).toISOString();
  commit(planCreateThread(threadId, { metadata: { b: 1, a: 2 } }));
  commit(planAppendNodes(state, [{ kind: 'system', payload: { text: 'you are' } }], now()));
  commit(planStartRun(state, { runId: 'r1', goal: 'upgrade', maxIterations: 10 }, now()));
  commit(
    planAppendNodes(
      state,
      [
        { kind: 'tool_call', payload: { tool: 'read', n: 1 }, runId: 'r1' },
        { kind: 'resource', payload: { v: 1 }, resourceKey: 'file:a', advance: false },
      ],
      now(),
    ),
  );
  commit(
    planAppendNodes(state, [{ kind: 'resource', payload: { v: 2 }, resourceKey: 'file:a' }], now()),
  );
  commit(planAppendNodes(state, [{ kind: 'answer', payload: { text: 'done ✓ 𝄞' } }], now()));
  return { entries, state };
}

/** The rows of `changes` in the 0002 layout: entries as text, edges by node id. */
function oldLayoutRows(changes: ReadModelChanges) {
  const idOf = new Map(changes.nodes.map((n) => [n.sequence, n.id]));
  return {
    thread: { ...changes.thread },
    log_entry: changes.entries.map((e) => ({
      thread_id: e.threadId,
      log_index: e.index,
      entry_id: e.entryId,
      type: e.type,
      recorded_at: e.recordedAt,
      entry: e.entry,
    })),
    node: changes.nodes,
    node_parent: changes.nodeParents.map((p) => ({
      thread_id: p.threadId,
      child_id: idOf.get(p.childSeq)!,
      parent_id: idOf.get(p.parentSeq)!,
      position: p.position,
    })),
  };
}

type Insert = (table: string, row: Record<string, unknown>) => Promise<void>;

async function writeOldLayout(insert: Insert, changes: ReadModelChanges): Promise<void> {
  const rows = oldLayoutRows(changes);
  const t = rows.thread;
  await insert('thread', {
    id: t.id,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    metadata: t.metadata,
    node_types: t.nodeTypes,
    allow_dynamic_node_types: t.allowDynamicNodeTypes,
    log_length: t.logLength,
    state_hash: t.stateHash,
    frontier: t.frontier,
  });
  for (const row of rows.log_entry) await insert('log_entry', row);
  for (const n of rows.node) {
    await insert('node', {
      thread_id: n.threadId,
      id: n.id,
      sequence: n.sequence,
      kind: n.kind,
      payload: n.payload,
      created_at: n.createdAt,
      resource_key: n.resourceKey,
      log_index: n.logIndex,
      run_id: n.runId,
      taint: n.taint,
      usage: n.usage,
      is_frontier: n.isFrontier,
      is_current: n.isCurrent,
    });
  }
  for (const row of rows.node_parent) await insert('node_parent', row);
  for (const h of changes.resourceHeads) {
    await insert('resource_head', {
      thread_id: h.threadId,
      resource_key: h.resourceKey,
      node_id: h.nodeId,
      semantic_type: h.semanticType,
      semantic_key: h.semanticKey,
    });
  }
  for (const r of changes.runs) {
    await insert('run', {
      thread_id: r.threadId,
      id: r.id,
      tenant_id: r.tenantId,
      status: r.status,
      goal: r.goal,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      started_at: r.startedAt,
      waiting_timeout_at: r.waitingTimeoutAt,
      execution_deadline_at: r.executionDeadlineAt,
      state: r.state,
      total_input_tokens: r.totalInputTokens,
      total_output_tokens: r.totalOutputTokens,
      total_cost_usd: r.totalCostUsd,
      log_index: r.logIndex,
    });
  }
  // A snapshot row of the old format (a cache): the upgrade drops it.
  await insert('snapshot', {
    thread_id: t.id,
    log_index: 2,
    state: '{"old":true}',
    created_at: t.createdAt,
  });
}

async function upgradeAndCheck(
  provider: Provider,
  url: string,
  insert: Insert,
  introspection: () => Parameters<typeof diff>[0]['adapterFactory'] & { close?(): Promise<void> },
) {
  const threadId = 'thread-upgrade';
  const { entries, state } = buildLog(threadId);
  const projected = projectLog(threadId, entries);
  if (!projected.ok) throw new Error(projected.error.message);
  const changes = projected.value.changes!;

  const before = await migrate(url, { prismaDir: migrationsUpTo('0002_runs_keyed_by_thread') });
  expect(before.applied.at(-1)).toBe('0002_runs_keyed_by_thread');
  await writeOldLayout(insert, changes);
  const after = await migrate(url);
  // 0003 and every later migration (their own upgrade checks are theirs).
  expect(after.applied).toEqual(
    readdirSync(migrationsDir(provider))
      .filter((name) => name > '0002_runs_keyed_by_thread')
      .sort(),
  );
  expect(after.applied[0]).toBe('0003_compact_storage_and_snapshots');

  // The migrated database matches the schema.
  const factory = introspection();
  try {
    const drift = await diff({
      from: { kind: 'database', schemaPath: join(PRISMA_DIR, provider, 'schema.prisma') },
      to: { kind: 'schema', path: join(PRISMA_DIR, provider, 'schema.prisma') },
      adapterFactory: factory,
      // Beyond the Prisma schema (see migrate.test.ts): the search index of migration 0010, an
      // FTS5 table with its shadow tables on SQLite, a GIN index on Postgres.
      externalTables:
        provider === 'sqlite'
          ? ['_weft_migrations', nodeSearch.name, ...nodeSearch.shadowTables]
          : ['public._weft_migrations'],
    });
    expect(drift.sql).toBe(
      provider === 'sqlite'
        ? '-- This is an empty migration.\n'
        : `-- DropIndex\nDROP INDEX "${NODE_TEXT_GIN_INDEX}";\n`,
    );
  } finally {
    await factory.close?.();
  }

  // Nothing lost: read models as a rebuild into a fresh database gives, the log byte-identical.
  const store = openThreadStore(url);
  const engine = createEngine({ store, snapshots: { entries: 2 } });
  try {
    const fresh = `file:${join(tmpRoot, `fresh-${Math.random().toString(36).slice(2)}.db`)}`;
    await migrate(fresh);
    const rebuilt = openThreadStore(fresh);
    try {
      expect((await rebuilt.commit(changes)).ok).toBe(true);
      const dump = await store.dumpReadModels([threadId]);
      // 0011's spend columns cannot be computed in SQL: an upgraded row keeps them null
      // (unknown, answered from the folded state) until its next commit; all else matches.
      const expected = await rebuilt.dumpReadModels([threadId]);
      const SPEND = ['spendInputTokens', 'spendOutputTokens', 'spendCostUsd', 'spendCalls'];
      for (const row of dump.thread) for (const c of SPEND) expect(row[c]).toBeNull();
      for (const row of expected.thread) for (const c of SPEND) row[c] = null;
      expect(dump).toEqual(expected);
      expect(dump.node_parent.length).toBeGreaterThanOrEqual(5);
    } finally {
      await rebuilt.close();
    }
    const read = await store.readEntries(threadId);
    expect(read.map((e) => canonicalJson(e))).toEqual(entries.map((e) => canonicalJson(e)));
    expect(await store.findSnapshots(threadId, 100)).toEqual([]);
    const verified = await engine.verify(threadId, { strict: true });
    expect(verified).toEqual({ ok: true, value: { ok: true, checkedEntries: entries.length } });
    const loaded = await engine.getState(threadId);
    expect(loaded.ok && loaded.value.stateHash).toBe(state.stateHash);
    // 0010 indexed the nodes already stored, for search.
    const found = await store.searchNodes({
      tenantId: 'default',
      text: 'done',
      take: 10,
      offset: 0,
    });
    const answer = changes.nodes.find((n) => n.kind === 'answer')!;
    expect(found.map((h) => [h.nodeId, h.snippet.text])).toEqual([[answer.id, 'done ✓ 𝄞']]);

    // And the thread lives on: new entries (this one large enough to be packed) read back exactly.
    const appended = await engine.appendNodes({
      threadId,
      nodes: [{ kind: 'inference', payload: { after: 'upgrade', text: 'x'.repeat(1500) } }],
    });
    expect(appended.ok).toBe(true);
    const all = await store.readEntries(threadId);
    expect(all).toHaveLength(entries.length + 1);
    expect((await engine.verify(threadId, { strict: true })).ok).toBe(true);
    const at = await engine.stateAt(threadId, entries.length);
    expect(at.ok && at.value.state.stateHash).toBe(state.stateHash);
  } finally {
    await engine.close();
  }
}

describe('upgrade 0002 → 0003 with data [sqlite]', () => {
  it('converts edges, keeps the log and read models, and matches the schema', async () => {
    const path = join(tmpRoot, `upgrade-${Math.random().toString(36).slice(2)}.db`);
    const insert: Insert = async (table, row) => {
      const db = new Database(path);
      try {
        const values = Object.values(row).map((v) =>
          v instanceof Date
            ? v.toISOString().replace('Z', '+00:00')
            : typeof v === 'boolean'
              ? Number(v)
              : v,
        );
        const columns = Object.keys(row).map((c) => `"${c}"`);
        db.prepare(
          `INSERT INTO "${table}" (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
        ).run(...values);
      } finally {
        db.close();
      }
    };
    await upgradeAndCheck('sqlite', `file:${path}`, insert, () =>
      createSqliteIntrospectionFactory(path),
    );
  });
});

describeWithPostgres('upgrade 0002 → 0003 with data', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  it('converts edges, keeps the log and read models, and matches the schema', async () => {
    const insert: Insert = async (table, row) => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const columns = Object.keys(row).map((c) => `"${c}"`);
        const values = Object.values(row).map((v) =>
          v instanceof Date ? v.toISOString().replace('Z', '') : v,
        );
        await client.query(
          `INSERT INTO "${table}" (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
          values,
        );
      } finally {
        await client.end();
      }
    };
    await upgradeAndCheck('postgres', database.url, insert, () =>
      createPostgresIntrospectionFactory(database.url),
    );
  });
});
