/**
 * Encryption at rest covers every value a client supplies (hardening item 8): with
 * WEFT_ENCRYPTION_KEY set, a marker written through the real server (HTTP GraphQL) into thread
 * metadata and node types, a resource key, taint source and tool, a model name and a node name in
 * usage, a memory type, key and content, memory written by a run, a run goal and idempotency keys
 * appears nowhere in the stored bytes — not in the SQLite file nor its WAL, not in any column of
 * any Postgres table — and everything reads back exactly through the API: memory(key:) finds the
 * entry, resource versions are found by their key, and an idempotent retry answers the same
 * receipt and writes nothing.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createReads, type Reads } from '../../src/reads/index.js';
import { type App, buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { apiKeyRows } from '../../src/store/api-keys/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { openThreadStore, type ThreadStore } from '../../src/store/read-model/index.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../support/services.js';

// Lowercase letters and digits: memory types and keys are normalised to lowercase.
const MARKER = `zqx${randomBytes(5).toString('hex')}`;
const KEY = randomBytes(32);

const postgres = await postgresAvailable();
if (!postgres.available) {
  if (process.env.REQUIRE_POSTGRES === '1') {
    throw new Error(`REQUIRE_POSTGRES=1 but Postgres is unavailable: ${postgres.reason}`);
  }
  console.warn(`encryption-coverage: Postgres cases skipped (${postgres.reason})`);
}

// biome-ignore lint/suspicious/noExplicitAny: responses are read loosely
type Json = any;

interface Server {
  app: App;
  engine: Engine;
  store: ThreadStore;
  reads: Reads;
  url: string;
  gql(query: string, variables?: Record<string, unknown>): Promise<Json>;
  close(): Promise<void>;
}

/** A real server (listening on a loopback port) whose store seals with KEY. */
async function startServer(databaseUrl: string): Promise<Server> {
  const store = openThreadStore(databaseUrl, { encryptionKey: KEY });
  await store.ready();
  // A snapshot every other entry, so the snapshot table holds sealed states too.
  const engine = createEngine({ store, snapshots: { entries: 2, fullEvery: 1 } });
  const reads = createReads(engine, { databaseUrl });
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_REQUEST_LOG: 'off',
  });
  const app = buildApp({ config, engine, reads });
  const url = await app.start();
  return {
    app,
    engine,
    store,
    reads,
    url,
    async gql(query, variables) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.json()) as Json;
      expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
      return body.data;
    },
    async close() {
      await app.stop();
      await reads.close();
      await engine.close();
    },
  };
}

const NODE = `id kind payload resourceKey isCurrent
  taint { source toolName serverId agentId derived }
  usage supersedes { id } supersededBy { id }`;

const METADATA = { purpose: `${MARKER} metadata`, nested: { list: [`${MARKER}-1`] } };
const NODE_TYPES = [
  { name: `n${MARKER}`, description: `${MARKER} node type` },
  { name: 'memory', description: 'memory mirrored from runs' },
];
const RESOURCE_KEY = `file:///srv/${MARKER}/notes.txt`;
const TAINT = {
  source: `src-${MARKER}`,
  toolName: `tool-${MARKER}`,
  serverId: `server-${MARKER}`,
  agentId: `agent-${MARKER}`,
};
const MODEL = `model-${MARKER}`;
const USAGE_MODEL = `usage-model-${MARKER}`;
const SPEND_NODE = `step-${MARKER}`;
const MEMORY_TYPE = `t${MARKER}`;
const MEMORY_KEY = `key-${MARKER}`;
const RUN_MEMORY_KEY = `runkey-${MARKER}`;

interface Written {
  threadId: string;
  runId: string;
  resourceNodes: string[];
  memoryNodeId: string;
  logLength: number;
  /** The first answers of the remember and recordUsage calls (what a retry must repeat). */
  receipts: { remember: Json; recordUsage: Json };
}

const CREATE = `mutation($input: CreateThreadInput!) { createThread(input: $input) {
  __typename ... on CreateThreadSuccess { logIndex thread { id } }
  ... on ValidationError { issues { path message } } ... on Error { code message } } }`;
const APPEND = `mutation($input: AppendNodesInput!) { appendNodes(input: $input) {
  __typename ... on AppendNodesSuccess { logIndex nodes { id } }
  ... on ValidationError { issues { path message } } ... on Error { code message } } }`;
const REMEMBER = `mutation($input: RememberInput!) { remember(input: $input) {
  __typename ... on RememberSuccess { logIndex node { id } }
  ... on ValidationError { issues { path message } } ... on Error { code message } } }`;
const START = `mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename ... on StartRunSuccess { logIndex run { id } }
  ... on ValidationError { issues { path message } } ... on Error { code message } } }`;
const USAGE = `mutation($input: RecordUsageInput!) { recordUsage(input: $input) {
  __typename ... on RecordUsageSuccess { logIndex run { id } }
  ... on ValidationError { issues { path message } } ... on Error { code message } } }`;
const DISPATCH = `mutation($input: DispatchInput!) { dispatch(input: $input) {
  __typename ... on DispatchSuccess { logIndex run { id } }
  ... on ValidationError { issues { path message } } ... on Error { code message } } }`;

/** Writes the marker into every user-supplied value the API takes, each write with a key. */
async function writeEverything(s: Server): Promise<Written> {
  const created = (
    await s.gql(CREATE, {
      input: {
        metadata: METADATA,
        nodeTypes: NODE_TYPES,
        allowDynamicNodeTypes: true,
        idempotencyKey: `idem-create-${MARKER}`,
      },
    })
  ).createThread;
  expect(created.__typename, JSON.stringify(created)).toBe('CreateThreadSuccess');
  const threadId: string = created.thread.id;

  const resourceNodes: string[] = [];
  for (const version of [1, 2]) {
    const appended = (
      await s.gql(APPEND, {
        input: {
          threadId,
          idempotencyKey: `idem-append-${version}-${MARKER}`,
          nodes: [
            {
              kind: 'RESOURCE',
              payload: { version, text: `${MARKER} resource ${version}` },
              resourceKey: RESOURCE_KEY,
              taint: TAINT,
              usage: { model: USAGE_MODEL, inputTokens: 5, outputTokens: 7, costUsd: 0.25 },
            },
          ],
        },
      })
    ).appendNodes;
    expect(appended.__typename, JSON.stringify(appended)).toBe('AppendNodesSuccess');
    resourceNodes.push(appended.nodes[0].id);
  }

  const remembered = (
    await s.gql(REMEMBER, {
      input: {
        threadId,
        type: MEMORY_TYPE,
        key: MEMORY_KEY,
        content: { text: `${MARKER} memory content` },
        idempotencyKey: `idem-remember-${MARKER}`,
      },
    })
  ).remember;
  expect(remembered.__typename, JSON.stringify(remembered)).toBe('RememberSuccess');

  const started = (
    await s.gql(START, {
      input: { threadId, goal: `${MARKER} goal`, idempotencyKey: `idem-start-${MARKER}` },
    })
  ).startRun;
  expect(started.__typename, JSON.stringify(started)).toBe('StartRunSuccess');
  const runId: string = started.run.id;

  // A workflow node name: usage without a nodeId is charged to it (the node breakdown).
  const entered = (
    await s.gql(DISPATCH, {
      input: { runId, action: { type: 'GOTO_NODE', payload: { node_id: SPEND_NODE } } },
    })
  ).dispatch;
  expect(entered.__typename, JSON.stringify(entered)).toBe('DispatchSuccess');

  const usage = (
    await s.gql(USAGE, {
      input: {
        runId,
        model: MODEL,
        inputTokens: 11,
        outputTokens: 13,
        costUsd: 0.5,
        idempotencyKey: `idem-usage-${MARKER}`,
      },
    })
  ).recordUsage;
  expect(usage.__typename, JSON.stringify(usage)).toBe('RecordUsageSuccess');

  // Memory written by a run is mirrored as semantic nodes `semantic:memory:<key>`.
  const dispatched = (
    await s.gql(DISPATCH, {
      input: {
        runId,
        idempotencyKey: `idem-dispatch-${MARKER}`,
        action: {
          type: 'UPDATE_MEMORY',
          payload: {
            updates: { [RUN_MEMORY_KEY]: `${MARKER} run memory` },
            taint: {
              source: 'mcp_tool',
              tool_name: `run-tool-${MARKER}`,
              server_id: `run-server-${MARKER}`,
            },
          },
        },
      },
    })
  ).dispatch;
  expect(dispatched.__typename, JSON.stringify(dispatched)).toBe('DispatchSuccess');

  return {
    threadId,
    runId,
    resourceNodes,
    memoryNodeId: remembered.node.id,
    logLength: dispatched.logIndex + 1,
    receipts: { remember: remembered, recordUsage: usage },
  };
}

/** Reads everything back through the API and checks it is exactly what was written. */
async function checkReadBack(s: Server, w: Written): Promise<void> {
  const data = await s.gql(
    `query($t: ID!, $r: ID!, $type: String!, $key: String!, $runKey: String!) {
      thread(id: $t) {
        metadata logLength nodeTypes { name description } allowDynamicNodeTypes
        nodes(first: 100) { edges { node { ${NODE} } } }
        resources { id resourceKey }
        memory { type key }
        byKey: memory(key: $key) { type key content tainted node { id resourceKey } history { id } }
        byType: memory(type: $type) { key }
        byBoth: memory(type: $type, key: $key) { key node { id } }
        runMemory: memory(type: "memory", key: $runKey) { key content tainted }
        events(first: 100) { edges { node { index type entry } } }
        spend { inputTokens outputTokens calls }
      }
      run(id: $r) {
        goal memory taint
        modelBreakdown { key spend { inputTokens outputTokens calls } }
        nodeBreakdown { key spend { inputTokens outputTokens calls } }
      }
    }`,
    { t: w.threadId, r: w.runId, type: MEMORY_TYPE, key: MEMORY_KEY, runKey: RUN_MEMORY_KEY },
  );
  const thread = data.thread;
  expect(thread.metadata).toEqual(METADATA);
  expect(thread.nodeTypes).toEqual(NODE_TYPES);
  expect(thread.logLength).toBe(w.logLength);

  const nodes = thread.nodes.edges.map((e: Json) => e.node);
  const [first, second] = w.resourceNodes.map((id) => nodes.find((n: Json) => n.id === id));
  for (const node of [first, second]) {
    expect(node.resourceKey).toBe(RESOURCE_KEY);
    expect(node.taint).toEqual({ ...TAINT, derived: false });
    expect(node.usage).toEqual({
      model: USAGE_MODEL,
      inputTokens: 5,
      outputTokens: 7,
      costUsd: 0.25,
    });
  }
  expect(first.payload).toEqual({ version: 1, text: `${MARKER} resource 1` });
  // Versions are found by their (sealed) resource key.
  expect(first.supersededBy).toEqual({ id: second.id });
  expect(second.supersedes).toEqual({ id: first.id });
  expect([first.isCurrent, second.isCurrent]).toEqual([false, true]);

  const resourceKeys = thread.resources.map((r: Json) => r.resourceKey).sort();
  expect(resourceKeys).toEqual(
    [
      RESOURCE_KEY,
      `semantic:${MEMORY_TYPE}:${MEMORY_KEY}`,
      `semantic:memory:${RUN_MEMORY_KEY}`,
    ].sort(),
  );
  expect(thread.memory.map((m: Json) => `${m.type}/${m.key}`).sort()).toEqual(
    [`${MEMORY_TYPE}/${MEMORY_KEY}`, `memory/${RUN_MEMORY_KEY}`].sort(),
  );

  expect(thread.byKey).toEqual([
    {
      type: MEMORY_TYPE,
      key: MEMORY_KEY,
      content: { text: `${MARKER} memory content` },
      // Its parents (the default: the frontier) are the tainted resource nodes.
      tainted: true,
      node: { id: w.memoryNodeId, resourceKey: `semantic:${MEMORY_TYPE}:${MEMORY_KEY}` },
      history: [{ id: w.memoryNodeId }],
    },
  ]);
  expect(thread.byType).toEqual([{ key: MEMORY_KEY }]);
  expect(thread.byBoth).toEqual([{ key: MEMORY_KEY, node: { id: w.memoryNodeId } }]);
  expect(thread.runMemory).toHaveLength(1);
  expect(thread.runMemory[0].key).toBe(RUN_MEMORY_KEY);
  expect(thread.runMemory[0].content).toBe(`${MARKER} run memory`);
  expect(thread.runMemory[0].tainted).toBe(true);

  const events = thread.events.edges.map((e: Json) => e.node);
  expect(events).toHaveLength(w.logLength);
  expect(JSON.stringify(events[0].entry)).toContain(`${MARKER} metadata`);

  expect(data.run.goal).toBe(`${MARKER} goal`);
  expect(data.run.memory).toMatchObject({ [RUN_MEMORY_KEY]: `${MARKER} run memory` });
  expect(data.run.taint[RUN_MEMORY_KEY]).toMatchObject({
    source: 'mcp_tool',
    tool_name: `run-tool-${MARKER}`,
    server_id: `run-server-${MARKER}`,
  });
  expect(data.run.modelBreakdown).toEqual([
    { key: MODEL, spend: { inputTokens: 11, outputTokens: 13, calls: 1 } },
  ]);
  expect(data.run.nodeBreakdown).toEqual([
    { key: SPEND_NODE, spend: { inputTokens: 11, outputTokens: 13, calls: 1 } },
  ]);

  // The store's own view of the rows it wrote (what replays and rebuilds compare) is the text.
  const dump = await s.store.dumpReadModels([w.threadId]);
  expect(dump.run_spend.map((r) => `${r.dimension}/${r.key}`).sort()).toEqual(
    [`model/${MODEL}`, `node/${SPEND_NODE}`].sort(),
  );
  expect(dump.resource_head.map((r) => r.resourceKey).sort()).toEqual(resourceKeys);
  expect(dump.thread[0]!.metadata).toBe(canonicalJson(METADATA));
}

/** Retries of idempotent writes answer the first receipt and write nothing. */
async function checkRetries(s: Server, w: Written): Promise<void> {
  const remembered = (
    await s.gql(REMEMBER, {
      input: {
        threadId: w.threadId,
        type: MEMORY_TYPE,
        key: MEMORY_KEY,
        content: { text: `${MARKER} memory content` },
        idempotencyKey: `idem-remember-${MARKER}`,
      },
    })
  ).remember;
  expect(remembered).toEqual(w.receipts.remember);
  expect(remembered.node.id).toBe(w.memoryNodeId);
  const usage = (
    await s.gql(USAGE, {
      input: {
        runId: w.runId,
        model: MODEL,
        inputTokens: 11,
        outputTokens: 13,
        costUsd: 0.5,
        idempotencyKey: `idem-usage-${MARKER}`,
      },
    })
  ).recordUsage;
  expect(usage).toEqual(w.receipts.recordUsage);
  // The same key with another request is refused, naming the key.
  const reused = await s.gql(
    `mutation($input: RememberInput!) { remember(input: $input) {
      __typename ... on IdempotencyKeyReusedError { code key } } }`,
    {
      input: {
        threadId: w.threadId,
        type: MEMORY_TYPE,
        key: MEMORY_KEY,
        content: 'other',
        idempotencyKey: `idem-remember-${MARKER}`,
      },
    },
  );
  expect(reused.remember).toEqual({
    __typename: 'IdempotencyKeyReusedError',
    code: 'IDEMPOTENCY_KEY_REUSED',
    key: `idem-remember-${MARKER}`,
  });
  const after = await s.gql('query($t: ID!) { thread(id: $t) { logLength nodeCount } }', {
    t: w.threadId,
  });
  expect(after.thread.logLength).toBe(w.logLength);
}

/** Where `bytes` contains the marker (as text, or as hex, as Postgres prints bytea). */
const leaks = (text: string): boolean =>
  text.includes(MARKER) || text.includes(Buffer.from(MARKER).toString('hex'));

describe('encryption coverage [sqlite]', () => {
  const root = mkdtempSync(join(tmpdir(), 'weft-encryption-coverage-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const files = () =>
    readdirSync(root)
      .filter((name) => name.startsWith('coverage.db'))
      .map((name) => ({ name, bytes: readFileSync(join(root, name)) }));

  it('keeps every marked value out of the database file and its WAL, and reads it all back', async () => {
    const url = `file:${join(root, 'coverage.db')}`;
    await migrate(url);
    const s = await startServer(url);
    let written: Written;
    try {
      written = await writeEverything(s);
      // An API key name, through the key rows with the store's codec.
      const weft = createPrisma(url);
      try {
        await apiKeyRows(weft, s.store.codec).insert({
          id: '0123456789abcdef',
          tenantId: 'default',
          scopes: 'read',
          keyHash: '0'.repeat(64),
          name: `name-${MARKER}`,
          createdAt: new Date(),
          revokedAt: null,
        });
        const [row] = await apiKeyRows(weft, s.store.codec).list();
        expect(row!.name).toBe(`name-${MARKER}`);
      } finally {
        await weft.prisma.$disconnect();
      }
      // While the server is up: the main file and the WAL (not yet checkpointed).
      const open = files();
      expect(open.some((f) => f.name === 'coverage.db-wal' && f.bytes.length > 0)).toBe(true);
      for (const f of open) expect(f.bytes.includes(MARKER), f.name).toBe(false);
      await checkReadBack(s, written);
      await checkRetries(s, written);
    } finally {
      await s.close();
    }
    // After closing (the WAL checkpointed into the main file).
    for (const f of files()) expect(f.bytes.includes(MARKER), f.name).toBe(false);
    expect(files().reduce((n, f) => n + f.bytes.length, 0)).toBeGreaterThan(0);

    // A new server on the same file reads it all back (replaying the sealed log).
    const again = await startServer(url);
    try {
      await checkReadBack(again, written);
      const verified = await again.engine.verify(written.threadId, { strict: true });
      expect(verified).toMatchObject({ ok: true, value: { ok: true } });
    } finally {
      await again.close();
    }
  });
});

/** Every text, bytea and json column of every table of the Postgres database, read with pg. */
async function expectNoMarkerInPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const columns = (
      await client.query<{ table_name: string; column_name: string; data_type: string }>(
        `SELECT table_name, column_name, data_type FROM information_schema.columns
         WHERE table_schema = 'public'
           AND data_type IN ('text', 'character varying', 'bytea', 'json', 'jsonb')
         ORDER BY table_name, ordinal_position`,
      )
    ).rows;
    const tables = new Set(columns.map((c) => c.table_name));
    for (const table of ['thread', 'node', 'resource_head', 'run', 'run_spend']) {
      expect(tables, table).toContain(table);
    }
    for (const table of ['idempotency_record', 'snapshot', 'log_entry', 'api_key']) {
      expect(tables, table).toContain(table);
    }
    let values = 0;
    const leaking = new Set<string>();
    for (const { table_name: table, column_name: column } of columns) {
      const rows = (
        await client.query<{ v: string | null }>(`SELECT "${column}"::text AS v FROM "${table}"`)
      ).rows;
      for (const { v } of rows) {
        if (v === null) continue;
        values++;
        if (leaks(v)) leaking.add(`${table}.${column}`);
      }
    }
    expect([...leaking]).toEqual([]);
    expect(values).toBeGreaterThan(50);
    // Whole rows too (every column, whatever its type).
    for (const table of tables) {
      const rows = (await client.query<{ t: string }>(`SELECT t::text AS t FROM "${table}" t`))
        .rows;
      expect(leaks(rows.map((r) => r.t).join('\n')), table).toBe(false);
    }
  } finally {
    await client.end();
  }
}

describe.skipIf(!postgres.available)('encryption coverage [postgres]', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
    await db?.drop();
  });

  it('keeps every marked value out of every column of every table, and reads it all back', async () => {
    db = await createTestDatabase();
    await migrate(db.url);
    const s = await startServer(db.url);
    try {
      const written = await writeEverything(s);
      const weft = createPrisma(db.url);
      try {
        await apiKeyRows(weft, s.store.codec).insert({
          id: '0123456789abcdef',
          tenantId: 'default',
          scopes: 'read',
          keyHash: '0'.repeat(64),
          name: `name-${MARKER}`,
          createdAt: new Date(),
          revokedAt: null,
        });
      } finally {
        await weft.prisma.$disconnect();
      }
      await expectNoMarkerInPostgres(db.url);
      await checkReadBack(s, written);
      await checkRetries(s, written);
      await expectNoMarkerInPostgres(db.url);
    } finally {
      await s.close();
    }
  });
});
