/**
 * The search index keeps no copy of a node's text, and what leaves the graph leaves the index: a
 * node's text is stored once (its payload; node_text.body stays null for a plain payload), and
 * after a redaction or a thread's deletion its words are neither found nor left in the index —
 * on SQLite not in the FTS5 segments (`node_search_data`, read raw) nor its vocabulary, on
 * Postgres in no tsvector.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine } from '../../src/engine/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { rawQuery } from '../../src/store/prisma/raw.js';
import { openThreadStore, type ThreadStore } from '../../src/store/read-model/index.js';
import { describeWithPostgres } from '../support/services.js';
import { type Backend, must, postgresBackend, sqliteBackend, useBackend } from './support.js';

// Words no other text starts like, so FTS5's prefix compression stores each one whole.
const REDACTED = 'qxvredactedword';
const DELETED = 'jzkdeletedword';
const KEPT = 'wmfkeptword';

/** Where each word could still be: the raw index on SQLite, the tsvectors on Postgres. */
async function indexHolds(url: string, word: string): Promise<boolean> {
  if (url.startsWith('file:')) {
    const db = new Database(url.slice('file:'.length), { readonly: true });
    try {
      const segments = db
        .prepare('SELECT "block" FROM "node_search_data"')
        .pluck()
        .all() as Buffer[];
      const inSegments = segments.some((b) => Buffer.from(b).includes(word));
      db.exec(`CREATE VIRTUAL TABLE temp."vocab" USING fts5vocab(main, "node_search", 'row')`);
      const inVocabulary = db.prepare('SELECT 1 FROM temp."vocab" WHERE "term" = ?').get(word);
      expect(inVocabulary !== undefined).toBe(inSegments);
      return inSegments;
    } finally {
      db.close();
    }
  }
  const weft = createPrisma(url);
  try {
    const [row] = await rawQuery(
      weft,
      `SELECT COUNT(*) AS n FROM "node_text" WHERE "tsv" @@ to_tsquery('simple', ?)`,
      [word],
    );
    return Number(row?.n) > 0;
  } finally {
    await weft.prisma.$disconnect();
  }
}

async function bodies(url: string): Promise<unknown[]> {
  const weft = createPrisma(url);
  try {
    return (await rawQuery(weft, 'SELECT "body" FROM "node_text"')).map((r) => r.body);
  } finally {
    await weft.prisma.$disconnect();
  }
}

const found = async (store: ThreadStore, text: string) =>
  (await store.searchNodes({ tenantId: 'default', text, take: 10, offset: 0 })).map(
    (h) => h.nodeId,
  );

function suite(backend: Backend) {
  const opened: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const o of opened.splice(0).reverse()) await o.close();
  });

  it('stores each text once and drops the words of redacted and deleted nodes from the index', async () => {
    const url = await backend.freshUrl();
    const store = openThreadStore(url);
    const engine = createEngine({
      store,
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds('id'),
    });
    opened.push(engine);
    must(await engine.createThread({ threadId: 'a' }));
    must(await engine.createThread({ threadId: 'b' }));
    const [secret, kept] = must(
      await engine.appendNodes({
        threadId: 'a',
        nodes: [
          { kind: 'inference', payload: { text: `card ${REDACTED}`, n: 1 } },
          { kind: 'inference', payload: { text: `${KEPT} beside it` } },
        ],
      }),
    ).nodes;
    const [gone] = must(
      await engine.appendNodes({
        threadId: 'b',
        nodes: [{ kind: 'answer', payload: { note: { text: `${DELETED} here` } } }],
      }),
    ).nodes;

    // One copy: the payload. The index holds the words, and a search finds them, with snippets
    // cut from the text derived from the payload.
    expect(await bodies(url)).toEqual([null, null, null]);
    for (const word of [REDACTED, DELETED, KEPT]) expect(await indexHolds(url, word)).toBe(true);
    expect(await found(store, REDACTED)).toEqual([secret!.id]);
    expect(await found(store, DELETED)).toEqual([gone!.id]);
    const [hit] = await store.searchNodes({
      tenantId: 'default',
      text: KEPT,
      take: 1,
      offset: 0,
    });
    expect(hit?.snippet.text).toBe(`${KEPT} beside it`);

    must(await engine.redactNodes({ threadId: 'a', nodeIds: [secret!.id], reason: 'erasure' }));
    must(await engine.deleteThread({ threadId: 'b' }));

    expect(await found(store, REDACTED)).toEqual([]);
    expect(await found(store, DELETED)).toEqual([]);
    expect(await indexHolds(url, REDACTED)).toBe(false);
    expect(await indexHolds(url, DELETED)).toBe(false);
    // The rest of the index is intact.
    expect(await found(store, KEPT)).toEqual([kept!.id]);
    expect(await indexHolds(url, KEPT)).toBe(true);
    if (url.startsWith('file:')) {
      // Each row was forgotten with the text it was indexed with: the index is consistent.
      const db = new Database(url.slice('file:'.length));
      try {
        db.exec(`INSERT INTO "node_search" ("node_search", "rank") VALUES ('integrity-check', 0)`);
      } finally {
        db.close();
      }
    }
  });

  it("stores a small append's payload once: in its node row, not again in the log entry", async () => {
    const url = await backend.freshUrl();
    const engine = createEngine({ store: openThreadStore(url) });
    opened.push(engine);
    must(await engine.createThread({ threadId: 's' }));
    const text = `${'one small turn of a conversation '.repeat(3)}pqzonce`;
    must(
      await engine.appendNodes({
        threadId: 's',
        nodes: [{ kind: 'inference', payload: { text } }],
      }),
    );
    const weft = createPrisma(url);
    try {
      const entries = await rawQuery(
        weft,
        `SELECT "entry", "packed" FROM "log_entry" WHERE "type" = 'nodes_appended'`,
      );
      expect(entries).toHaveLength(1);
      expect(entries[0]!.entry).toBe('');
      expect(Buffer.from(entries[0]!.packed as Uint8Array).includes('pqzonce')).toBe(false);
      const nodes = await rawQuery(weft, 'SELECT "payload" FROM "node"');
      expect(nodes.map((n) => JSON.parse(String(n.payload)))).toEqual([{ text }]);
    } finally {
      await weft.prisma.$disconnect();
    }
    // The log reads back whole, the payload spliced in from the node row.
    const verified = must(await engine.verify('s', { strict: true }));
    expect(verified.ok).toBe(true);
    const state = must(await engine.stateAt('s'));
    expect(state.agentState.nodes.map((n) => n.payload)).toEqual([{ text }]);
  });
}

describe('search text stored once [sqlite]', () => suite(useBackend(sqliteBackend())));
describeWithPostgres('search text stored once [postgres]', () =>
  suite(useBackend(postgresBackend())),
);
