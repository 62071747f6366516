/**
 * `Thread.events` over entries the store keeps packed: an `appendNodes` whose payloads total
 * 1,024 characters or more is stored without those payloads (they live in the node rows), and
 * every read of the log has to splice them back — and decrypt first when a key is set. Served
 * through the real GraphQL app on a fresh database, on SQLite and (when it answers) Postgres.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createReads } from '../../src/reads/index.js';
import { type App, buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { describeWithPostgres } from '../support/services.js';
import { freshPostgresUrl, freshSqliteUrl } from './support.js';

const KEY = randomBytes(32);

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

interface Served {
  app: App;
  engine: Engine;
  events(threadId: string, afterIndex?: number): Promise<EventNode[]>;
  close(): Promise<void>;
}

interface EventNode {
  index: number;
  id: string;
  type: string;
  entry: Record<string, unknown>;
}

const opened: Served[] = [];
afterAll(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function serve(url: string, encryptionKey: Uint8Array | undefined): Promise<Served> {
  const engine = createEngine({
    store: openThreadStore(url, encryptionKey === undefined ? {} : { encryptionKey }),
    clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
    ids: createSequentialIds('id'),
  });
  const reads = createReads(engine, { databaseUrl: url });
  const config = loadConfig({ DATABASE_URL: url, PORT: '0', WEFT_REQUEST_LOG: 'off' });
  const app = buildApp({ config, engine, reads });
  const served: Served = {
    app,
    engine,
    async events(threadId, afterIndex) {
      const response = await app.yoga.fetch('http://weft.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({
          query: `query($t: ID!, $after: Int) { thread(id: $t) {
            events(afterIndex: $after, first: 50) { edges { node { index id type entry } } }
          } }`,
          variables: { t: threadId, after: afterIndex ?? null },
        }),
      });
      const body = (await response.json()) as {
        data?: { thread: { events: { edges: Array<{ node: EventNode }> } } };
        errors?: Array<{ message: string }>;
      };
      expect(body.errors ?? []).toEqual([]);
      return body.data!.thread.events.edges.map((e) => e.node);
    },
    async close() {
      await app.stop();
      await reads.close();
      await engine.close();
    },
  };
  opened.push(served);
  return served;
}

/** A thread whose second entry is packed (payloads well over 1,024 characters), the rest not. */
async function writeThread(engine: Engine) {
  const { threadId } = must(await engine.createThread({ metadata: { purpose: 'events' } }));
  const big = Array.from({ length: 6 }, (_, i) => ({
    kind: 'tool_result' as const,
    payload: { i, text: `large payload ${i} ${'é€🙂'.repeat(120)}`, list: [i, 'x'.repeat(300)] },
  }));
  must(await engine.appendNodes({ threadId, nodes: big }));
  must(
    await engine.appendNodes({ threadId, nodes: [{ kind: 'inference', payload: { t: 'small' } }] }),
  );
  // Exactly at the threshold: one payload whose canonical text is 1,024 characters.
  const filler = 'y'.repeat(1024 - canonicalJson({ t: '' }).length);
  must(
    await engine.appendNodes({ threadId, nodes: [{ kind: 'inference', payload: { t: filler } }] }),
  );
  return { threadId, entries: await engine.store.readEntries(threadId) };
}

function describeBackend(name: string, freshUrl: () => Promise<string>) {
  describe(`Thread.events with packed entries: ${name}`, () => {
    for (const [label, key] of [
      ['without an encryption key', undefined],
      ['with an encryption key', KEY],
    ] as const) {
      it(`returns every entry, payloads included, ${label}`, async () => {
        const { engine, events } = await serve(await freshUrl(), key);
        const { threadId, entries } = await writeThread(engine);
        expect(entries).toHaveLength(4);
        const nodes = await events(threadId);
        expect(nodes.map((n) => n.index)).toEqual([0, 1, 2, 3]);
        expect(nodes.map((n) => n.id)).toEqual(entries.map((e) => e.id));
        expect(nodes.map((n) => n.type)).toEqual(entries.map((e) => e.event.type));
        nodes.forEach((node, i) => {
          expect(canonicalJson(node.entry)).toBe(canonicalJson(entries[i]));
        });
        const appended = nodes[1]!.entry as { event: { nodes: Array<{ payload: unknown }> } };
        expect(JSON.stringify(appended.event)).toContain('large payload 5');
        // A page starting after the packed entry, and one made of it alone.
        expect((await events(threadId, 1)).map((n) => n.index)).toEqual([2, 3]);
        expect((await events(threadId, 0)).map((n) => n.index)).toEqual([1, 2, 3]);
      });
    }
  });
}

describeBackend('sqlite', freshSqliteUrl);
describeWithPostgres('Thread.events with packed entries', () => {
  describeBackend('postgres', freshPostgresUrl);
});
