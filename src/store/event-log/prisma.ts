import { canonicalJson } from '../../core/canonical.js';
import { ok, type Result } from '../../core/errors.js';
import { checkAppend, type LogEntry } from '../../core/log/index.js';
import { type FieldCodec, PLAIN_CODEC } from '../crypto/index.js';
import { isUniqueViolation } from '../prisma/errors.js';
import type { PostgresPrismaClient } from '../prisma/postgres.js';
import type { SqlitePrismaClient } from '../prisma/sqlite.js';
import { readLogTexts } from '../read-model/log-reads.js';
import {
  checkForkInput,
  checkThreadId,
  forkOutOfRange,
  forkTargetNotEmpty,
  getReadWindow,
  unknownForkSource,
} from './input-checks.js';
import {
  createSql,
  DEFAULT_ROWS_PER_STATEMENT,
  type EntryRow,
  type EventLogProvider,
  maxRowsPerStatement,
  type RawClient,
  type RawQueryable,
  type TransactionOptions,
  toEntryRow,
} from './prisma-sql.js';
import type { AppendInput, EventLogStore, ForkInput, ReadOptions } from './types.js';

export interface PrismaEventLogStoreOptions {
  /** Clock for the created_at/updated_at of thread rows the store creates. Default: `new Date()`. */
  now?: () => Date;
  /** Rows per multi-row INSERT (capped by the provider's parameter limit). Default 1000. */
  rowsPerStatement?: number;
  /** Interactive transaction limits. Default: wait up to 10 s, run up to 60 s. */
  transaction?: TransactionOptions;
  /**
   * How entry texts are sealed and opened (encryption at rest): pass the thread store's `codec`
   * on a database that holds encrypted data. Default: plain text, and a sealed entry read back
   * is ENCRYPTION_KEY_MISSING.
   */
  codec?: FieldCodec;
}

export interface PrismaEventLogStore extends EventLogStore {
  readonly provider: EventLogProvider;
  /**
   * The append inside the caller's interactive transaction `tx` (for the engine, which writes
   * read models in the same transaction). On an error result the caller must roll back. A race
   * lost to a concurrent writer surfaces as a thrown unique violation when the transaction's
   * statements run; pass it to `explainAppendFailure`.
   */
  appendIn(tx: RawQueryable, input: AppendInput): Promise<Result<{ length: number }>>;
  /**
   * After a transaction that called `appendIn` threw `error`: CONFLICT (with the length re-read
   * now) or VALIDATION_FAILED (an entry id already in the thread) when the error is a unique
   * violation on log_entry; otherwise rethrows `error`.
   */
  explainAppendFailure(input: AppendInput, error: unknown): Promise<Result<never>>;
}

/** Carries an expected failure out of `$transaction`, so the transaction rolls back. */
class Rollback {
  constructor(readonly result: Result<never>) {}
}

/**
 * The event-log store on a Prisma client, for the SQLite and the Postgres generated clients.
 *
 * Thread rows: log_entry references thread, and an unknown thread must be appendable at index 0,
 * so an append first runs `INSERT … ON CONFLICT DO NOTHING` of a minimal thread row (neutral
 * defaults: tenant `default`, metadata `{}`, node_types `[]`, state_hash ``). A row the engine
 * created earlier in the same transaction is left alone. The store owns `thread.log_length` (the
 * next expectedIndex) and keeps it in the same transaction as the entries; a failed append rolls
 * back its thread row too, so it never creates an empty thread. Fork creates the target row (same
 * tenant and configuration as the source) and records `forked_from_id` / `forked_up_to_index`.
 *
 * Races: the first statement of every write transaction is a write, so on SQLite a transaction
 * takes the write lock before reading (no stale-snapshot upgrade failures between connections);
 * on Postgres (read committed) two appends at one index both insert, and the unique
 * `(thread_id, log_index)` key lets exactly one commit. The loser's unique violation becomes
 * CONFLICT with the length re-read after its rollback.
 */
export function createPrismaEventLogStore(
  prisma: SqlitePrismaClient,
  provider: 'sqlite',
  options?: PrismaEventLogStoreOptions,
): PrismaEventLogStore;
export function createPrismaEventLogStore(
  prisma: PostgresPrismaClient,
  provider: 'postgres',
  options?: PrismaEventLogStoreOptions,
): PrismaEventLogStore;
export function createPrismaEventLogStore(
  prisma: SqlitePrismaClient | PostgresPrismaClient,
  provider: EventLogProvider,
  options: PrismaEventLogStoreOptions = {},
): PrismaEventLogStore {
  const client = prisma as unknown as RawClient;
  const sql = createSql(provider);
  const now = options.now ?? (() => new Date());
  const codec = options.codec ?? PLAIN_CODEC;
  const rowsPerStatement = Math.max(
    1,
    Math.min(options.rowsPerStatement ?? DEFAULT_ROWS_PER_STATEMENT, maxRowsPerStatement(provider)),
  );
  const txOptions: TransactionOptions = {
    maxWait: 10_000,
    timeout: 60_000,
    ...options.transaction,
  };

  const lengthIn = async (db: RawQueryable, threadId: string): Promise<number | null> => {
    const rows = await db.$queryRawUnsafe<Array<{ log_length: number | bigint }>>(
      sql.length,
      threadId,
    );
    return rows.length === 0 ? null : Number(rows[0]!.log_length);
  };

  const existingIds = async (threadId: string, ids: readonly string[]): Promise<Set<string>> => {
    const found = new Set<string>();
    const chunk = maxRowsPerStatement(provider);
    for (let i = 0; i < ids.length; i += chunk) {
      const part = ids.slice(i, i + chunk);
      const rows = await client.$queryRawUnsafe<Array<{ entry_id: string }>>(
        sql.existingIds(part.length),
        threadId,
        ...part,
      );
      for (const row of rows) found.add(row.entry_id);
    }
    return found;
  };

  const insertRows = async (tx: RawQueryable, rows: readonly EntryRow[]): Promise<void> => {
    for (let i = 0; i < rows.length; i += rowsPerStatement) {
      const part = rows.slice(i, i + rowsPerStatement);
      await tx.$executeRawUnsafe(sql.insertEntries(part.length), ...part.flat());
    }
  };

  /**
   * `validated`: the batch already passed checkAppend's shape rules outside the transaction,
   * so the CPU-heavy entry validation does not run while holding the write lock.
   */
  const appendWithin = async (
    tx: RawQueryable,
    input: AppendInput,
    rows: readonly EntryRow[] | null,
  ): Promise<Result<{ length: number }>> => {
    const at = now().toISOString();
    await tx.$executeRawUnsafe(sql.ensureThread, input.threadId, at, at);
    const currentLength = (await lengthIn(tx, input.threadId)) ?? 0;
    // Entry ids already in the thread are caught by the unique (thread_id, entry_id) key and
    // explained by explainAppendFailure: no lookup on the hot path.
    const checked = checkAppend({
      threadId: input.threadId,
      currentLength,
      expectedIndex: input.expectedIndex,
      entries: input.entries,
      hasEntryId: () => false,
      validateEntries: rows === null,
    });
    if (!checked.ok) return checked;
    await insertRows(tx, rows ?? toRows(input, provider, codec));
    const length = input.expectedIndex + input.entries.length;
    await tx.$executeRawUnsafe(sql.setLength, length, input.threadId);
    return ok({ length });
  };

  const explainAppendFailure = async (
    input: AppendInput,
    error: unknown,
  ): Promise<Result<never>> => {
    if (!isUniqueViolation(error)) throw error;
    const actual = (await lengthIn(client, input.threadId)) ?? 0;
    const ids =
      actual === input.expectedIndex ? await existingIds(input.threadId, entryIds(input)) : null;
    const checked = checkAppend({
      threadId: input.threadId,
      currentLength: actual,
      expectedIndex: input.expectedIndex,
      entries: input.entries,
      hasEntryId: (id) => ids?.has(id) ?? false,
      validateEntries: false,
    });
    if (checked.ok) throw error; // a unique violation that neither index nor ids explain
    return checked;
  };

  return {
    provider,

    async append(input) {
      const id = checkThreadId(input.threadId);
      if (!id.ok) return id;
      const shape = checkAppend({
        threadId: input.threadId,
        currentLength: input.expectedIndex,
        expectedIndex: input.expectedIndex,
        entries: input.entries,
        hasEntryId: () => false,
      });
      // A failing batch goes through the full check inside the transaction, so a stale writer
      // still hears CONFLICT before a repeated id, exactly as checkAppend orders them.
      const rows = shape.ok ? toRows(input, provider, codec) : null;
      try {
        return await client.$transaction(async (tx) => {
          const result = await appendWithin(tx, input, rows);
          if (!result.ok) throw new Rollback(result);
          return result;
        }, txOptions);
      } catch (error) {
        if (error instanceof Rollback) return error.result;
        return explainAppendFailure(input, error);
      }
    },

    async appendIn(tx, input) {
      const id = checkThreadId(input.threadId);
      if (!id.ok) return id;
      return appendWithin(tx, input, null);
    },

    explainAppendFailure,

    async read(threadId: string, readOptions?: ReadOptions): Promise<LogEntry[]> {
      const window = getReadWindow(threadId, readOptions);
      const texts = await readLogTexts(client, provider, codec, threadId, window);
      return texts.map((t) => JSON.parse(t.appended) as LogEntry);
    },

    async length(threadId: string): Promise<number> {
      return (await lengthIn(client, threadId)) ?? 0;
    },

    async fork(input: ForkInput): Promise<Result<{ length: number }>> {
      const shape = checkForkInput(input);
      if (!shape.ok) return shape;
      try {
        return await client.$transaction(async (tx) => {
          const result = await forkWithin(tx, input);
          if (!result.ok) throw new Rollback(result);
          return result;
        }, txOptions);
      } catch (error) {
        if (error instanceof Rollback) return error.result;
        if (!isUniqueViolation(error)) throw error;
        // Another writer filled the target while this fork copied into it.
        const existing = (await lengthIn(client, input.newThreadId)) ?? 0;
        if (existing === 0) throw error;
        return forkTargetNotEmpty(input.newThreadId, existing);
      }
    },
  };

  async function forkWithin(
    tx: RawQueryable,
    input: ForkInput,
  ): Promise<Result<{ length: number }>> {
    const at = now().toISOString();
    await tx.$executeRawUnsafe(sql.ensureForkTarget, input.newThreadId, at, at, input.threadId);
    const sourceLength = await lengthIn(tx, input.threadId);
    if (sourceLength === null) return unknownForkSource(input.threadId);
    const upTo = input.upToIndex ?? sourceLength;
    if (upTo > sourceLength) return forkOutOfRange(upTo, sourceLength);
    const targetLength = (await lengthIn(tx, input.newThreadId)) ?? 0;
    if (targetLength > 0) return forkTargetNotEmpty(input.newThreadId, targetLength);
    if (upTo > 0)
      await tx.$executeRawUnsafe(sql.copyPrefix, input.newThreadId, input.threadId, upTo);
    await tx.$executeRawUnsafe(sql.markFork, upTo, input.threadId, upTo, input.newThreadId);
    return ok({ length: upTo });
  }
}

const entryIds = (input: AppendInput): string[] => input.entries.map((entry) => entry.id);

/**
 * The rows of an append: the canonical text (what hashes are over, and what the engine reads),
 * and the text as appended when its key order differs, so `read` returns it byte for byte.
 */
function toRows(input: AppendInput, provider: EventLogProvider, codec: FieldCodec): EntryRow[] {
  return input.entries.map((entry) => {
    const text = canonicalJson(entry);
    const appended = JSON.stringify(entry);
    const verbatim = appended === text ? null : codec.sealText(appended);
    return toEntryRow(input.threadId, entry, codec.sealText(text), verbatim, provider);
  });
}
