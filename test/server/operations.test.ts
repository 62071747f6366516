/**
 * Operations: `/metrics` exposes the listed series; `/readyz` fails while
 * Postgres is unreachable and recovers when it returns; a server process under write load that
 * gets SIGTERM answers every request it received, closes subscriptions with 1001, exits 0, and
 * every acknowledged write is in the database afterwards.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createEngine } from '../../src/engine/index.js';
import { loadConfig } from '../../src/server/config.js';
import { startServer } from '../../src/server/serve.js';
import { freshSqliteUrl } from '../api/support.js';
import { postJson as post, spawnServe } from '../integration/support.js';
import { createTestDatabase, describeWithPostgres, POSTGRES_URL } from '../support/services.js';

const quiet = () => undefined;

/** A graphql-transport-ws subscriber: resolves `ready` on its first event; records the close. */
function subscriber(url: string, query: string) {
  const socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const events: unknown[] = [];
  const messages: string[] = [];
  let onFirst: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    onFirst = resolve;
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { type: string; payload?: unknown };
    messages.push(message.type);
    if (message.type === 'connection_ack') {
      socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
    } else if (message.type === 'next') {
      events.push(message.payload);
      onFirst();
    }
  });
  return { socket, events, messages, ready, closed };
}

const append = (threadId: string, mark: string) => ({
  query:
    'mutation Append($i: AppendNodesInput!) { appendNodes(input: $i) { __typename ... on AppendNodesSuccess { logIndex } } }',
  operationName: 'Append',
  variables: { i: { threadId, nodes: [{ kind: 'SYSTEM', payload: { mark } }] } },
});

const createThread = (threadId: string) => ({
  query: `mutation { createThread(input: { threadId: "${threadId}" }) { __typename } }`,
});

describe('/metrics', () => {
  it('exposes requests, errors, append latency, subscribers and log lengths; request ids are echoed', async () => {
    const config = {
      ...loadConfig({ DATABASE_URL: await freshSqliteUrl(), PORT: '0' }),
      requestLog: false,
    };
    const app = await startServer(config, quiet);
    const url = app.url!;
    try {
      expect((await post(url, createThread('m'))).ok).toBe(true);
      const sub = subscriber(url, 'subscription { nodeAppended(threadId: "m") { id } }');
      await new Promise((r) => sub.socket.once('open', r));
      for (let i = 0; i < 3; i++) {
        const r = await post(url, append('m', `m${i}`), { 'x-request-id': `given-${i}` });
        expect(r).toMatchObject({ ok: true, status: 200, requestId: `given-${i}` });
      }
      await sub.ready;
      const generated = await post(url, { query: '{ nope }' });
      expect(generated).toMatchObject({
        ok: true,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });

      const response = await fetch(url.replace('/graphql', '/metrics'));
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/text\/plain/);
      const text = await response.text();
      const series = (name: string) =>
        text.split('\n').filter((l) => l.startsWith(name) && !l.startsWith('#'));
      const value = (line: string | undefined) => Number(line?.split(' ').at(-1));

      expect(
        value(series('weft_http_requests_total{route="/graphql",method="POST",status="200"}')[0]),
      ).toBeGreaterThanOrEqual(5);
      expect(series('weft_graphql_errors_total').join('\n')).toMatch(/code="[A-Z_]+"\} 1/);
      expect(value(series('weft_append_duration_seconds_count{outcome="ok"}')[0])).toBe(3);
      expect(series('weft_append_duration_seconds_bucket').length).toBeGreaterThan(5);
      expect(value(series('weft_appended_nodes_total')[0])).toBe(3);
      // createThread brought the log to 1 entry, the appends to 2, 3 and 4.
      expect(value(series('weft_log_length_count')[0])).toBe(4);
      expect(value(series('weft_log_length_sum')[0])).toBe(1 + 2 + 3 + 4);
      expect(value(series('weft_subscribers')[0])).toBe(1);
      expect(value(series('weft_websocket_connections')[0])).toBe(1);
      expect(series('weft_graphql_operations_total{type="mutation"}')).toHaveLength(1);
      expect(series('weft_http_request_duration_seconds_bucket').length).toBeGreaterThan(0);
      expect(series('process_cpu_user_seconds_total')).toHaveLength(1);
      sub.socket.close();
      await sub.closed;
    } finally {
      await app.close();
    }
  });
});

describe('engine limits from the environment', () => {
  it('WEFT_MAX_PAYLOAD_BYTES bounds node payloads and memory values; WEFT_MAX_IMPORT_NODES bounds imports', async () => {
    const config = loadConfig({
      DATABASE_URL: await freshSqliteUrl(),
      PORT: '0',
      WEFT_MAX_PAYLOAD_BYTES: '1024',
      WEFT_MAX_IMPORT_NODES: '1',
      WEFT_REQUEST_LOG: 'false',
    });
    const app = await startServer(config, quiet);
    const url = app.url!;
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const r = await post(url, { query, variables });
      if (!r.ok) throw new Error(r.error);
      return r.body.data as Record<string, Record<string, unknown>>;
    };
    const ISSUES = '__typename ... on ValidationError { issues { path message } }';
    try {
      await gql('mutation { createThread(input: { threadId: "p" }) { __typename } }');
      const small = { text: 'x'.repeat(900) };
      const big = { text: 'x'.repeat(1100) };
      const append = `mutation($p: JSON!) { appendNodes(input: { threadId: "p", nodes: [{ kind: SYSTEM, payload: $p }] }) { ${ISSUES} } }`;
      expect((await gql(append, { p: small })).appendNodes).toEqual({
        __typename: 'AppendNodesSuccess',
      });
      expect((await gql(append, { p: { ...small, more: 1 } })).appendNodes).toEqual({
        __typename: 'AppendNodesSuccess',
      });
      expect((await gql(append, { p: big })).appendNodes).toMatchObject({
        __typename: 'ValidationError',
        issues: [{ message: expect.stringMatching(/over the limit of 1024/) }],
      });
      const remember = `mutation($c: JSON!) { remember(input: { threadId: "p", type: "note", key: "k", content: $c }) { ${ISSUES} } }`;
      expect((await gql(remember, { c: big })).remember).toMatchObject({
        __typename: 'ValidationError',
        issues: [{ message: expect.stringMatching(/over the limit of 1024/) }],
      });
      // The thread holds 2 nodes: over the import limit of 1.
      const state = (await gql('{ thread(id: "p") { state } }')).thread!.state;
      const imported = (
        await gql(
          'mutation($s: JSON!) { importState(input: { threadId: "q", state: $s }) { __typename ... on InvalidStateError { message } ... on ValidationError { issues { message } } } }',
          { s: state },
        )
      ).importState;
      expect(imported).toEqual({
        __typename: 'InvalidStateError',
        message: 'AgentState has 2 nodes; the limit is 1',
      });
    } finally {
      await app.close();
    }
  });
});

describeWithPostgres('/readyz', () => {
  it('answers 503 while the database refuses connections and 200 again once it accepts them', async () => {
    const db = await createTestDatabase();
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    const app = await startServer(
      { ...loadConfig({ DATABASE_URL: db.url, PORT: '0' }), requestLog: false },
      quiet,
    );
    const readyz = app.url!.replace('/graphql', '/readyz');
    const probe = async () => {
      const r = await fetch(readyz);
      return { status: r.status, body: (await r.json()) as { status: string } };
    };
    /** Probes until `status` (the pool may need a failed query to notice a dropped connection). */
    const until = async (status: number) => {
      let last = await probe();
      for (let i = 0; i < 50 && last.status !== status; i++) {
        await new Promise((r) => setTimeout(r, 100));
        last = await probe();
      }
      return last;
    };
    try {
      expect(await probe()).toEqual({ status: 200, body: { status: 'ready' } });
      // Unreachable: no new connections to this database, and the open ones terminated.
      await admin.query(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS false`);
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [db.name],
      );
      expect(await until(503)).toEqual({
        status: 503,
        body: { status: 'unavailable', reason: 'database unreachable' },
      });
      await admin.query(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`);
      expect(await until(200)).toEqual({ status: 200, body: { status: 'ready' } });
      expect((await fetch(app.url!.replace('/graphql', '/healthz'))).status).toBe(200);
    } finally {
      await admin.query(`ALTER DATABASE "${db.name}" ALLOW_CONNECTIONS true`).catch(quiet);
      await app.close();
      await admin.end();
      await db.drop();
    }
  });
});

const children: ChildProcessWithoutNullStreams[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

const SIGTERM_TITLE =
  'answers every request it received, closes subscriptions with 1001, and keeps every acknowledged write';

describe('SIGTERM under load', () => {
  it(SIGTERM_TITLE, async () => {
    await sigtermUnderLoad(await freshSqliteUrl(), 'sqlite');
  });
});

describeWithPostgres('SIGTERM under load', () => {
  it(SIGTERM_TITLE, async () => {
    const db = await createTestDatabase();
    try {
      await sigtermUnderLoad(db.url, 'postgres');
    } finally {
      await db.drop();
    }
  });
});

async function sigtermUnderLoad(databaseUrl: string, backend: string): Promise<void> {
  const server = await spawnServe({ DATABASE_URL: databaseUrl });
  children.push(server.process);
  const { url } = server;

  const threads = ['s0', 's1', 's2'];
  for (const t of threads) expect((await post(url, createThread(t))).ok).toBe(true);
  const sub = subscriber(url, 'subscription { nodeAppended(threadId: "s0") { id } }');
  // An SSE subscriber too: its stream must end (complete), and not hold up the drain.
  const sse = fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query: 'subscription { nodeAppended(threadId: "s1") { id } }' }),
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

  // 12 writers append back to back (each request on its own connection) until refused.
  const acknowledged: string[] = [];
  const answeredIds = new Set<string>();
  const failures: string[] = [];
  let sent = 0;
  let stopping = false;
  let signalled: () => void = () => undefined;
  const enoughWritten = new Promise<void>((resolve) => {
    signalled = resolve;
  });
  const writer = async (w: number) => {
    for (let n = 0; ; n++) {
      const mark = `w${w}-${n}`;
      const requestId = `req-${mark}-${randomUUID().slice(0, 8)}`;
      sent++;
      const r = await post(url, append(threads[w % threads.length]!, mark), {
        'x-request-id': requestId,
      });
      if (!r.ok) {
        failures.push(r.error);
        if (stopping) return;
        continue;
      }
      answeredIds.add(r.requestId ?? '');
      const result = (r.body.data as { appendNodes?: { __typename: string } } | undefined)
        ?.appendNodes;
      if (r.status === 200 && result?.__typename === 'AppendNodesSuccess') acknowledged.push(mark);
      if (acknowledged.length >= 150) signalled();
    }
  };
  const writers = Array.from({ length: 12 }, (_, w) => writer(w));
  await enoughWritten;
  await sub.ready;
  stopping = true;
  server.process.kill('SIGTERM');
  await Promise.all(writers);
  const { code } = await server.exited;
  const close = await sub.closed;
  const stdout = server.lines.join('\n');

  expect(code, server.stderr()).toBe(0);
  // Requests logged after the SIGTERM line were in flight when it came, answered while draining.
  const afterSignal = stdout.split('weft: SIGTERM: stopping')[1] ?? '';
  const drainedRequests = afterSignal.split('\n').filter((l) => l.includes('"requestId":"req-'));
  // Every request the server logged was answered, and the client received that answer.
  const logged = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'request' && String(l.requestId).startsWith('req-'));
  expect(logged.length).toBeGreaterThan(150);
  expect(logged.filter((l) => l.aborted === true)).toEqual([]);
  expect(logged.filter((l) => !answeredIds.has(String(l.requestId)))).toEqual([]);
  expect(logged[0]).toMatchObject({
    level: 'info',
    method: 'POST',
    path: '/graphql',
    operations: ['Append'],
    status: 200,
    durationMs: expect.any(Number),
  });
  // Requests that failed never reached the server (refused or reset before being read).
  for (const failure of new Set(failures)) {
    expect(failure).toMatch(/ECONNREFUSED|ECONNRESET|socket hang up/);
  }
  expect(close.code).toBe(1001);
  const stream = await sse;
  expect(stream.status).toBe(200);
  expect(stream.text).toMatch(/event: next[\s\S]*event: complete/);
  // Nothing was left running when the grace period ended (SSE streams do not count).
  expect(stdout).not.toMatch(/still running/);
  expect(stdout).toMatch(/weft: SIGTERM: stopping[\s\S]*weft: stopped/);

  // Every acknowledged write is in the database.
  const engine = createEngine({ databaseUrl });
  try {
    const stored = new Set<string>();
    for (const t of threads) {
      for (const entry of await engine.store.readEntries(t)) {
        for (const m of JSON.stringify(entry).matchAll(/\\?"mark\\?":\\?"(w\d+-\d+)/g)) {
          stored.add(m[1]!);
        }
      }
    }
    expect(acknowledged.filter((m) => !stored.has(m))).toEqual([]);
    console.log(
      `[sigterm ${backend}] ${sent} sent, ${acknowledged.length} acknowledged (all stored), ` +
        `${logged.length} received by the server (all answered; ${drainedRequests.length} of them ` +
        `during the drain), ${failures.length} refused at connect`,
    );
  } finally {
    await engine.close();
  }
}
