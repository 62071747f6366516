import { err, ok, type Result, type WeftError } from '../../core/errors.js';
import type { LogEntry } from '../../core/log/index.js';
import { Prisma } from '../../generated/prisma-sqlite/client.js';
import { checkKeyMarker, createFieldCodec, type FieldCodec } from '../crypto/index.js';
import { parseDatabaseUrl } from '../migrate/database-url.js';
import { isUniqueViolation } from '../prisma/errors.js';
import { createPrisma, type WeftPrisma } from '../prisma/index.js';
import type { SqlitePrismaClient } from '../prisma/sqlite.js';
import { type DueRun, type DueRunQuery, findDueRuns } from './deadlines.js';
import { createGroupWriter, type Settled, type WriterStats } from './group-commit.js';
import { MAX_LOG_INDEX, readLogTexts } from './log-reads.js';
import { packEntry } from './packed-entry.js';
import type { LogEntryRow, NodeRow, ReadModelChanges, SnapshotRow } from './rows.js';
import {
  type IdempotencyRecord,
  LABEL,
  openHead,
  openNode,
  openRecord,
  openSnapshot,
  openSpend,
  openThread,
  type PlainTwins,
  sealChanges,
  sealRecord,
} from './sealed-rows.js';
import {
  deletePlainHeads,
  deletePlainSpend,
  insertEntries,
  insertIdempotencyRecords,
  insertNodeParents,
  insertNodes,
  insertThread,
  insertThreads,
  type RawExecutor,
  type StoredEntryRow,
  setNodeFlag,
  setNodeFlagPairs,
  updateThread,
  updateThreads,
  upsertResourceHeads,
  upsertRunSpend,
  upsertRuns,
  upsertSnapshots,
} from './sql.js';
import { openSqliteWriteConnection } from './sqlite-writer.js';
import {
  type GuardReason,
  prismaScriptRunner,
  type RecordedStatement,
  recordScript,
  type ScriptRecorder,
  type ScriptRunner,
  StatementFailure,
} from './write-script.js';

const { sql } = Prisma;

export type { IdempotencyRecord } from './sealed-rows.js';

/** Where a run lives: a run id repeats in forks of the thread that started it. */
export interface RunLocation {
  threadId: string;
  forkedFromId: string | null;
  /** The tenant of the holding thread. */
  tenantId: string;
}

/**
 * Persistence of threads for the engine: the log entries and every read model of a thread,
 * written together in one transaction. Expected failures are Result values:
 * - CONFLICT {threadId, expectedIndex, actualIndex} when the first entry's index is taken (a
 *   concurrent writer won; `actualIndex` is the length re-read after the rollback) or, for a new
 *   thread, when the thread id exists;
 * - IDEMPOTENCY_KEY_REUSED {key} when the idempotency record's (scope, key) is taken — the
 *   caller re-reads the record to tell a retry from a reuse.
 */
export interface ThreadStore {
  readonly provider: 'sqlite' | 'postgres';
  /** Entries with index in `[from, to)` in index order; `[]` for an unknown thread. */
  readEntries(threadId: string, from?: number, to?: number): Promise<LogEntry[]>;
  /** The canonical texts of the entries `readEntries` returns (what they are parsed from). */
  readEntryTexts(threadId: string, from?: number, to?: number): Promise<string[]>;
  /**
   * Up to `limit` snapshots of the thread with index ≤ `atMost`, newest first (unverified: the
   * caller checks them, see src/core/thread/snapshot.ts).
   */
  findSnapshots(threadId: string, atMost: number, limit?: number): Promise<SnapshotRow[]>;
  /** The stored log length; undefined for an unknown thread. */
  getLogLength(threadId: string): Promise<number | undefined>;
  /** Every thread holding a run with this id (the starting thread and its forks). */
  findRunThreads(runId: string): Promise<RunLocation[]>;
  /** The tenant owning the thread; undefined for an unknown thread. */
  getThreadTenant(threadId: string): Promise<string | undefined>;
  findIdempotencyRecord(scope: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Writes entries and read models (and the idempotency record) in one transaction. */
  commit(
    changes: ReadModelChanges,
    options?: { idempotency?: IdempotencyRecord | undefined },
  ): Promise<Result<void>>;
  /**
   * The read-model rows of the given threads (default: all), normalised for comparison — Dates
   * as ISO text, rows sorted by key. For tests and diagnostics.
   */
  dumpReadModels(threadIds?: readonly string[]): Promise<ReadModelDump>;
  /** Counters of the store's writer (shared with every store on the same SQLite file). */
  writerStats(): StoreWriterStats;
  /** Runs whose approval or execution deadline is at or before `now` (candidates only). */
  findDueRuns(query: DueRunQuery): Promise<DueRun[]>;
  /**
   * How client-supplied columns are sealed and opened (encryption at rest, see sealed-rows.ts;
   * the identity without a key). Readers of those columns outside the store open them with it.
   */
  readonly codec: FieldCodec;
  /**
   * Resolves once the database's encryption marker agrees with the store's key (marking an
   * unmarked database when a key is set); rejects with an EncryptionError (ENCRYPTION_KEY_MISSING
   * or ENCRYPTION_KEY_MISMATCH) otherwise. Every read and commit waits for it; call it at open
   * to fail early.
   */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface StoreWriterStats extends WriterStats {
  /** Whether commits are grouped (several commands per transaction). */
  groupCommit: boolean;
  /** Write transactions begun (a failed group retried item by item counts each retry). */
  transactions: number;
  /** Groups written by the fast path: one multi-row statement per table for all their commits. */
  merged: number;
}

export type ReadModelDump = Record<
  'thread' | 'node' | 'node_parent' | 'resource_head' | 'run' | 'run_spend',
  Array<Record<string, unknown>>
>;

export interface ThreadStoreOptions {
  /**
   * Interactive transaction limits of a Prisma-driven writer (Postgres, or `createThreadStore`
   * on SQLite). Default: wait up to 10 s, run up to 60 s. `openThreadStore` writes SQLite
   * through its own better-sqlite3 connection (sqlite-writer.ts), whose transactions run
   * synchronously and wait for another process's lock up to the busy timeout.
   */
  transaction?: { maxWait?: number; timeout?: number };
  /**
   * Group commit: concurrent commits share one transaction (one fsync), each in its own
   * SAVEPOINT so that a failing one rolls back alone. Default: on for SQLite (where every write
   * of the process goes through one serialised writer anyway), off for Postgres (concurrency
   * comes from the pool). `maxBatch` caps the commits per transaction (default 256). `inFlight`
   * is how many transactions are handed to the writer at once: what is queued is shared among
   * them, so the first commits are acknowledged while the next still run (default 2 on SQLite's
   * writer thread, which runs them one after another; 1 otherwise). On SQLite, `false` still
   * serialises writes, one transaction each. Stores opened with `openThreadStore` on one SQLite
   * file share one writer, with the settings of the first one opened.
   */
  groupCommit?: boolean | { maxBatch?: number; inFlight?: number };
  /**
   * Encryption at rest: the 32-byte key every client-supplied column is sealed with (see
   * src/store/crypto and sealed-rows.ts). Without it, values are stored in plain text, and a
   * database holding encrypted data is refused (ENCRYPTION_KEY_MISSING).
   */
  encryptionKey?: Uint8Array | undefined;
}

const DEFAULT_MAX_BATCH = 256;

const maxBatchOf = (option: ThreadStoreOptions['groupCommit']): number =>
  option === false
    ? 1
    : typeof option === 'object'
      ? (option.maxBatch ?? DEFAULT_MAX_BATCH)
      : DEFAULT_MAX_BATCH;

/** One commit as the writer sees it: its rows as stored (packed, sealed). */
interface WriteItem {
  changes: ReadModelChanges;
  entries: StoredEntryRow[];
  record: IdempotencyRecord | undefined;
  /** With a key: head and spend rows that may still hold the plain form of a sealed key. */
  twins?: PlainTwins | undefined;
}

/** What became of one commit inside its transaction (the store turns rejections into errors). */
type WriteOutcome = 'written' | GuardReason;

/** The write side of a store: the one path into the database for its commits. */
interface Writer {
  submit(item: WriteItem): Promise<WriteOutcome>;
  stats(): StoreWriterStats;
  release(): Promise<void>;
}

/**
 * A thread store on a database URL (SQLite `file:` or `postgres://`), already migrated. On
 * SQLite, every store of the process on the same file shares one writer (one write connection,
 * in its own thread: sqlite-writer.ts).
 */
export function openThreadStore(
  databaseUrl: string,
  options: ThreadStoreOptions = {},
): ThreadStore {
  const target = parseDatabaseUrl(databaseUrl);
  const weft = createPrisma(databaseUrl);
  if (target.provider !== 'sqlite') return createThreadStore(weft, options);
  return buildThreadStore(
    weft,
    acquireSqliteWriter(target.path, options),
    createFieldCodec(options.encryptionKey),
  );
}

/**
 * The thread store on a Prisma client of either provider, writing through its own writer on
 * that client. The two generated clients have the same model API, so one typing (the SQLite
 * client's) serves both; raw SQL is provider-neutral.
 */
export function createThreadStore(weft: WeftPrisma, options: ThreadStoreOptions = {}): ThreadStore {
  const prisma = weft.prisma as unknown as SqlitePrismaClient;
  const grouped = options.groupCommit ?? weft.provider === 'sqlite';
  const txOptions = { maxWait: 10_000, timeout: 60_000, ...options.transaction };
  return buildThreadStore(
    weft,
    createWriter(
      prismaScriptRunner(prisma, txOptions),
      false,
      { ...options, groupCommit: grouped },
      weft.provider === 'sqlite' || grouped !== false,
    ),
    createFieldCodec(options.encryptionKey),
  );
}

/** Process-wide writers of SQLite files, by absolute path, with the number of stores using each. */
const sqliteWriters = new Map<string, { writer: Writer; users: number }>();

function acquireSqliteWriter(path: string, options: ThreadStoreOptions): Writer {
  let shared = sqliteWriters.get(path);
  if (shared === undefined) {
    const connection = openSqliteWriteConnection(path);
    const writer = createWriter(
      connection,
      true,
      { ...options, groupCommit: options.groupCommit ?? true },
      true,
    );
    shared = {
      users: 0,
      writer: {
        ...writer,
        release: async () => {
          await writer.release();
          await connection.close();
        },
      },
    };
    sqliteWriters.set(path, shared);
  }
  const entry = shared;
  entry.users++;
  let released = false;
  return {
    submit: (item) => entry.writer.submit(item),
    stats: () => entry.writer.stats(),
    async release() {
      if (released) return;
      released = true;
      if (--entry.users > 0) return;
      if (sqliteWriters.get(path) === entry) sqliteWriters.delete(path);
      await entry.writer.release();
    },
  };
}

/**
 * The writer on `runner`: each transaction's statements are recorded first (write-script.ts)
 * and then run as one script. Serialised (`queued`): commits go through a group writer, batched
 * up to maxBatch per transaction. Otherwise (Postgres without group commit): each commit runs
 * its own transaction at once, concurrently with others. `text`: the runner takes `?` texts
 * with flat values (the SQLite writer thread).
 */
function createWriter(
  runner: ScriptRunner,
  text: boolean,
  options: ThreadStoreOptions,
  queued: boolean,
): Writer {
  const maxBatch = maxBatchOf(options.groupCommit);
  let transactions = 0;
  let merged = 0;

  /** A failed statement: its guard's reason for a unique violation, else the error. */
  const settle = (
    script: readonly RecordedStatement[],
    statement: number,
    error: unknown,
  ): Settled<WriteOutcome> => {
    const reason = script[statement]?.reason;
    return reason !== undefined && isUniqueViolation(error)
      ? { ok: true, value: reason }
      : { ok: false, error };
  };

  /**
   * Writes `items`. A lone item runs as one transaction: a failure rolls everything back. A
   * group of distinct threads first tries the fast path: one transaction with one multi-row
   * statement per table for all. When that fails (a conflict, a constraint) it rolls back whole
   * and the group runs again with each item in its own SAVEPOINT: a unique violation (or any
   * other error) rolls back to it, and the others still land. Outcomes are only returned — and
   * so only acknowledged — after COMMIT.
   */
  const transact = async (items: readonly WriteItem[]): Promise<Settled<WriteOutcome>[]> => {
    transactions++;
    if (items.length === 1) {
      const script = await recordScript(text, (tx) => write(tx, items[0]!));
      try {
        await runner.runAll(script);
        return [{ ok: true, value: 'written' }];
      } catch (error) {
        if (!(error instanceof StatementFailure)) throw error;
        const outcome = settle(script, error.statement, error.error);
        if (outcome.ok) return [outcome];
        throw outcome.error;
      }
    }
    if (new Set(items.map((i) => i.changes.threadId)).size === items.length) {
      const script = await recordScript(text, (tx) => writeMerged(tx, items));
      try {
        await runner.runAll(script);
        merged++;
        return items.map(() => ({ ok: true, value: 'written' }));
      } catch {
        transactions++;
      }
    }
    const scripts: RecordedStatement[][] = [];
    for (const item of items) scripts.push(await recordScript(text, (tx) => write(tx, item)));
    const outcomes = await runner.runEach(scripts);
    return outcomes.map((o, i) =>
      o.ok ? { ok: true, value: 'written' } : settle(scripts[i]!, o.statement, o.error),
    );
  };

  /** A group whose shared transaction failed as a whole wrote nothing: each item is retried alone. */
  const runBatch = async (items: readonly WriteItem[]): Promise<Settled<WriteOutcome>[]> => {
    try {
      return await transact(items);
    } catch (error) {
      if (items.length === 1) throw error;
      const outcomes: Settled<WriteOutcome>[] = [];
      for (const item of items) {
        try {
          outcomes.push(...(await transact([item])));
        } catch (itemError) {
          outcomes.push({ ok: false, error: itemError });
        }
      }
      return outcomes;
    }
  };

  const unwrap = (outcome: Settled<WriteOutcome> | undefined): WriteOutcome => {
    if (outcome?.ok) return outcome.value;
    throw outcome === undefined ? new Error('thread store: no write outcome') : outcome.error;
  };

  if (!queued) {
    let direct = 0;
    return {
      submit: async (item) => {
        direct++;
        return unwrap((await transact([item]))[0]);
      },
      stats: () => ({
        groupCommit: false,
        transactions,
        merged: 0,
        items: direct,
        batches: direct,
        largestBatch: direct > 0 ? 1 : 0,
      }),
      release: () => runner.close(),
    };
  }

  // The SQLite writer thread (`text`) runs its transactions in the order it gets them: the next
  // batch can be handed on while one commits.
  const inFlight =
    (typeof options.groupCommit === 'object' ? options.groupCommit.inFlight : undefined) ??
    (text ? 2 : 1);
  const group = createGroupWriter(runBatch, { maxBatch, inFlight });
  return {
    submit: (item) => group.submit(item),
    stats: () => ({ ...group.stats(), groupCommit: maxBatch > 1, transactions, merged }),
    release: () => group.idle(),
  };
}

/** Records one commit's entries and read models (and idempotency record) on `tx`. */
async function write(tx: ScriptRecorder, item: WriteItem) {
  const { changes: c, record } = item;
  if (c.created) await tx.guard('conflict', () => insertThread(tx, c.thread));
  await tx.guard('conflict', () => insertEntries(tx, item.entries));
  if (record !== undefined) {
    await tx.guard('idempotency', () =>
      tx.$executeRaw(sql`INSERT INTO "idempotency_record" ("scope", "key", "request_hash", "response", "thread_id", "created_at")
        VALUES (${record.scope}, ${record.key}, ${record.requestHash}, ${record.response}, ${record.threadId}, ${record.createdAt})`),
    );
  }
  await insertNodes(tx, c.nodes);
  await insertNodeParents(tx, c.nodeParents);
  for (const column of ['is_frontier', 'is_current'] as const) {
    for (const value of [true, false]) {
      const ids = c.nodeFlags
        .filter((f) => (column === 'is_frontier' ? f.isFrontier : f.isCurrent) === value)
        .map((f) => f.nodeId);
      if (ids.length > 0) await setNodeFlag(tx, c.threadId, column, value, ids);
    }
  }
  if (item.twins !== undefined) await deleteTwins(tx, item.twins);
  await upsertResourceHeads(tx, c.resourceHeads);
  await upsertRuns(tx, c.runs);
  await upsertRunSpend(tx, c.runSpend);
  if (c.snapshots !== undefined && c.snapshots.length > 0) await upsertSnapshots(tx, c.snapshots);
  if (!c.created) await updateThread(tx, c.thread);
}

/** Removes head and spend rows keyed by the plain text of keys now written sealed. */
async function deleteTwins(tx: RawExecutor, twins: PlainTwins): Promise<void> {
  if (twins.heads.length > 0) await deletePlainHeads(tx, twins.heads);
  if (twins.spend.length > 0) await deletePlainSpend(tx, twins.spend);
}

/**
 * The entries as stored: packed (without the payloads of the nodes each one created, which the
 * node rows of the same transaction hold) where that applies, else as text. See packed-entry.ts.
 * Packing works on the plain texts; sealing (encryption at rest) comes after.
 */
function storedEntries(
  entries: readonly LogEntryRow[],
  nodes: readonly NodeRow[],
  codec: FieldCodec,
): StoredEntryRow[] {
  const byEntry = new Map<number, Array<{ sequence: number; payload: string }>>();
  for (const node of nodes) {
    let list = byEntry.get(node.logIndex);
    if (list === undefined) {
      list = [];
      byEntry.set(node.logIndex, list);
    }
    list.push({ sequence: node.sequence, payload: node.payload });
  }
  return entries.map((row) => {
    const packed = packEntry(row.entry, byEntry.get(row.index) ?? []);
    return packed === null
      ? { ...row, entry: codec.sealText(row.entry), packed: null }
      : { ...row, entry: '', packed: codec.sealBytes(packed) };
  });
}

/**
 * One commit as stored: entries packed, then every client-supplied column sealed with `codec`
 * (sealed-rows.ts), the idempotency key hashed. With the plain codec only the packing happens;
 * the caller's objects are never changed.
 */
function storedItem(
  changes: ReadModelChanges,
  record: IdempotencyRecord | undefined,
  codec: FieldCodec,
): WriteItem {
  const entries = storedEntries(changes.entries, changes.nodes, codec);
  if (!codec.encrypted) return { changes, entries, record };
  const sealed = sealChanges(codec, changes);
  return {
    changes: sealed.changes,
    entries,
    record: record === undefined ? undefined : sealRecord(codec, record),
    twins: sealed.twins,
  };
}

/**
 * Writes the commits of a group, all of distinct threads, with one multi-row statement per table
 * — in the order `write` uses, so the same constraints decide. Throws on any failure.
 */
async function writeMerged(tx: RawExecutor, items: readonly WriteItem[]): Promise<void> {
  const all = items.map((i) => i.changes);
  const created = all.filter((c) => c.created).map((c) => c.thread);
  if (created.length > 0) await insertThreads(tx, created);
  await insertEntries(
    tx,
    items.flatMap((i) => i.entries),
  );
  const records = items.flatMap((i) => (i.record === undefined ? [] : [i.record]));
  if (records.length > 0) await insertIdempotencyRecords(tx, records);
  await insertNodes(
    tx,
    all.flatMap((c) => c.nodes),
  );
  await insertNodeParents(
    tx,
    all.flatMap((c) => c.nodeParents),
  );
  for (const column of ['is_frontier', 'is_current'] as const) {
    for (const value of [true, false]) {
      const pairs = all.flatMap((c) =>
        c.nodeFlags
          .filter((f) => (column === 'is_frontier' ? f.isFrontier : f.isCurrent) === value)
          .map((f) => [c.threadId, f.nodeId] as const),
      );
      if (pairs.length > 0) await setNodeFlagPairs(tx, column, value, pairs);
    }
  }
  const twins: PlainTwins = {
    heads: items.flatMap((i) => i.twins?.heads ?? []),
    spend: items.flatMap((i) => i.twins?.spend ?? []),
  };
  await deleteTwins(tx, twins);
  await upsertResourceHeads(
    tx,
    all.flatMap((c) => c.resourceHeads),
  );
  await upsertRuns(
    tx,
    all.flatMap((c) => c.runs),
  );
  await upsertRunSpend(
    tx,
    all.flatMap((c) => c.runSpend),
  );
  const snapshots = all.flatMap((c) => c.snapshots ?? []);
  if (snapshots.length > 0) await upsertSnapshots(tx, snapshots);
  const updated = all.filter((c) => !c.created).map((c) => c.thread);
  if (updated.length > 0) await updateThreads(tx, updated);
}

const KEY_ID_SETTING = 'encryption_key_id';

/** See ThreadStore.ready: the database's encryption marker checked (and set) against `codec`. */
async function checkEncryptionMarker(prisma: SqlitePrismaClient, codec: FieldCodec) {
  const read = async () =>
    (
      await prisma.$queryRaw<Array<{ value: string }>>(
        sql`SELECT "value" FROM "weft_setting" WHERE "key" = ${KEY_ID_SETTING}`,
      )
    )[0]?.value ?? null;
  if (!checkKeyMarker(codec, await read())) return;
  await prisma.$executeRaw(
    sql`INSERT INTO "weft_setting" ("key", "value") VALUES (${KEY_ID_SETTING}, ${codec.keyId}) ON CONFLICT ("key") DO NOTHING`,
  );
  // Another process may have marked it first, with another key.
  checkKeyMarker(codec, await read());
}

function buildThreadStore(weft: WeftPrisma, writer: Writer, codec: FieldCodec): ThreadStore {
  const prisma = weft.prisma as unknown as SqlitePrismaClient;
  let checked: Promise<void> | undefined;
  const ready = () => {
    checked ??= checkEncryptionMarker(prisma, codec);
    return checked;
  };

  const getLogLength = async (threadId: string) => {
    const row = await prisma.thread.findUnique({
      where: { id: threadId },
      select: { logLength: true },
    });
    return row?.logLength;
  };

  const readEntryTexts = async (
    threadId: string,
    from = 0,
    to = MAX_LOG_INDEX,
  ): Promise<string[]> => {
    await ready();
    const read = await readLogTexts(prisma, weft.provider, codec, threadId, {
      from,
      to,
      limit: MAX_LOG_INDEX,
    });
    return read.map((r) => r.text);
  };

  /** CONFLICT for a commit that lost its first index; the length is read after the rollback. */
  const conflict = async (changes: ReadModelChanges): Promise<WeftError> => {
    const expectedIndex = changes.entries[0]?.index ?? 0;
    const actualIndex = (await getLogLength(changes.threadId)) ?? 0;
    return {
      code: 'CONFLICT',
      message: `thread ${changes.threadId} is at log index ${actualIndex}, not ${expectedIndex}: reload it and retry`,
      threadId: changes.threadId,
      expectedIndex,
      actualIndex,
    };
  };

  return {
    provider: weft.provider,

    findDueRuns: (query) => findDueRuns(weft, query),

    async readEntries(threadId, from, to) {
      return (await readEntryTexts(threadId, from, to)).map((text) => JSON.parse(text) as LogEntry);
    },

    readEntryTexts,

    async findSnapshots(threadId, atMost, limit = 1) {
      await ready();
      const rows = await prisma.snapshot.findMany({
        where: { threadId, index: { lte: atMost } },
        orderBy: { index: 'desc' },
        take: limit,
      });
      return rows.map((row) => openSnapshot(codec, row));
    },

    getLogLength,

    async findRunThreads(runId) {
      const rows = await prisma.run.findMany({
        where: { id: runId },
        select: { threadId: true, thread: { select: { forkedFromId: true, tenantId: true } } },
      });
      return rows.map((r) => ({
        threadId: r.threadId,
        forkedFromId: r.thread.forkedFromId,
        tenantId: r.thread.tenantId,
      }));
    },

    async getThreadTenant(threadId) {
      const row = await prisma.thread.findUnique({
        where: { id: threadId },
        select: { tenantId: true },
      });
      return row?.tenantId;
    },

    async findIdempotencyRecord(scope, key) {
      await ready();
      // With a key, a record written before keys were hashed is found by its plain key.
      const forms = codec.digestForms(LABEL.idempotencyKey, key);
      const row =
        forms.length === 1
          ? await prisma.idempotencyRecord.findUnique({ where: { scope_key: { scope, key } } })
          : await prisma.idempotencyRecord.findFirst({ where: { scope, key: { in: forms } } });
      return row === null ? undefined : openRecord(codec, key, row);
    },

    async commit(changes, commitOptions = {}) {
      if (changes.entries.length === 0) return ok(undefined);
      await ready();
      const outcome = await writer.submit(storedItem(changes, commitOptions.idempotency, codec));
      if (outcome === 'written') return ok(undefined);
      if (outcome === 'conflict') return err(await conflict(changes));
      const key = commitOptions.idempotency?.key ?? '';
      return err({
        code: 'IDEMPOTENCY_KEY_REUSED',
        message: `idempotency key ${key} was used concurrently`,
        key,
      });
    },

    dumpReadModels: async (threadIds) => {
      await ready();
      return dumpReadModels(prisma, codec, threadIds);
    },

    codec,
    ready,

    writerStats: () => writer.stats(),

    async close() {
      await writer.release();
      await prisma.$disconnect();
    },
  };
}

const byKeys =
  (...keys: string[]) =>
  (a: Record<string, unknown>, b: Record<string, unknown>) => {
    for (const key of keys) {
      const x = String(a[key]);
      const y = String(b[key]);
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };

const plain = (row: object): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, v instanceof Date ? v.toISOString() : v]),
  );

async function dumpReadModels(
  prisma: SqlitePrismaClient,
  codec: FieldCodec,
  threadIds?: readonly string[],
): Promise<ReadModelDump> {
  const where = threadIds === undefined ? {} : { threadId: { in: [...threadIds] } };
  const [thread, node, nodeParent, resourceHead, run, runSpend] = await Promise.all([
    prisma.thread.findMany({
      where: threadIds === undefined ? {} : { id: { in: [...threadIds] } },
    }),
    prisma.node.findMany({ where }),
    prisma.nodeParent.findMany({ where }),
    prisma.resourceHead.findMany({ where }),
    prisma.run.findMany({ where }),
    prisma.runSpend.findMany({ where }),
  ]);
  const idOf = new Map(node.map((n) => [`${n.threadId}\u0000${n.sequence}`, n.id]));
  const edges = nodeParent.map((p) => ({
    threadId: p.threadId,
    childId: idOf.get(`${p.threadId}\u0000${p.childSeq}`),
    parentId: idOf.get(`${p.threadId}\u0000${p.parentSeq}`),
    position: p.position,
  }));
  return {
    thread: thread.map((t) => plain(openThread(codec, t))).sort(byKeys('id')),
    node: node.map((n) => plain(openNode(codec, n))).sort(byKeys('threadId', 'id')),
    node_parent: edges.sort(byKeys('threadId', 'childId', 'parentId')),
    resource_head: resourceHead
      .map((h) => plain(openHead(codec, h)))
      .sort(byKeys('threadId', 'resourceKey')),
    run: run
      .map((r) => plain({ ...r, goal: codec.openText(r.goal), state: codec.openText(r.state) }))
      .sort(byKeys('threadId', 'id')),
    run_spend: runSpend
      .map((s) => plain(openSpend(codec, s)))
      .sort(byKeys('threadId', 'runId', 'dimension', 'key')),
  };
}
