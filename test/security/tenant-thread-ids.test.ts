/**
 * Hardening item 9: thread ids are per tenant, so they are no cross-tenant existence oracle.
 * Through a keyed server on a real port (HTTP and graphql-ws), on SQLite and Postgres: tenant A
 * (acme) creates "shared"; tenants B, C and D create, fork to and import under "shared" with
 * exactly the answer a free id gets; then A and B each read, append to, subscribe to and list
 * their own "shared" and never see the other's data, nor a storage key (an id with its tenant
 * attached) in any answer, error or cursor. A's CONFLICT on its own duplicate stays, a fork in B
 * of B's "shared" records forkedFrom "shared", and a thread id with a control character is a
 * typed VALIDATION_FAILED naming the field. The CLI names threads of `--tenant` (default:
 * default): `weft import` under an id only another tenant uses succeeds too.
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { WebSocket } from 'ws';
import {
  createEngine,
  DEFAULT_TENANT,
  type Engine,
  projectLog,
  qualifiedKey,
} from '../../src/engine/index.js';
import { createEventHub, type EventHub } from '../../src/events/index.js';
import { type App, buildApp } from '../../src/server/app.js';
import { apiKeys, createAuthenticator } from '../../src/server/auth/index.js';
import { loadConfig } from '../../src/server/config.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { sseData } from '../api/subscriptions-support.js';
import { freshDatabase } from '../auth/support.js';
import { weftIn } from '../cli/support.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../support/services.js';

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`tenant-thread-ids: Postgres cases skipped (${pg.reason})`);
}

// biome-ignore lint/suspicious/noExplicitAny: tests read response data loosely
type Json = any;
type Answer = { data?: Json; errors?: Array<{ message: string; extensions?: Json }> };

const SHARED = 'shared';
const TENANTS = { a: 'acme', b: 'globex', c: 'initech', d: 'umbrella' } as const;

/** What a storage key would show: the separator, or a tenant name next to a thread id. */
function expectNoStorageForm(value: unknown): void {
  const text = JSON.stringify(value);
  expect(text).not.toContain('\\u001f');
  for (const tenant of Object.values(TENANTS)) expect(text).not.toContain(tenant);
}

/** `value` with the JSON string `id` replaced by "<id>": answers for two ids, compared. */
const normalised = (value: unknown, id: string): unknown =>
  JSON.parse(JSON.stringify(value).split(JSON.stringify(id)).join('"<id>"'));

const ERR = `__typename ... on Error { code message }
  ... on ValidationError { issues { path } }
  ... on ConflictError { threadId expectedIndex actualIndex }`;
const THREAD = 'thread { id logLength forkedFrom { upToIndex thread { id } } }';
const CREATE = `mutation($id: ID!) { createThread(input: { threadId: $id }) {
  ${ERR} ... on CreateThreadSuccess { logIndex ${THREAD} } } }`;
const FORK = `mutation($from: ID!, $id: ID!) { forkThread(input: { threadId: $from, newThreadId: $id }) {
  ${ERR} ... on ForkThreadSuccess { logIndex ${THREAD} } } }`;
const IMPORT = `mutation($id: ID!, $s: JSON!) { importState(input: { threadId: $id, state: $s }) {
  ${ERR} ... on ImportStateSuccess { logIndex ${THREAD} } } }`;
const APPEND = `mutation($id: ID!, $p: JSON!, $at: Int) {
  appendNodes(input: { threadId: $id, expectedIndex: $at, nodes: [{ kind: INFERENCE, payload: $p }] }) {
  ${ERR} ... on AppendNodesSuccess { logIndex thread { id logLength } nodes { threadId payload } } } }`;
const READ = `query($id: ID!) { thread(id: $id) { id logLength forkedFrom { thread { id } }
  nodes(first: 100) { edges { node { threadId payload } } }
  events(first: 100) { edges { node { threadId type entry } } } } }`;

interface Server {
  app: App;
  engine: Engine;
  hub: EventHub;
  db: WeftPrisma;
  url: string;
  keys: Record<keyof typeof TENANTS, string>;
  /** A key of the default tenant (the one open mode writes as). */
  defaultKey: string;
  clients: Client[];
  close(): Promise<void>;
}

async function startServer(backend: 'sqlite' | 'postgres'): Promise<Server> {
  let database: TestDatabase | undefined;
  let databaseUrl: string;
  if (backend === 'postgres') {
    database = await createTestDatabase();
    databaseUrl = database.url;
    await migrate(databaseUrl);
  } else {
    databaseUrl = await freshDatabase();
  }
  const store = openThreadStore(databaseUrl);
  const hub = createEventHub({ store });
  await hub.ready;
  const engine = createEngine({ store, publisher: hub });
  const db = createPrisma(databaseUrl);
  const keyStore = apiKeys(db);
  const auth = createAuthenticator({ keys: keyStore, mode: 'keys', openCheckMs: 0 });
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_REQUEST_LOG: 'off',
  });
  const app = buildApp({ config, engine, auth, extendContext: () => ({ events: hub }) });
  const url = await app.start();
  const keys = {} as Record<keyof typeof TENANTS, string>;
  for (const [name, tenant] of Object.entries(TENANTS)) {
    const scopes = name === 'a' ? ['admin'] : ['read', 'write'];
    keys[name as keyof typeof TENANTS] = (
      await keyStore.create({ tenant, scopes: scopes as never })
    ).key;
  }
  const defaultKey = (await keyStore.create({ tenant: DEFAULT_TENANT, scopes: ['read', 'write'] }))
    .key;
  const clients: Client[] = [];
  return {
    app,
    engine,
    hub,
    db,
    url,
    keys,
    defaultKey,
    clients,
    async close() {
      for (const client of clients) await client.dispose();
      await app.stop();
      await hub.close();
      await engine.close();
      await db.prisma.$disconnect();
      await database?.drop();
    },
  };
}

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pg.available)(
    `tenant thread ids on ${backend}`,
    () => {
      let s: Server;
      /** A's state export of "shared", for the imports. */
      let state: Json;

      async function gql(
        key: string,
        query: string,
        variables: Record<string, unknown> = {},
      ): Promise<Answer> {
        const response = await fetch(s.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            authorization: `Bearer ${key}`,
          },
          body: JSON.stringify({ query, variables }),
        });
        return (await response.json()) as Answer;
      }

      /** The data of an answer that must have no errors. */
      async function data(key: string, query: string, variables: Record<string, unknown> = {}) {
        const answer = await gql(key, query, variables);
        expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
        return answer.data;
      }

      /** A graphql-ws subscription of the tenant of `key`, as a pull iterator. */
      function subscribe(key: string, query: string, variables: Record<string, unknown>) {
        const client = createClient({
          url: s.url.replace(/^http/, 'ws'),
          webSocketImpl: WebSocket,
          retryAttempts: 0,
          lazy: true,
          connectionParams: { authorization: `Bearer ${key}` },
        });
        s.clients.push(client);
        return client.iterate({ query, variables }) as AsyncIterableIterator<Answer>;
      }

      async function next(stream: AsyncIterableIterator<Answer>): Promise<Json> {
        const step = await stream.next();
        if (step.done === true) throw new Error('the subscription ended');
        expect(step.value.errors, JSON.stringify(step.value.errors)).toBeUndefined();
        return step.value.data;
      }

      beforeAll(async () => {
        s = await startServer(backend);
        const made = await data(s.keys.a, CREATE, { id: SHARED });
        expect(made.createThread.__typename).toBe('CreateThreadSuccess');
        await data(s.keys.a, APPEND, { id: SHARED, p: { secret: "A's plan" } });
        state = (
          await data(s.keys.a, 'query($id: ID!) { thread(id: $id) { state } }', { id: SHARED })
        ).thread.state;
      }, 60_000);
      afterAll(() => s?.close());

      it('createThread, forkThread and importState under an id only another tenant uses succeed, answered exactly like a free id', async () => {
        // B: created.
        const taken = await data(s.keys.b, CREATE, { id: SHARED });
        const free = await data(s.keys.b, CREATE, { id: 'free-b' });
        expect(taken.createThread).toMatchObject({
          __typename: 'CreateThreadSuccess',
          logIndex: 0,
          thread: { id: SHARED, logLength: 1, forkedFrom: null },
        });
        expect(normalised(taken, SHARED)).toEqual(normalised(free, 'free-b'));

        // C: forked to it, from a thread of its own.
        await data(s.keys.c, CREATE, { id: 'c-source' });
        const forked = await data(s.keys.c, FORK, { from: 'c-source', id: SHARED });
        const forkedFree = await data(s.keys.c, FORK, { from: 'c-source', id: 'free-c' });
        expect(forked.forkThread).toMatchObject({
          __typename: 'ForkThreadSuccess',
          thread: { id: SHARED, forkedFrom: { upToIndex: 1, thread: { id: 'c-source' } } },
        });
        expect(normalised(forked, SHARED)).toEqual(normalised(forkedFree, 'free-c'));

        // D: imported under it.
        const imported = await data(s.keys.d, IMPORT, { id: SHARED, s: state });
        const importedFree = await data(s.keys.d, IMPORT, { id: 'free-d', s: state });
        expect(imported.importState).toMatchObject({
          __typename: 'ImportStateSuccess',
          thread: { id: SHARED, logLength: 1 },
        });
        expect(normalised(imported, SHARED)).toEqual(normalised(importedFree, 'free-d'));
        expectNoStorageForm([taken, free, forked, forkedFree, imported, importedFree]);

        // A's own duplicate is still taken: CONFLICT, naming the id as A knows it.
        const again = await data(s.keys.a, CREATE, { id: SHARED });
        expect(again.createThread).toMatchObject({
          __typename: 'ConflictError',
          code: 'CONFLICT',
          threadId: SHARED,
          expectedIndex: 0,
          actualIndex: 2,
        });
        // So is B's, now that B has one: the same answer A gets for its own.
        const bAgain = await data(s.keys.b, CREATE, { id: SHARED });
        expect(bAgain.createThread).toMatchObject({
          __typename: 'ConflictError',
          threadId: SHARED,
          expectedIndex: 0,
          actualIndex: 1,
        });
        expectNoStorageForm([again, bAgain]);
      });

      it('each tenant reads and appends to its own "shared" only, with its id everywhere', async () => {
        const b = await data(s.keys.b, APPEND, { id: SHARED, p: { by: 'B' } });
        expect(b.appendNodes).toMatchObject({
          __typename: 'AppendNodesSuccess',
          logIndex: 1,
          thread: { id: SHARED, logLength: 2 },
          nodes: [{ threadId: SHARED, payload: { by: 'B' } }],
        });
        const a = await data(s.keys.a, APPEND, { id: SHARED, p: { by: 'A' } });
        expect(a.appendNodes).toMatchObject({
          logIndex: 2,
          thread: { id: SHARED, logLength: 3 },
          nodes: [{ threadId: SHARED, payload: { by: 'A' } }],
        });

        const readA = (await data(s.keys.a, READ, { id: SHARED })).thread;
        const readB = (await data(s.keys.b, READ, { id: SHARED })).thread;
        const payloads = (t: Json) => t.nodes.edges.map((e: Json) => e.node.payload);
        expect(readA).toMatchObject({ id: SHARED, logLength: 3 });
        expect(payloads(readA)).toEqual([{ secret: "A's plan" }, { by: 'A' }]);
        expect(readB).toMatchObject({ id: SHARED, logLength: 2 });
        expect(payloads(readB)).toEqual([{ by: 'B' }]);
        for (const thread of [readA, readB]) {
          for (const e of thread.nodes.edges) expect(e.node.threadId).toBe(SHARED);
          for (const e of thread.events.edges) expect(e.node.threadId).toBe(SHARED);
          // The log names the thread by its id: thread_created says "shared" in both.
          expect(thread.events.edges[0].node.entry.event).toMatchObject({
            type: 'thread_created',
            threadId: SHARED,
          });
        }
        expect(JSON.stringify(readB)).not.toContain("A's plan");
        expectNoStorageForm([readA, readB]);

        // A stale expectedIndex is B's CONFLICT on B's thread, in B's terms.
        const stale = await data(s.keys.b, APPEND, { id: SHARED, p: { late: true }, at: 0 });
        expect(stale.appendNodes).toMatchObject({
          __typename: 'ConflictError',
          threadId: SHARED,
          expectedIndex: 0,
          actualIndex: 2,
        });
        expectNoStorageForm(stale);

        // Runs name their thread by id too, and each tenant lists only its own.
        const run = await data(
          s.keys.b,
          `mutation { startRun(input: { threadId: "${SHARED}", goal: "B's", runId: "r1" }) {
          ${ERR} ... on StartRunSuccess { run { id threadId thread { id } } } } }`,
        );
        expect(run.startRun.run).toEqual({ id: 'r1', threadId: SHARED, thread: { id: SHARED } });
        const runsB = await data(
          s.keys.b,
          `{ runs(filter: { threadId: "${SHARED}" }) { edges { cursor node { id threadId goal } } } }`,
        );
        expect(runsB.runs.edges.map((e: Json) => e.node)).toEqual([
          { id: 'r1', threadId: SHARED, goal: "B's" },
        ]);
        const runsA = await data(
          s.keys.a,
          `{ runs(filter: { threadId: "${SHARED}" }) { edges { node { id } } } }`,
        );
        expect(runsA.runs.edges).toEqual([]);
        const runA = await gql(s.keys.a, '{ run(id: "r1") { id } }');
        expect(runA.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
        const cursor = Buffer.from(runsB.runs.edges[0].cursor, 'base64url').toString('utf8');
        expectNoStorageForm([run, runsB, cursor]);
      });

      it('graphql-ws subscriptions of "shared" deliver each tenant its own thread only', async () => {
        const query = `subscription($id: ID!) { threadEvents(threadId: $id, afterIndex: -1) {
        threadId index type entry } }`;
        const streamA = subscribe(s.keys.a, query, { id: SHARED });
        const streamB = subscribe(s.keys.b, query, { id: SHARED });
        const nodesB = subscribe(
          s.keys.b,
          `subscription($id: ID!) { nodeAppended(threadId: $id, afterSequence: 0) { threadId payload } }`,
          { id: SHARED },
        );
        // Replay: A's log is A's (3 entries), B's is B's (3: created, appended, run started).
        const replayA = [await next(streamA), await next(streamA), await next(streamA)];
        const replayB = [await next(streamB), await next(streamB), await next(streamB)];
        expect(replayA.map((d) => d.threadEvents.index)).toEqual([0, 1, 2]);
        expect(replayB.map((d) => d.threadEvents.type)).toEqual([
          'thread_created',
          'nodes_appended',
          'run_started',
        ]);
        expect(JSON.stringify(replayA)).toContain("A's plan");
        expect(JSON.stringify(replayB)).not.toContain("A's plan");
        expect((await next(nodesB)).nodeAppended).toEqual({
          threadId: SHARED,
          payload: { by: 'B' },
        });

        // Live: B's write reaches B's streams; A's next event is A's own write, not B's.
        await data(s.keys.b, APPEND, { id: SHARED, p: { live: 'B' } });
        await data(s.keys.a, APPEND, { id: SHARED, p: { live: 'A' } });
        const liveB = (await next(streamB)).threadEvents;
        const liveA = (await next(streamA)).threadEvents;
        expect(liveB).toMatchObject({ threadId: SHARED, index: 3, type: 'nodes_appended' });
        expect(JSON.stringify(liveB.entry)).toContain('"live":"B"');
        expect(liveA).toMatchObject({ threadId: SHARED, index: 3, type: 'nodes_appended' });
        expect(JSON.stringify(liveA.entry)).toContain('"live":"A"');
        // graphql-ws delivers in order: B's run-start node would come before; the next node is B's.
        const nodes: Json[] = [];
        for (;;) {
          const node = (await next(nodesB)).nodeAppended;
          nodes.push(node);
          if ((node.payload as Json)?.live !== undefined) break;
        }
        expect(nodes.at(-1)).toEqual({ threadId: SHARED, payload: { live: 'B' } });
        for (const node of nodes) expect(node.threadId).toBe(SHARED);
        expectNoStorageForm([replayA, replayB, liveA, liveB, nodes]);
        for (const stream of [streamA, streamB, nodesB]) await stream.return?.();
      });

      it('SSE subscriptions of "shared" replay each tenant its own log', async () => {
        const query = `subscription($id: ID!) { threadEvents(threadId: $id, afterIndex: -1) {
        threadId index type entry } }`;
        const firsts: Json[] = [];
        for (const key of [s.keys.a, s.keys.b]) {
          const controller = new AbortController();
          const response = await fetch(s.url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'text/event-stream',
              authorization: `Bearer ${key}`,
            },
            body: JSON.stringify({ query, variables: { id: SHARED } }),
            signal: controller.signal,
          });
          const events = sseData(response.body, controller.signal);
          const seen: Json[] = [];
          for (let i = 0; i < 2; i++) {
            const step = await events.next();
            expect(step.done).toBe(false);
            seen.push((step.value as Answer).data.threadEvents);
          }
          controller.abort();
          await events.return(undefined);
          firsts.push(seen);
        }
        const [a, b] = firsts;
        for (const events of [a, b]) {
          expect(events.map((e: Json) => [e.threadId, e.index])).toEqual([
            [SHARED, 0],
            [SHARED, 1],
          ]);
          expect(events[0].entry.event).toMatchObject({ type: 'thread_created', threadId: SHARED });
        }
        expect(JSON.stringify(a)).toContain("A's plan");
        expect(JSON.stringify(b)).toContain('"by":"B"');
        expect(JSON.stringify(b)).not.toContain("A's plan");
        expectNoStorageForm(firsts);
      });

      it('each tenant lists only its own threads, one "shared", with cursors free of storage keys', async () => {
        const list = async (key: string) => {
          const page = await data(key, '{ threads(first: 100) { edges { cursor node { id } } } }');
          return page.threads.edges as Array<{ cursor: string; node: { id: string } }>;
        };
        const a = await list(s.keys.a);
        const b = await list(s.keys.b);
        // Oldest first; a fork is as old as its source, so ties are ordered by id.
        const ids = (edges: Array<{ node: { id: string } }>) => edges.map((e) => e.node.id).sort();
        expect(ids(a)).toEqual([SHARED]);
        expect(ids(b)).toEqual(['free-b', SHARED]);
        expect(ids(await list(s.keys.c))).toEqual(['c-source', 'free-c', SHARED]);
        expect(ids(await list(s.keys.d))).toEqual(['free-d', SHARED]);
        const cursors = [...a, ...b].map((e) =>
          Buffer.from(e.cursor, 'base64url').toString('utf8'),
        );
        expectNoStorageForm(cursors);
        // Paging by those cursors walks B's list.
        const after = await data(
          s.keys.b,
          'query($after: String) { threads(first: 1, after: $after) { edges { node { id } } } }',
          { after: b[0]!.cursor },
        );
        expect(after.threads.edges.map((e: Json) => e.node.id)).toEqual([b[1]!.node.id]);
      });

      it('a fork in B of B\'s "shared" records forkedFrom "shared"', async () => {
        const forked = await data(s.keys.b, FORK, { from: SHARED, id: 'b-fork' });
        expect(forked.forkThread).toMatchObject({
          __typename: 'ForkThreadSuccess',
          thread: { id: 'b-fork', forkedFrom: { thread: { id: SHARED } } },
        });
        const read = (await data(s.keys.b, READ, { id: 'b-fork' })).thread;
        const last = read.events.edges.at(-1).node;
        expect(last.entry.event).toMatchObject({
          type: 'thread_forked',
          threadId: 'b-fork',
          fromThreadId: SHARED,
        });
        const forks = `query($f: ID!) { threads(filter: { forkedFrom: $f }) { edges { node { id } } } }`;
        expect((await data(s.keys.b, forks, { f: SHARED })).threads.edges).toEqual([
          { node: { id: 'b-fork' } },
        ]);
        expect((await data(s.keys.a, forks, { f: SHARED })).threads.edges).toEqual([]);
        const diff = await data(
          s.keys.b,
          `{ diffThreads(a: "${SHARED}", b: "b-fork") { commonPrefix onlyB { threadId type } } }`,
        );
        expect(diff.diffThreads).toEqual({
          commonPrefix: read.events.edges.length - 1,
          onlyB: [{ threadId: 'b-fork', type: 'thread_forked' }],
        });
        expectNoStorageForm([forked, read, diff]);
      });

      it('a thread a tenant created before ids were per tenant keeps its plain key and is still its own', async () => {
        // As such a thread was stored: under its plain id, owned by acme.
        expect((await s.engine.createThread({ threadId: 'template' })).ok).toBe(true);
        const projected = projectLog('legacy', await s.engine.store.readEntries('template'));
        if (!projected.ok) throw new Error(projected.error.message);
        const changes = projected.value.changes!;
        changes.thread.tenantId = TENANTS.a;
        expect((await s.engine.store.commit(changes)).ok).toBe(true);

        const read = await data(s.keys.a, READ, { id: 'legacy' });
        expect(read.thread).toMatchObject({ id: 'legacy', logLength: 1 });
        const appended = await data(s.keys.a, APPEND, { id: 'legacy', p: { old: 'A' } });
        expect(appended.appendNodes).toMatchObject({ thread: { id: 'legacy', logLength: 2 } });
        const taken = await data(s.keys.a, CREATE, { id: 'legacy' });
        expect(taken.createThread).toMatchObject({ __typename: 'ConflictError', actualIndex: 2 });
        // Another tenant, and the default tenant (whose ids are plain keys), make their own.
        for (const key of [s.keys.b, s.defaultKey]) {
          const own = await data(key, CREATE, { id: 'legacy' });
          expect(own.createThread).toMatchObject({
            __typename: 'CreateThreadSuccess',
            thread: { id: 'legacy', logLength: 1 },
          });
          expect((await data(key, READ, { id: 'legacy' })).thread.nodes.edges).toEqual([]);
        }
        expect((await data(s.defaultKey, CREATE, { id: 'legacy' })).createThread.__typename).toBe(
          'ConflictError',
        );
        expect((await data(s.keys.a, READ, { id: 'legacy' })).thread.logLength).toBe(2);
        // The plain key stays acme's; the others are qualified, the default tenant's too.
        const owner = (key: string) => s.engine.store.getThreadTenant(key);
        expect(await owner('legacy')).toBe(TENANTS.a);
        expect(await owner(qualifiedKey('legacy', TENANTS.b))).toBe(TENANTS.b);
        expect(await owner(qualifiedKey('legacy', DEFAULT_TENANT))).toBe(DEFAULT_TENANT);
      });

      it('refuses a new thread id with a control character (VALIDATION_FAILED naming the field) and never resolves a storage key as an id', async () => {
        const created = await data(s.keys.b, CREATE, { id: 'tab\there' });
        expect(created.createThread).toMatchObject({
          __typename: 'ValidationError',
          code: 'VALIDATION_FAILED',
          issues: [{ path: '$.threadId' }],
        });
        expect(created.createThread.message).toContain('control characters');
        const forked = await data(s.keys.b, FORK, { from: SHARED, id: `x\u001f${TENANTS.a}` });
        expect(forked.forkThread).toMatchObject({
          __typename: 'ValidationError',
          issues: [{ path: '$.newThreadId' }],
        });
        const imported = await data(s.keys.b, IMPORT, { id: 'bell\u0007', s: state });
        expect(imported.importState).toMatchObject({ issues: [{ path: '$.threadId' }] });
        // A storage key is not an id: not even the owner reaches its thread through it.
        for (const key of [s.keys.a, s.keys.b]) {
          const read = await gql(key, 'query($id: ID!) { thread(id: $id) { id } }', {
            id: `${SHARED}\u001f${TENANTS.a}`,
          });
          expect(read.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
        }
      });
    },
  );
}

describe('weft export / import / verify with --tenant', () => {
  it("imports under an id only another tenant uses, and addresses each tenant's thread by id", async () => {
    const url = await freshDatabase();
    const env = { DATABASE_URL: url };
    const engine = createEngine({ store: openThreadStore(url) });
    const acme = engine.forTenant(TENANTS.a);
    try {
      expect((await acme.createThread({ threadId: SHARED })).ok).toBe(true);
      const appended = await acme.appendNodes({
        threadId: SHARED,
        nodes: [{ kind: 'inference', payload: { secret: "A's plan" } }],
      });
      expect(appended.ok).toBe(true);
    } finally {
      await engine.close();
    }
    const file = join(tmpdir(), `weft-tenant-ids-${process.pid}-${Date.now()}.jsonl`);
    onTestFinished(() => rmSync(file, { force: true }));

    const exported = await weftIn(['export', SHARED, '--tenant', TENANTS.a, '--out', file], env);
    expect(exported.code).toBe(0);
    const [header] = readFileSync(file, 'utf8').split('\n');
    expect(JSON.parse(header!)).toMatchObject({ threadId: SHARED, entries: 2 });
    expectNoStorageForm(readFileSync(file, 'utf8'));

    const notDefault = await weftIn(['export', SHARED], env);
    expect(notDefault.code).toBe(1);
    expect(notDefault.err).toContain(`thread ${SHARED} does not exist in tenant default`);
    expect(notDefault.err).toContain('--tenant');

    const imported = await weftIn(['import', file, '--tenant', TENANTS.b], env);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain(`thread ${SHARED} created with 2 entries`);
    expect(imported.out).toContain(`in tenant ${TENANTS.b}`);
    const again = await weftIn(['import', file, '--tenant', TENANTS.b], env);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`thread ${SHARED} already exists`);
    expect((await weftIn(['import', file], env)).code).toBe(0);

    const bad = await weftIn(['import', file, '--thread-id', 'tab\there'], env);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('VALIDATION_FAILED');
    expect(bad.err).toContain('$.threadId');

    const one = await weftIn(['verify', SHARED, '--tenant', TENANTS.b], env);
    expect(one.code).toBe(0);
    expect(one.out).toContain(`thread ${SHARED} (tenant ${TENANTS.b}): ok, 2 entries verified`);
    const all = await weftIn(['verify'], env);
    expect(all.code).toBe(0);
    expect(all.out.trim().split('\n').sort()).toEqual(
      [
        `weft verify: thread ${SHARED} (tenant ${TENANTS.a}): ok, 2 entries verified (strict)`,
        `weft verify: thread ${SHARED} (tenant ${TENANTS.b}): ok, 2 entries verified (strict)`,
        `weft verify: thread ${SHARED}: ok, 2 entries verified (strict)`,
      ].sort(),
    );
    expect((await weftIn(['replay', SHARED, '--tenant', TENANTS.a], env)).code).toBe(0);
    const view = await weftIn(['projection', SHARED, '--tenant', TENANTS.b], env);
    expect(view.code, view.err).toBe(0);
    expect(view.out).toContain("A's plan");
    const missing = await weftIn(['projection', SHARED, '--tenant', TENANTS.c], env);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(`does not exist in tenant ${TENANTS.c}`);
    expectNoStorageForm(
      [one.out, all.out, view.out, view.err, missing.err]
        .join('')
        .replaceAll(/\(tenant [a-z]+\)|in tenant [a-z]+/g, ''),
    );
  });
});

describe('looking an id up', () => {
  it('asks the store the same for an id another tenant uses as for a free id, whatever the cache knows', async () => {
    const store = openThreadStore(await freshDatabase());
    let asked = 0;
    const counted = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'getThreadTenant') {
          return (key: string) => {
            asked++;
            return target.getThreadTenant(key);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const engine = createEngine({ store: counted });
    try {
      const a = engine.forTenant(TENANTS.a);
      const b = engine.forTenant(TENANTS.b);
      const open = engine.forTenant(DEFAULT_TENANT);
      expect((await a.createThread({ threadId: SHARED })).ok).toBe(true);
      expect((await open.createThread({ threadId: 'plain' })).ok).toBe(true);
      // Both of them are in the cache now (their owners just used them).
      expect((await a.getState(SHARED)).ok).toBe(true);
      expect((await open.getState('plain')).ok).toBe(true);
      const cost = async (call: () => Promise<unknown>) => {
        asked = 0;
        await call();
        return asked;
      };
      for (const caller of [b, open, a]) {
        const free = await cost(() => caller.getState('free-id'));
        expect(free).toBeGreaterThan(0);
        for (const id of [SHARED, 'plain']) {
          const theirs = await caller.getState(id);
          if (theirs.ok) continue; // the caller's own thread
          expect(await cost(() => caller.getState(id))).toBe(free);
        }
      }
    } finally {
      await engine.close();
    }
  });
});
