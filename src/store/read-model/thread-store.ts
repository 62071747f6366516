import { err, ok, type Result, type WeftError } from '../../core/errors.js';
import type { LogEntry } from '../../core/log/index.js';
import { Prisma } from '../../generated/prisma-sqlite/client.js';
import { createPrisma, type WeftPrisma } from '../prisma/index.js';
import type { SqlitePrismaClient } from '../prisma/sqlite.js';
import { isUniqueViolation } from './prisma-errors.js';
import type { ReadModelChanges } from './rows.js';
import {
  insertEntries,
  insertNodeParents,
  insertNodes,
  insertThread,
  type RawExecutor,
  setNodeFlag,
  updateThread,
  upsertResourceHeads,
  upsertRunSpend,
  upsertRuns,
} from './sql.js';

const { sql } = Prisma;

/** A stored idempotency record (DESIGN §2.10). */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  requestHash: string;
  /** Canonical JSON of the original response. */
  response: string;
  threadId: string | null;
  createdAt: Date;
}

/** Where a run lives: a run id repeats in forks of the thread that started it. */
export interface RunLocation {
  threadId: string;
  forkedFromId: string | null;
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
  /** The stored log length; undefined for an unknown thread. */
  getLogLength(threadId: string): Promise<number | undefined>;
  /** Every thread holding a run with this id (the starting thread and its forks). */
  findRunThreads(runId: string): Promise<RunLocation[]>;
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
  close(): Promise<void>;
}

export type ReadModelDump = Record<
  'thread' | 'node' | 'node_parent' | 'resource_head' | 'run' | 'run_spend',
  Array<Record<string, unknown>>
>;

export interface ThreadStoreOptions {
  /** Interactive transaction limits. Default: wait up to 10 s, run up to 60 s. */
  transaction?: { maxWait?: number; timeout?: number };
}

/** Carries an expected failure out of `$transaction`, so that the transaction rolls back. */
class Rejected {
  constructor(readonly reason: 'conflict' | 'idempotency') {}
}

/** Runs a statement; a unique violation becomes a `Rejected(reason)` throw. */
async function guarded(reason: Rejected['reason'], run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (error) {
    throw isUniqueViolation(error) ? new Rejected(reason) : error;
  }
}

/** A thread store on a database URL (SQLite `file:` or `postgres://`), already migrated. */
export function openThreadStore(databaseUrl: string, options?: ThreadStoreOptions): ThreadStore {
  return createThreadStore(createPrisma(databaseUrl), options);
}

/**
 * The thread store on a Prisma client of either provider. The two generated clients have the
 * same model API, so one typing (the SQLite client's) serves both; raw SQL is provider-neutral.
 */
export function createThreadStore(weft: WeftPrisma, options: ThreadStoreOptions = {}): ThreadStore {
  const prisma = weft.prisma as unknown as SqlitePrismaClient;
  const txOptions = { maxWait: 10_000, timeout: 60_000, ...options.transaction };

  const getLogLength = async (threadId: string) => {
    const row = await prisma.thread.findUnique({
      where: { id: threadId },
      select: { logLength: true },
    });
    return row?.logLength;
  };

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

  const write = async (tx: RawExecutor, c: ReadModelChanges, record?: IdempotencyRecord) => {
    // The first statement writes, so a SQLite transaction holds the write lock from the start.
    if (c.created) await guarded('conflict', () => insertThread(tx, c.thread));
    await guarded('conflict', () => insertEntries(tx, c.entries));
    if (record !== undefined) {
      await guarded('idempotency', () =>
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
    await upsertResourceHeads(tx, c.resourceHeads);
    await upsertRuns(tx, c.runs);
    await upsertRunSpend(tx, c.runSpend);
    if (!c.created) await updateThread(tx, c.thread);
  };

  return {
    provider: weft.provider,

    async readEntries(threadId, from = 0, to = 2_147_483_647) {
      const rows = await prisma.$queryRaw<Array<{ entry: string }>>(
        sql`SELECT "entry" FROM "log_entry" WHERE "thread_id" = ${threadId} AND "log_index" >= ${from} AND "log_index" < ${to} ORDER BY "log_index"`,
      );
      return rows.map((row) => JSON.parse(row.entry) as LogEntry);
    },

    getLogLength,

    async findRunThreads(runId) {
      const rows = await prisma.run.findMany({
        where: { id: runId },
        select: { threadId: true, thread: { select: { forkedFromId: true } } },
      });
      return rows.map((r) => ({ threadId: r.threadId, forkedFromId: r.thread.forkedFromId }));
    },

    async findIdempotencyRecord(scope, key) {
      const row = await prisma.idempotencyRecord.findUnique({
        where: { scope_key: { scope, key } },
      });
      return row ?? undefined;
    },

    async commit(changes, commitOptions = {}) {
      if (changes.entries.length === 0) return ok(undefined);
      try {
        await prisma.$transaction(
          (tx) => write(tx as unknown as RawExecutor, changes, commitOptions.idempotency),
          txOptions,
        );
        return ok(undefined);
      } catch (error) {
        if (!(error instanceof Rejected)) throw error;
        if (error.reason === 'conflict') return err(await conflict(changes));
        const key = commitOptions.idempotency?.key ?? '';
        return err({
          code: 'IDEMPOTENCY_KEY_REUSED',
          message: `idempotency key ${key} was used concurrently`,
          key,
        });
      }
    },

    dumpReadModels: (threadIds) => dumpReadModels(prisma, threadIds),

    close: () => prisma.$disconnect(),
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
  return {
    thread: thread.map(plain).sort(byKeys('id')),
    node: node.map(plain).sort(byKeys('threadId', 'id')),
    node_parent: nodeParent.map(plain).sort(byKeys('threadId', 'childId', 'parentId')),
    resource_head: resourceHead.map(plain).sort(byKeys('threadId', 'resourceKey')),
    run: run.map(plain).sort(byKeys('threadId', 'id')),
    run_spend: runSpend.map(plain).sort(byKeys('threadId', 'runId', 'dimension', 'key')),
  };
}
