import { err, ok, type Result, type WeftError } from '../../core/errors.js';
import type { LogEntry } from '../../core/log/index.js';
import { createFieldCodec, type FieldCodec } from '../crypto/index.js';
import { createPrisma, type WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import { idempotencyRecord, logEntry, snapshot, type ThreadRow, thread } from '../tables/index.js';
import { type DueRun, type DueRunQuery, findDueRuns } from './deadlines.js';
import { dumpReadModels, type ReadModelDump } from './dump.js';
import { checkEncryptionMarker } from './encryption-marker.js';
import { type ForkSourceRows, readForkSourceRows } from './fork-rows.js';
import { createLineages, type Lineage } from './lineage.js';
import {
  type EntryReads,
  type LogTexts,
  type LogWindow,
  MAX_LOG_INDEX,
  readLogTexts,
  readNodeLogIndex,
} from './log-reads.js';
import { readPayloadSalt } from './payload-salt.js';
import { createRedactionStore, type RedactionStore } from './redaction.js';
import type { ReadModelChanges, SnapshotRow } from './rows.js';
import { type IdempotencyRecord, LABEL, openRecord, openSnapshot } from './sealed-rows.js';
import { createSearchQueries, type NodeSearchHit, type NodeSearchQuery } from './search-queries.js';
import { findRunLocations, marks, type RunLocation, selectRows } from './select.js';
import { openSqliteWriteConnection } from './sqlite-writer.js';
import { storedItem, storedItemInSlices } from './stored-item.js';
import { createStoreCodec, openByThread, storeKeyring } from './thread-keys.js';
import { createThreadRemovalStore, keyReused, type ThreadRemovalStore } from './thread-removal.js';
import type { Pause } from './time-slices.js';
import { prismaScriptRunner, type RawClient } from './write-script.js';
import { createWriter, type StoreWriterStats, type Writer } from './writer.js';

export type { ReadModelDump } from './dump.js';
export type { IdempotencyRecord } from './sealed-rows.js';
export type { NodeSearchHit, NodeSearchQuery, SearchSnippet } from './search-queries.js';
export type { RunLocation } from './select.js';
export type { StoreWriterStats } from './writer.js';

/**
 * Persistence of threads for the engine: the log entries and every read model of a thread,
 * written together in one transaction. Expected failures are Result values:
 * - CONFLICT {threadId, expectedIndex, actualIndex} when the first entry's index is taken (a
 *   concurrent writer won; `actualIndex` is the length re-read after the rollback) or, for a new
 *   thread, when the thread id exists;
 * - IDEMPOTENCY_KEY_REUSED {key} when the idempotency record's (scope, key) is taken — the
 *   caller re-reads the record to tell a retry from a reuse.
 */
export interface ThreadStore extends ThreadRemovalStore, RedactionStore {
  readonly provider: 'sqlite' | 'postgres';
  /** Entries with index in `[from, to)` in index order; `[]` for an unknown thread (see LogWindow). */
  readEntries(
    threadId: string,
    from?: number,
    to?: number,
    options?: EntryReads,
  ): Promise<LogEntry[]>;
  /** The canonical texts of the entries `readEntries` returns (what they are parsed from). */
  readEntryTexts(threadId: string, from?: number, to?: number): Promise<string[]>;
  /** The canonical and the appended texts of the entries in `window`, in index order. */
  readLog(threadId: string, window: LogWindow): Promise<LogTexts[]>;
  /** Which of `entryIds` the thread's log holds. */
  findEntryIds(threadId: string, entryIds: readonly string[]): Promise<Set<string>>;
  /** The index of the entry that logged node `sequence` of the thread; undefined: no such node. */
  findNodeLogIndex(threadId: string, sequence: number): Promise<number | undefined>;
  /**
   * Up to `limit` snapshots of the thread with index ≤ `atMost`, newest first (unverified: the
   * caller checks them, see src/core/thread/snapshot.ts).
   */
  findSnapshots(threadId: string, atMost: number, limit?: number): Promise<SnapshotRow[]>;
  /** Where the thread's rows are: its own, and the shared history of a fork (lineage.ts). */
  lineage(threadId: string): Promise<Lineage>;
  /** What a fork at `upTo` takes over from its source's current-state rows (fork-rows.ts). */
  forkSourceRows(threadId: string, upTo: number): Promise<ForkSourceRows>;
  /** The stored log length; undefined for an unknown thread. */
  getLogLength(threadId: string): Promise<number | undefined>;
  /** A live thread's payload salt secret (payload-salt.ts); undefined for an unknown one. */
  getPayloadSalt(threadId: string): Promise<string | null | undefined>;
  /** Every thread holding a run with this id (the starting thread and its forks). */
  findRunThreads(runId: string): Promise<RunLocation[]>;
  /** The tenant owning the thread; undefined for an unknown thread. */
  getThreadTenant(threadId: string): Promise<string | undefined>;
  findIdempotencyRecord(scope: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Writes entries and read models (and the idempotency record) in one transaction. */
  commit(
    changes: ReadModelChanges,
    options?: {
      idempotency?: IdempotencyRecord | undefined;
      /**
       * For a commit of very many rows (an import): its rows are prepared and handed to the
       * writer in time slices, pausing with this (time-slices.ts), still as one transaction.
       */
      pause?: Pause | undefined;
    },
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
   * Whether commits write the search index of node text (search-queries.ts): always without an
   * encryption key; with one only when `searchPlaintextIndex` is set, since it holds plain text.
   */
  readonly searchIndexed: boolean;
  /** The tenant's nodes whose text matches, best first (see search-queries.ts). */
  searchNodes(query: NodeSearchQuery): Promise<NodeSearchHit[]>;
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
   * SAVEPOINT so that a failing one rolls back alone. Default: on (on Postgres a tenant's write
   * transactions hold its activity counter row until they commit, so ungrouped they committed
   * one fsync at a time). `maxBatch` caps the commits per transaction (default 256). `inFlight`
   * is how many transactions are handed to the writer at once: what is queued is shared among
   * them, so the first commits are acknowledged while the next still run (default 2 on SQLite's
   * writer thread, which runs them one after another; 1 otherwise). On SQLite, `false` still
   * serialises writes, one transaction each. Each store has its own writer: open one store per
   * database and share it (two stores on one SQLite file take turns at its write lock, like two
   * processes).
   */
  groupCommit?: boolean | { maxBatch?: number; inFlight?: number };
  /**
   * Encryption at rest: the 32-byte key every client-supplied column is sealed with (see
   * src/store/crypto and sealed-rows.ts). Without it, values are stored in plain text, and a
   * database holding encrypted data is refused (ENCRYPTION_KEY_MISSING).
   */
  encryptionKey?: Uint8Array | undefined;
  /**
   * With `encryptionKey`: keep the search index of node text anyway, in plain text (the payloads
   * stay sealed; the index does not). Without a key the index is always kept.
   */
  searchPlaintextIndex?: boolean | undefined;
  /** How long one read may run, in ms (WEFT_QUERY_TIMEOUT_MS; see WeftPrismaOptions). */
  queryTimeoutMs?: number | undefined;
}

const searchIndexed = (options: ThreadStoreOptions) =>
  options.encryptionKey === undefined || options.searchPlaintextIndex === true;

const DEFAULT_MAX_BATCH = 256;

const inFlightOf = (option: ThreadStoreOptions['groupCommit']): number | undefined =>
  typeof option === 'object' ? option.inFlight : undefined;

const maxBatchOf = (option: ThreadStoreOptions['groupCommit']): number =>
  option === false
    ? 1
    : typeof option === 'object'
      ? (option.maxBatch ?? DEFAULT_MAX_BATCH)
      : DEFAULT_MAX_BATCH;

/**
 * A thread store on a database URL (SQLite `file:` or `postgres://`), already migrated, on a
 * client of its own that its `close()` disconnects. A process holding a client on the database
 * already opens its store on that client instead (`openThreadStoreOn`).
 */
export function openThreadStore(
  databaseUrl: string,
  options: ThreadStoreOptions = {},
): ThreadStore {
  return storeOn(
    createPrisma(databaseUrl, { queryTimeoutMs: options.queryTimeoutMs }),
    options,
    true,
  );
}

/**
 * A thread store on `weft`, a client on a migrated database that the caller owns: the store's
 * `close()` leaves it open (the caller disconnects it after). On SQLite, its writer is a write
 * connection of its own, in its own thread (sqlite-writer.ts); on Postgres it writes through
 * the client.
 */
export function openThreadStoreOn(weft: WeftPrisma, options: ThreadStoreOptions = {}): ThreadStore {
  return storeOn(weft, options, false);
}

function storeOn(weft: WeftPrisma, options: ThreadStoreOptions, ownsClient: boolean): ThreadStore {
  if (weft.provider !== 'sqlite') return prismaStore(weft, options, ownsClient);
  const maxBatch = maxBatchOf(options.groupCommit ?? true);
  return buildThreadStore(
    weft,
    createWriter(openSqliteWriteConnection(weft.path), {
      provider: 'sqlite',
      maxBatch,
      // The writer thread runs its transactions in the order it gets them: the next batch can be
      // handed on while one commits.
      inFlight: inFlightOf(options.groupCommit) ?? 2,
      queued: true,
    }),
    createStoreCodec(weft, createFieldCodec(options.encryptionKey), options.encryptionKey),
    searchIndexed(options),
    ownsClient,
  );
}

/**
 * The thread store on a Prisma client of either provider, writing through its own writer on
 * that client; its `close()` disconnects the client. The two generated clients have the same
 * model API, so one typing (the SQLite client's) serves both; raw SQL is provider-neutral.
 */
export function createThreadStore(weft: WeftPrisma, options: ThreadStoreOptions = {}): ThreadStore {
  return prismaStore(weft, options, true);
}

function prismaStore(
  weft: WeftPrisma,
  options: ThreadStoreOptions,
  ownsClient: boolean,
): ThreadStore {
  const grouped = options.groupCommit ?? true;
  const txOptions = { maxWait: 10_000, timeout: 60_000, ...options.transaction };
  return buildThreadStore(
    weft,
    createWriter(prismaScriptRunner(weft.prisma as unknown as RawClient, txOptions), {
      provider: weft.provider,
      maxBatch: maxBatchOf(grouped),
      inFlight: inFlightOf(grouped) ?? 1,
      queued: weft.provider === 'sqlite' || grouped !== false,
    }),
    createStoreCodec(weft, createFieldCodec(options.encryptionKey), options.encryptionKey),
    searchIndexed(options),
    ownsClient,
  );
}

/** What the groups of a thread store's methods share. */
interface StoreParts {
  weft: WeftPrisma;
  writer: Writer;
  codec: FieldCodec;
  indexed: boolean;
  lineages: ReturnType<typeof createLineages>;
  ready: () => Promise<void>;
}

/** The log's entries and snapshots as a thread reads them, through its lineage. */
function createLogReads({
  weft,
  codec,
  lineages,
  ready,
}: StoreParts): Pick<
  ThreadStore,
  | 'readEntries'
  | 'readEntryTexts'
  | 'readLog'
  | 'findEntryIds'
  | 'findSnapshots'
  | 'findNodeLogIndex'
> {
  const readLog = async (threadId: string, window: LogWindow): Promise<LogTexts[]> => {
    await ready();
    return readLogTexts(weft, codec, await lineages.of(threadId), window);
  };

  const readEntryTexts = async (
    threadId: string,
    from = 0,
    to = MAX_LOG_INDEX,
  ): Promise<string[]> =>
    (await readLog(threadId, { from, to, limit: MAX_LOG_INDEX })).map((r) => r.text);

  return {
    async readEntries(threadId, from = 0, to = MAX_LOG_INDEX, options = {}) {
      const window = { from, to, limit: MAX_LOG_INDEX, ...options };
      return (await readLog(threadId, window)).map((r) => JSON.parse(r.text) as LogEntry);
    },

    readEntryTexts,
    readLog,

    async findNodeLogIndex(threadId, sequence) {
      await ready();
      return readNodeLogIndex(weft, await lineages.of(threadId), sequence);
    },

    async findEntryIds(threadId, entryIds) {
      const found = new Set<string>();
      const L = logEntry.c;
      for (const s of await lineages.of(threadId)) {
        // Chunks well under both providers' bound-parameter limits.
        for (let i = 0; i < entryIds.length; i += 10_000) {
          const part = entryIds.slice(i, i + 10_000);
          const rows = await rawQuery(
            weft,
            `SELECT ${L.entryId} FROM ${logEntry.sql} WHERE ${L.threadId} = ? AND ${L.index} >= ? AND ${L.index} < ? AND ${L.entryId} IN (${marks(part.length)})`,
            [s.threadId, s.fromIndex, s.toIndex, ...part],
          );
          for (const row of rows) found.add(logEntry.decode(row, weft.provider).entryId);
        }
      }
      return found;
    },

    async findSnapshots(threadId, atMost, limit = 1) {
      await ready();
      const S = snapshot.c;
      const out: SnapshotRow[] = [];
      // A snapshot after k entries of a shared stretch is the thread's own state after k.
      for (const s of [...(await lineages.of(threadId))].reverse()) {
        if (out.length >= limit) break;
        const below = Math.min(atMost, s.toIndex);
        if (below <= s.fromIndex) continue;
        const rows = await selectRows(
          weft,
          snapshot,
          `${S.threadId} = ? AND ${S.index} <= ? AND ${S.index} > ?`,
          [s.threadId, below, s.fromIndex, limit - out.length],
          ` ORDER BY ${S.index} DESC LIMIT ?`,
        );
        const opened = await openByThread(codec, rows, (r) => r.threadId, openSnapshot);
        out.push(...opened.map((row) => ({ ...row, threadId })));
      }
      return out;
    },
  };
}

/** Commits: a thread's changes written through the writer, its refusals as typed errors. */
function createCommits(
  { writer, codec, indexed, ready }: StoreParts,
  getLogLength: (threadId: string) => Promise<number | undefined>,
): Pick<ThreadStore, 'commit'> {
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
    async commit(changes, commitOptions = {}) {
      // A log-only commit without entries still creates its thread row (an empty fork).
      if (changes.entries.length === 0 && changes.logOnly === undefined) return ok(undefined);
      await ready();
      const key = await storeKeyring(codec)?.forCommit(
        changes.threadId,
        changes.created,
        changes.thread.createdAt ?? changes.thread.updatedAt,
      );
      const { idempotency, pause } = commitOptions;
      const outcome =
        pause === undefined
          ? await writer.submit(storedItem(changes, idempotency, codec, indexed, key))
          : await writer.submitInSlices(
              await storedItemInSlices(changes, idempotency, codec, indexed, key, pause),
              pause,
            );
      if (outcome === 'written') {
        key?.written();
        return ok(undefined);
      }
      if (outcome === 'conflict') return err(await conflict(changes));
      return err(keyReused(commitOptions.idempotency?.key));
    },
  };
}

function buildThreadStore(
  weft: WeftPrisma,
  writer: Writer,
  codec: FieldCodec,
  indexed: boolean,
  ownsClient: boolean,
): ThreadStore {
  const lineages = createLineages(weft);
  const search = createSearchQueries(weft, lineages);
  let checked: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const ready = () => {
    checked ??= checkEncryptionMarker(weft, codec);
    return checked;
  };

  /** One field of a thread's row; undefined for an unknown thread. */
  const threadField = async <F extends 'logLength' | 'tenantId'>(threadId: string, field: F) => {
    // A deleted thread whose rows its forks still read is not there for anyone else.
    const [row] = await selectRows(
      weft,
      thread,
      `${thread.c.id} = ? AND ${thread.c.deletedAt} IS NULL`,
      [threadId],
      '',
      [field],
    );
    return row?.[field] as ThreadRow[F] | undefined;
  };
  const getLogLength = (threadId: string) => threadField(threadId, 'logLength');

  const parts: StoreParts = { weft, writer, codec, indexed, lineages, ready };

  return {
    provider: weft.provider,

    findDueRuns: (query) => findDueRuns(weft, query),

    searchIndexed: indexed,
    async searchNodes(query) {
      await ready();
      return search.searchNodes(query);
    },

    ...createLogReads(parts),

    lineage: (threadId) => lineages.of(threadId),

    ...createThreadRemovalStore({ weft, writer, codec, lineages, ready }),
    ...createRedactionStore({
      weft,
      writer,
      codec,
      ready,
      stored: (changes) => storedItem(changes, undefined, codec, indexed),
    }),

    forkSourceRows: (threadId, upTo) =>
      ready().then(() => readForkSourceRows(weft, codec, threadId, upTo)),

    getLogLength,
    getPayloadSalt: (threadId) => readPayloadSalt(weft, codec, threadId),

    findRunThreads: (runId) => findRunLocations(weft, runId),

    getThreadTenant: (threadId) => threadField(threadId, 'tenantId'),

    async findIdempotencyRecord(scope, key) {
      await ready();
      // With a key, a record written before keys were hashed is found by its plain key.
      const forms = codec.digestForms(LABEL.idempotencyKey, key);
      const I = idempotencyRecord.c;
      const [row] = await selectRows(
        weft,
        idempotencyRecord,
        `${I.scope} = ? AND ${I.key} IN (${marks(forms.length)})`,
        [scope, ...forms],
        ' LIMIT 1',
      );
      return row === undefined ? undefined : openRecord(codec, key, row);
    },

    ...createCommits(parts, getLogLength),

    dumpReadModels: async (threadIds) => {
      await ready();
      return dumpReadModels(weft, codec, lineages, threadIds);
    },

    codec,
    ready,

    writerStats: () => writer.stats(),

    // Once, however many of its holders close it (an engine, and the database it was opened on).
    close() {
      closing ??= (async () => {
        await writer.release();
        await search.close();
        if (ownsClient) await weft.prisma.$disconnect();
      })();
      return closing;
    },
  };
}
