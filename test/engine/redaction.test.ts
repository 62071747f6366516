/**
 * Redaction in the engine, on SQLite and Postgres: a redacted node keeps its
 * id, edges and place in the log, its payload becomes a tombstone everywhere it was stored (node
 * row, entry text, search index, snapshots, stored responses) — in the thread asked, in its
 * source when the node is shared, and in every fork sharing it — each live thread records a
 * `nodes_redacted` entry, strict verification reports the redacted nodes instead of failing, a
 * fresh engine replays the logs, and bad input is a typed error that writes nothing.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { rawQuery } from '../../src/store/prisma/raw.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type Backend,
  failure,
  footprint,
  must,
  postgresBackend,
  sqliteBackend,
  useBackend,
} from './support.js';

const SECRET = 'card 4111-1111-1111-1111';
const big = (word: string) => `${word} ${'x'.repeat(1500)}`;

function redactionSuite(backend: Backend) {
  const opened: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const o of opened.splice(0).reverse()) await o.close();
  });

  async function open(url?: string) {
    const databaseUrl = url ?? (await backend.freshUrl());
    const engine = createEngine({
      store: openThreadStore(databaseUrl),
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds(`id-${opened.length}`),
      snapshots: { entries: 2, nodes: 2 },
    });
    opened.push(engine);
    return { engine, url: databaseUrl };
  }

  /** Every stored text column of the database, joined: where a secret could still be. */
  async function storedText(url: string): Promise<string> {
    if (url.startsWith('file:')) {
      const path = url.slice('file:'.length);
      let all = readFileSync(path).toString('latin1');
      try {
        all += readFileSync(`${path}-wal`).toString('latin1');
      } catch {}
      return all;
    }
    const weft = createPrisma(url);
    try {
      const parts: string[] = [];
      for (const table of ['node', 'log_entry', 'node_text', 'snapshot', 'idempotency_record']) {
        const rows = await rawQuery(weft, `SELECT * FROM "${table}"`);
        parts.push(
          JSON.stringify(rows, (_k, v) =>
            v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
          ),
        );
      }
      return parts.join('\n');
    } finally {
      await weft.prisma.$disconnect();
    }
  }

  async function grow(engine: Engine, threadId: string) {
    must(await engine.createThread({ threadId }));
    const first = must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'goal', payload: { text: 'book a table' } }],
      }),
    ).nodes[0]!;
    const secret = must(
      await engine.appendNodes({
        threadId,
        idempotencyKey: 'secret-append',
        nodes: [
          { kind: 'inference', payload: { text: SECRET }, parents: [first.id] },
          { kind: 'inference', payload: { text: big('kept beside it') } },
        ],
      }),
    ).nodes;
    const bigSecret = must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'tool_result', payload: { text: big(`packed ${SECRET}`) } }],
      }),
    ).nodes[0]!;
    const tiny = must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'tool_call', payload: { text: `tiny ${SECRET}` } }],
      }),
    ).nodes[0]!;
    const after = must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'answer', payload: { text: 'done' }, parents: [secret[0]!.id] }],
      }),
    ).nodes[0]!;
    return { first, secret: secret[0]!, beside: secret[1]!, bigSecret, tiny, after };
  }

  it('withholds payloads everywhere they were stored, keeping ids, edges and the log verifiable', async () => {
    const { engine, url } = await open();
    const n = await grow(engine, 't');
    const before = must(await engine.getState('t'));
    expect(await storedText(url)).toContain(SECRET);

    const result = must(
      await engine.redactNodes({
        threadId: 't',
        nodeIds: [n.secret.id, n.bigSecret.id, n.tiny.id],
        reason: 'GDPR erasure request #12',
        actor: 'key_admin',
      }),
    );
    expect(result.redactedNodeIds).toEqual([n.secret.id, n.bigSecret.id, n.tiny.id]);
    expect(result.alreadyRedactedNodeIds).toEqual([]);
    expect(result.logLength).toBe(before.length + 1);

    const state = must(await engine.stateAt('t')).agentState;
    const byId = new Map(state.nodes.map((node) => [node.id, node]));
    const tomb = byId.get(n.secret.id)!;
    expect(tomb.payload).toEqual({
      'weft:redacted': { reason: 'GDPR erasure request #12', redactedAt: expect.any(String) },
    });
    // Ids, kinds and edges stay; the node beside it in the same entry keeps its payload.
    expect(tomb.kind).toBe('inference');
    expect(tomb.parents).toEqual([n.first.id]);
    expect(byId.get(n.after.id)!.parents).toEqual([n.secret.id]);
    expect(byId.get(n.beside.id)!.payload).toEqual(n.beside.payload);

    // The log: the creating entries read with tombstones, the redaction recorded.
    const entries = await engine.store.readEntries('t');
    const texts = entries.map((e) => JSON.stringify(e));
    expect(texts.join('\n')).not.toContain(SECRET);
    const last = entries.at(-1)!;
    expect(last.event).toMatchObject({
      type: 'nodes_redacted',
      reason: 'GDPR erasure request #12',
      actor: 'key_admin',
      nodes: [
        { id: n.secret.id, index: 2, digest: expect.any(String) },
        { id: n.bigSecret.id, index: 3, digest: expect.any(String) },
        { id: n.tiny.id, index: 4, digest: expect.any(String) },
      ],
    });

    // Strict verification reports the redacted nodes, and still checks everything else.
    const report = must(await engine.verify('t', { strict: true }));
    expect(report.ok).toBe(true);
    expect(report.redactedNodes).toEqual([
      { nodeId: n.secret.id, index: 2, recorded: true },
      { nodeId: n.bigSecret.id, index: 3, recorded: true },
      { nodeId: n.tiny.id, index: 4, recorded: true },
    ]);

    // Nothing of the secret is left in any stored column (on SQLite: anywhere in the file, free
    // pages and the search index included).
    await engine.close();
    opened.splice(opened.indexOf(engine), 1);
    expect(await storedText(url)).not.toContain(SECRET);

    // A fresh engine replays the log from scratch (no cache, no snapshot) to the same state.
    const { engine: fresh } = await open(url);
    const again = must(await fresh.getState('t'));
    expect(again.stateHash).toBe(result.stateHash);
    expect(must(await fresh.stateAt('t', 3)).agentState.nodes.map((x) => x.payload)).toContainEqual(
      tomb.payload,
    );
    expect(must(await fresh.verify('t')).ok).toBe(true);
    // A retry of the append that wrote the secret no longer answers with it.
    const retried = await fresh.appendNodes({
      threadId: 't',
      idempotencyKey: 'secret-append',
      nodes: [
        { kind: 'inference', payload: { text: SECRET }, parents: [n.first.id] },
        { kind: 'inference', payload: { text: big('kept beside it') } },
      ],
    });
    expect(JSON.stringify(retried)).not.toContain(SECRET);
    // Redacting again writes nothing and says so.
    const log = must(await fresh.getState('t')).length;
    const twice = must(
      await fresh.redactNodes({ threadId: 't', nodeIds: [n.secret.id], reason: 'again' }),
    );
    expect(twice).toMatchObject({ redactedNodeIds: [], alreadyRedactedNodeIds: [n.secret.id] });
    expect(must(await fresh.getState('t')).length).toBe(log);
  });

  it('redacts a shared node for its source and every fork, each recording it', async () => {
    const { engine, url } = await open();
    const n = await grow(engine, 'src');
    const fork = must(await engine.forkThread({ threadId: 'src', newThreadId: 'fork' }));
    const forkOfFork = must(
      await engine.forkThread({ threadId: fork.threadId, newThreadId: 'fork2', upToIndex: 3 }),
    );
    // A fork from before the node: unaffected.
    must(await engine.forkThread({ threadId: 'src', newThreadId: 'early', upToIndex: 2 }));
    const early = must(await engine.getState('early')).stateHash;

    // Asked through the fork of the fork: the node's row is its source's.
    must(
      await engine.redactNodes({
        threadId: forkOfFork.threadId,
        nodeIds: [n.secret.id],
        reason: 'erasure',
      }),
    );
    for (const id of ['src', 'fork', 'fork2']) {
      const entries = await engine.store.readEntries(id);
      expect(entries.at(-1)!.event.type, id).toBe('nodes_redacted');
      expect(JSON.stringify(entries)).not.toContain(`"text":"${SECRET}`);
      const report = must(await engine.verify(id));
      expect(report.ok, id).toBe(true);
      expect(
        report.redactedNodes?.map((r) => r.nodeId),
        id,
      ).toContain(n.secret.id);
    }
    expect(must(await engine.getState('early')).stateHash).toBe(early);
    // The packed big secret is still there: only the named node went.
    expect(JSON.stringify(await engine.store.readEntries('fork'))).toContain('packed card');

    // Another engine (another process's view) reads the same.
    const { engine: other } = await open(url);
    const node = must(await other.stateAt('fork')).agentState.nodes.find(
      (x) => x.id === n.secret.id,
    )!;
    expect(node.payload).toHaveProperty(['weft:redacted', 'reason'], 'erasure');
  });

  it('refuses bad input with a typed error and writes nothing', async () => {
    const { engine } = await open();
    const n = await grow(engine, 't');
    const before = await footprint(engine.store);
    const cases: Array<[Parameters<Engine['redactNodes']>[0], string]> = [
      [{ threadId: 'nope', nodeIds: [n.secret.id], reason: 'r' }, 'NOT_FOUND'],
      [{ threadId: 't', nodeIds: ['sha256:unknown'], reason: 'r' }, 'NOT_FOUND'],
      [{ threadId: 't', nodeIds: [n.secret.id, 'missing'], reason: 'r' }, 'NOT_FOUND'],
      [{ threadId: 't', nodeIds: [], reason: 'r' }, 'VALIDATION_FAILED'],
      [{ threadId: 't', nodeIds: [n.secret.id], reason: '  ' }, 'VALIDATION_FAILED'],
      [{ threadId: 't', nodeIds: [n.secret.id], reason: 'x'.repeat(1001) }, 'VALIDATION_FAILED'],
      [{ threadId: 't', nodeIds: [n.secret.id], reason: 'bell\u0007' }, 'VALIDATION_FAILED'],
      [{ threadId: 't', nodeIds: Array(1001).fill(n.secret.id), reason: 'r' }, 'VALIDATION_FAILED'],
      [{ threadId: 't', nodeIds: [42 as unknown as string], reason: 'r' }, 'VALIDATION_FAILED'],
      [{ threadId: '', nodeIds: [n.secret.id], reason: 'r' }, 'VALIDATION_FAILED'],
    ];
    for (const [input, code] of cases) {
      expect(
        failure(await engine.redactNodes(input)).code,
        JSON.stringify(input).slice(0, 80),
      ).toBe(code);
    }
    expect(await footprint(engine.store)).toEqual(before);
    // A client cannot write a tombstone itself.
    const forged = failure(
      await engine.appendNodes({
        threadId: 't',
        nodes: [
          { kind: 'inference', payload: { 'weft:redacted': { reason: 'x', redactedAt: 'y' } } },
        ],
      }),
    );
    expect(forged.code).toBe('VALIDATION_FAILED');
    expect(await footprint(engine.store)).toEqual(before);
  });

  it('redacts memory, round-trips through an AgentState export, and works encrypted at rest', async () => {
    const key = new Uint8Array(32).fill(7);
    const databaseUrl = await backend.freshUrl();
    const engine = createEngine({
      store: openThreadStore(databaseUrl, { encryptionKey: key }),
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds('enc'),
    });
    opened.push(engine);
    must(await engine.createThread({ threadId: 'm' }));
    const fact = must(
      await engine.remember({ threadId: 'm', type: 'memory', key: 'passport', content: SECRET }),
    ).node;
    const large = must(
      await engine.appendNodes({
        threadId: 'm',
        nodes: [{ kind: 'tool_result', payload: { text: big(SECRET) } }],
      }),
    ).nodes[0]!;
    must(
      await engine.redactNodes({ threadId: 'm', nodeIds: [fact.id, large.id], reason: 'erasure' }),
    );
    const memory = must(await engine.stateAt('m')).agentState.nodes.find((x) => x.id === fact.id)!;
    expect(memory).toMatchObject({ kind: 'semantic', resourceKey: fact.resourceKey });
    expect(memory.payload).toHaveProperty(['weft:redacted', 'reason'], 'erasure');
    expect(must(await engine.verify('m'))).toMatchObject({ ok: true });
    // The exported AgentState (tombstones included) imports as a new thread.
    const exported = must(await engine.stateAt('m')).agentState;
    must(await engine.importState({ threadId: 'copy', state: exported }));
    const copy = must(await engine.stateAt('copy')).agentState;
    expect(copy.nodes.map((x) => x.payload)).toEqual(exported.nodes.map((x) => x.payload));
    expect(JSON.stringify(copy)).not.toContain(SECRET);
    // A fresh engine with the key opens every sealed row, the tombstones included.
    const fresh = createEngine({
      store: openThreadStore(databaseUrl, { encryptionKey: key }),
      ids: createSequentialIds('enc2'),
    });
    opened.push(fresh);
    expect(must(await fresh.getState('m')).length).toBe(4);
    expect(JSON.stringify(await fresh.store.readEntries('m'))).not.toContain(SECRET);
  });

  it('an entry changed after its redaction fails strict verification at that entry', async () => {
    const { engine, url } = await open();
    const n = await grow(engine, 't');
    must(await engine.redactNodes({ threadId: 't', nodeIds: [n.secret.id], reason: 'erasure' }));
    const weft = createPrisma(url);
    try {
      // Tamper with the kind of the other node the redacted entry created.
      const [row] = await rawQuery(
        weft,
        'SELECT "sequence" FROM "node" WHERE "thread_id" = ? AND "log_index" = 2 ORDER BY "sequence" DESC LIMIT 1',
        ['t'],
      );
      await rawQuery(
        weft,
        'UPDATE "node" SET "payload" = ? WHERE "thread_id" = ? AND "sequence" = ?',
        [JSON.stringify({ text: 'forged' }), 't', row!.sequence],
      );
    } finally {
      await weft.prisma.$disconnect();
    }
    const report = must(await engine.verify('t'));
    expect(report.ok).toBe(false);
    expect(report.firstBadIndex).toBe(2);
  });
}

describe('redaction on SQLite', () => redactionSuite(useBackend(sqliteBackend())));
describeWithPostgres('redaction on Postgres', () => redactionSuite(useBackend(postgresBackend())));
