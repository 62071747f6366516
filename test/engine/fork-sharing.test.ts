import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine, type SnapshotPolicy } from '../../src/engine/index.js';
import { importThreadLog } from '../../src/engine/transfer.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import { rawQuery } from '../../src/store/prisma/raw.js';
import { createThreadStore, type ThreadStore } from '../../src/store/read-model/index.js';
import { createReadQueries, type ReadQueries } from '../../src/store/read-model/queries.js';
import { describeWithPostgres } from '../support/services.js';
import { comparableState } from './snapshot-support.js';
import { type Backend, must, postgresBackend, sqliteBackend, useBackend } from './support.js';

/** Snapshots every 3 entries or 4 nodes: forks land between, on and after them. */
const SNAPSHOTS: SnapshotPolicy = { entries: 3, nodes: 4 };
const WORDS = ['alpha', 'beta', 'gamma', 'delta'];

type Command =
  | { t: 'create' }
  | { t: 'append'; th: number; word: number; parent: number; key: number; advance: boolean }
  | { t: 'remember'; th: number; key: number; v: number }
  | { t: 'fork'; th: number; upTo: number }
  | { t: 'delete'; th: number }
  | { t: 'redact'; th: number; node: number; also: number };

const pick = fc.nat({ max: 50 });
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ t: 'create' as const }) },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('append' as const),
      th: pick,
      word: fc.nat({ max: 3 }),
      parent: fc.nat({ max: 60 }),
      key: fc.nat({ max: 4 }),
      advance: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('remember' as const),
      th: pick,
      key: fc.nat({ max: 2 }),
      v: fc.nat({ max: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('fork' as const), th: pick, upTo: fc.nat({ max: 60 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('delete' as const), th: pick }) },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('redact' as const),
      th: pick,
      node: fc.nat({ max: 60 }),
      also: fc.nat({ max: 60 }),
    }),
  },
);

/**
 * Runs the commands on `engine`; returns the threads made and not deleted, in order. `secrets`
 * gets the text of every appended node redacted (unique to its command).
 */
async function execute(
  engine: Engine,
  commands: readonly Command[],
  secrets: Set<string> = new Set(),
): Promise<string[]> {
  const threads = [must(await engine.createThread({})).threadId];
  let n = 0;
  for (const c of commands) {
    n++;
    if (c.t === 'create' || threads.length === 0) {
      threads.push(must(await engine.createThread({})).threadId);
      continue;
    }
    const threadId = threads[c.th % threads.length]!;
    if (c.t === 'delete') {
      must(await engine.deleteThread({ threadId }));
      threads.splice(threads.indexOf(threadId), 1);
    } else if (c.t === 'fork') {
      const length = must(await engine.getState(threadId)).length;
      const fork = must(await engine.forkThread({ threadId, upToIndex: 1 + (c.upTo % length) }));
      threads.push(fork.threadId);
    } else if (c.t === 'redact') {
      // One or two nodes (maybe already redacted, maybe held by the fork's source).
      const nodes = must(await engine.stateAt(threadId)).agentState.nodes;
      if (nodes.length === 0) continue;
      const named = [nodes[c.node % nodes.length]!, nodes[c.also % nodes.length]!];
      for (const node of named) {
        const text = (node.payload as { text?: unknown } | null)?.text;
        if (typeof text === 'string') secrets.add(text);
      }
      const nodeIds = named.map((node) => node.id);
      must(await engine.redactNodes({ threadId, nodeIds, reason: `r${n}` }));
    } else if (c.t === 'remember') {
      must(await engine.remember({ threadId, type: 'memory', key: `k${c.key}`, content: c.v }));
    } else {
      const nodes = must(await engine.stateAt(threadId)).agentState.nodes;
      const parent = nodes.length === 0 ? undefined : nodes[c.parent % nodes.length]!.id;
      must(
        await engine.appendNodes({
          threadId,
          nodes: [
            {
              kind: 'inference',
              payload: { text: `${WORDS[c.word]} ${n}` },
              ...(parent === undefined || c.key === 0 ? {} : { parents: [parent] }),
              ...(c.key >= 3 ? { resourceKey: `doc-${c.key}` } : {}),
              advance: c.advance,
            },
          ],
        }),
      );
    }
  }
  return threads;
}

/** Every read the API makes of a thread's nodes, edges and log. */
async function reads(q: ReadQueries, store: ThreadStore, threadId: string) {
  const asc = await q.nodePage({ threadId, take: 10_000 });
  const ids = asc.map((n) => n.id);
  const pages: unknown[] = [];
  for (const descending of [false, true]) {
    let cursor: number | undefined;
    for (;;) {
      const page = await q.nodePage({ threadId, take: 3, descending, cursor });
      pages.push(page.map((n) => n.id));
      if (page.length < 3) break;
      cursor = page.at(-1)!.sequence;
    }
  }
  const keys = [...new Set(asc.flatMap((n) => (n.resourceKey === null ? [] : [n.resourceKey])))];
  const walks: unknown[] = [];
  for (const id of ids.slice(-4)) {
    for (const direction of ['ancestors', 'descendants'] as const) {
      walks.push(await q.walk({ threadId, id, direction, depth: 50, limit: 100 }));
    }
  }
  return {
    asc,
    pages,
    count: await q.countNodes({ threadId }),
    after: await q.countNodes({ threadId, afterSequence: 2 }),
    // A DataLoader batch: matched by key, in no particular order.
    byIds: (await q.nodes(ids.map((id) => ({ threadId, id })))).sort((a, b) =>
      a.id < b.id ? -1 : 1,
    ),
    children: await q.childEdges(ids.map((id) => ({ threadId, id }))),
    childNodes: await q.nodesAt(threadId, [2, 3, 4, 1_000]),
    versions: await q.resourceVersions(keys.map((resourceKey) => ({ threadId, resourceKey }))),
    heads: await q.resourceHeads(threadId),
    entries: await q.entries(threadId, -1, 10_000),
    walks,
    search: store.searchIndexed
      ? (
          await store.searchNodes({
            tenantId: 'default',
            text: 'beta',
            threadId,
            take: 100,
            offset: 0,
          })
        ).map((h) => [h.threadId, h.nodeId, h.sequence])
      : [],
  };
}

/** No stored text of this sequence's threads holds a redacted payload (a snapshot, say). */
async function expectNoSecrets(weft: WeftPrisma, prefix: string, secrets: Set<string>) {
  for (const [table, column] of [
    ['node', 'payload'],
    ['log_entry', 'entry'],
    ['snapshot', 'state'],
  ] as const) {
    const rows = await rawQuery(
      weft,
      `SELECT "thread_id", "${column}" AS "text" FROM "${table}" WHERE "thread_id" LIKE ?`,
      [`${prefix}%`],
    );
    for (const row of rows) {
      for (const secret of secrets) {
        // As a JSON string, or inside one (a snapshot's graph is nested JSON text).
        const quoted = JSON.stringify(secret);
        const text = String(row.text);
        const found = text.includes(quoted) || text.includes(JSON.stringify(quoted).slice(1, -1));
        expect(found, `${table} of ${String(row.thread_id)} still holds ${secret}`).toBe(false);
      }
    }
  }
}

const TABLE_KEYS = [
  ['log_entry', 'log_index'],
  ['snapshot', 'log_index'],
  ['node', 'sequence'],
] as const;

/**
 * Every stored entry, snapshot and node is read by a live thread (a stretch of its lineage
 * holds it), and every thread row is live or a deleted thread whose history a live one reads.
 * Returns how many live threads read a deleted thread's history.
 */
async function expectNoOrphans(weft: WeftPrisma, store: ThreadStore): Promise<number> {
  const rows = await rawQuery(
    weft,
    'SELECT "id", "deleted_at", "log_length", "base_thread_id" FROM "thread"',
    [],
  );
  const baseOf = new Map(rows.map((r) => [String(r.id), r.base_thread_id as string | null]));
  const live = rows.filter((r) => r.deleted_at === null);
  const lengths = new Map(live.map((r) => [String(r.id), Number(r.log_length)] as const));
  const spans: Array<{
    holder: string;
    reader: string;
    from: number;
    to: number;
    seqFrom: number;
    seqTo: number;
  }> = [];
  let readingDeleted = 0;
  const deleted = new Set(rows.filter((r) => r.deleted_at !== null).map((r) => String(r.id)));
  for (const [id, length] of lengths) {
    const lineage = await store.lineage(id);
    if (lineage.some((s) => deleted.has(s.threadId))) readingDeleted++;
    for (const s of lineage) {
      spans.push({
        holder: s.threadId,
        reader: id,
        from: s.fromIndex,
        to: Math.min(s.toIndex, length),
        seqFrom: s.fromSeq,
        seqTo: s.toSeq,
      });
    }
  }
  // A deleted thread stays while a live thread's history passes through it.
  const chained = new Set<string>();
  for (const id of lengths.keys()) {
    for (
      let at = baseOf.get(id) ?? null;
      at !== null && !chained.has(at);
      at = baseOf.get(at) ?? null
    ) {
      chained.add(at);
    }
  }
  for (const id of deleted) expect(chained, `deleted thread ${id} kept for no one`).toContain(id);
  for (const [table, column] of TABLE_KEYS) {
    const stored = await rawQuery(weft, `SELECT "thread_id", "${column}" FROM "${table}"`, []);
    for (const row of stored) {
      const holder = String(row.thread_id);
      const at = Number(row[column]);
      const read = spans.some((s) =>
        s.holder !== holder
          ? false
          : column === 'sequence'
            ? at > s.seqFrom && at <= s.seqTo
            : table === 'snapshot'
              ? at > s.from && at <= s.to
              : at >= s.from && at < s.to,
      );
      expect(read, `${table} ${holder} ${at} is read by no live thread`).toBe(true);
    }
  }
  return readingDeleted;
}

/**
 * Forks share their source's history instead of copying it. After random appends, memory
 * writes, forks (of forks, at any index, with the source growing after), deletions and
 * redactions (of a thread's own nodes or of nodes its source holds), every
 * surviving thread reads
 * exactly like a thread built by copying its whole log (imported into an empty database): its
 * log, its strict verification, its state at every index (from a cold engine, through the
 * source's snapshots), its read models and every node, edge, page, walk and search read.
 */
function forkSharingProperty(backend: Backend, numRuns: number) {
  let shared: WeftPrisma;
  let copied: WeftPrisma;
  let sharedStore: ThreadStore;
  let copiedStore: ThreadStore;
  let sequence = 0;
  const forked = { total: 0, ofForks: 0, sharedDeleted: 0, redacted: 0 };

  beforeAll(async () => {
    shared = createPrisma(await backend.freshUrl());
    copied = createPrisma(await backend.freshUrl());
    sharedStore = createThreadStore(shared);
    copiedStore = createThreadStore(copied);
  });
  afterAll(async () => {
    await sharedStore?.close();
    await copiedStore?.close();
  });

  it(`every thread equals a copy-built one (${numRuns} sequences)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 4, maxLength: 24 }), async (commands) => {
        sequence++;
        const options = () => ({
          clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
          ids: createSequentialIds(`f${sequence}-`),
          snapshots: SNAPSHOTS,
        });
        const engine = createEngine({ store: sharedStore, ...options() });
        const secrets = new Set<string>();
        const threads = await execute(engine, commands, secrets);
        const copyEngine = createEngine({ store: copiedStore, ...options() });
        const cold = createEngine({ store: sharedStore, ...options() });
        const sharedQ = createReadQueries(shared, false, sharedStore.codec);
        const copiedQ = createReadQueries(copied, false, copiedStore.codec);
        for (const threadId of threads) {
          const log = await sharedStore.readEntries(threadId);
          must(await importThreadLog(copyEngine, threadId, log));
          const lineage = await sharedStore.lineage(threadId);
          if (lineage.length > 1) forked.total++;
          if (lineage.length > 2) forked.ofForks++;
          expect(await copiedStore.readEntries(threadId)).toEqual(log);
          expect(must(await cold.verify(threadId, { strict: true }))).toEqual(
            must(await copyEngine.verify(threadId, { strict: true })),
          );
          const verified = must(await cold.verify(threadId, { strict: true }));
          expect(verified).toMatchObject({ ok: true });
          forked.redacted += verified.redactedNodes?.length ?? 0;
          for (let at = 0; at <= log.length; at++) {
            const a = must(await cold.stateAt(threadId, at));
            const b = must(await copyEngine.stateAt(threadId, at));
            expect(comparableState(a.state)).toEqual(comparableState(b.state));
          }
          expect(await sharedStore.dumpReadModels([threadId])).toEqual(
            await copiedStore.dumpReadModels([threadId]),
          );
          expect(await reads(sharedQ, sharedStore, threadId)).toEqual(
            await reads(copiedQ, copiedStore, threadId),
          );
        }
        forked.sharedDeleted += await expectNoOrphans(shared, sharedStore);
        await expectNoSecrets(shared, `f${sequence}-`, secrets);
      }),
      { numRuns },
    );
    console.log(
      `[${backend.name}] ${numRuns} sequences: ${forked.total} forks checked, ${forked.ofForks} of forks, ${forked.sharedDeleted} reading a deleted thread's history, ${forked.redacted} redacted nodes verified`,
    );
    expect(forked.ofForks).toBeGreaterThan(0);
    expect(forked.redacted).toBeGreaterThan(0);
  }, 900_000);
}

describe('fork sharing property [sqlite]', () => {
  forkSharingProperty(useBackend(sqliteBackend()), 60);
});

describeWithPostgres('fork sharing property', () => {
  forkSharingProperty(useBackend(postgresBackend()), 25);
});
