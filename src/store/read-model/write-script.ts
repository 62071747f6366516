/**
 * Write scripts: a commit's statements are recorded first and then run as one unit, so that the
 * database work of a transaction never waits on the event loop (on SQLite it runs whole in the
 * writer thread, see sqlite-writer.ts). The statement builders of sql.ts run unchanged on a
 * `ScriptRecorder`, which implements their executor by appending to a list.
 *
 * A `ScriptRunner` runs scripts in one transaction each:
 * - `runAll(statements)`: all or nothing; the first failing statement rolls everything back and
 *   the runner rejects with a `StatementFailure` naming it.
 * - `runEach(blocks)`: each block in its own SAVEPOINT; a failing block rolls back alone, the
 *   others commit, and each block's outcome is returned.
 * Both reject with the error itself when the transaction as a whole fails (begin, commit).
 */
import { Prisma } from '../../generated/prisma-sqlite/client.js';
import type { SqlitePrismaClient } from '../prisma/sqlite.js';
import type { RawExecutor } from './sql.js';

const { sql } = Prisma;

/** An expected failure a statement may raise: a unique violation of it means this. */
export type GuardReason = 'conflict' | 'idempotency';

/** One recorded statement: a Prisma.Sql, or a `?`-placeholder text with flat values. */
export interface RecordedStatement {
  query?: Prisma.Sql;
  text: string;
  values: unknown[];
  /** Set when the statement ran inside `guard(reason, …)`. */
  reason?: GuardReason;
}

/** The outcome of one block of `runEach`. */
export type BlockOutcome = { ok: true } | { ok: false; statement: number; error: unknown };

/** `runAll` rejected because statement `statement` failed; nothing was written. */
export class StatementFailure extends Error {
  constructor(
    readonly statement: number,
    readonly error: unknown,
  ) {
    super(error instanceof Error ? error.message : String(error));
    this.name = 'StatementFailure';
  }
}

export interface ScriptRunner {
  runAll(statements: readonly RecordedStatement[]): Promise<void>;
  runEach(blocks: ReadonlyArray<readonly RecordedStatement[]>): Promise<BlockOutcome[]>;
  close(): Promise<void>;
}

/**
 * Records statements instead of running them. `text: true` offers the `runText` fast path (flat
 * values and `?` placeholders: the SQLite writer); without it every statement is a Prisma.Sql.
 */
export class ScriptRecorder implements RawExecutor {
  readonly statements: RecordedStatement[] = [];
  private reason: GuardReason | undefined;
  readonly runText?: (text: string, values: unknown[]) => number;

  constructor(options: { text: boolean }) {
    if (options.text) {
      this.runText = (text, values) => {
        this.push({ text, values });
        return 0;
      };
    }
  }

  $executeRaw(query: Prisma.Sql): Promise<number> {
    this.push({ query, text: query.sql, values: query.values });
    return Promise.resolve(0);
  }

  $queryRaw<T>(): Promise<T> {
    return Promise.reject(new Error('write scripts hold no reads'));
  }

  /** Marks the statements `record` adds: a unique violation of one of them means `reason`. */
  async guard(reason: GuardReason, record: () => Promise<unknown>): Promise<void> {
    this.reason = reason;
    try {
      await record();
    } finally {
      this.reason = undefined;
    }
  }

  private push(statement: RecordedStatement): void {
    if (this.reason !== undefined) statement.reason = this.reason;
    this.statements.push(statement);
  }
}

/** Records what `write` does on a fresh recorder. */
export async function recordScript(
  text: boolean,
  write: (tx: ScriptRecorder) => Promise<unknown>,
): Promise<RecordedStatement[]> {
  const recorder = new ScriptRecorder({ text });
  await write(recorder);
  return recorder.statements;
}

type Tx = RawExecutor & { $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number> };

const execute = (tx: Tx, s: RecordedStatement) =>
  s.query !== undefined ? tx.$executeRaw(s.query) : tx.$executeRawUnsafe(s.text, ...s.values);

/**
 * A runner on a Prisma client's interactive transactions (Postgres; SQLite through Prisma in
 * `createThreadStore`): the statements go one by one, inside the transaction.
 */
export function prismaScriptRunner(
  prisma: SqlitePrismaClient,
  txOptions: { maxWait?: number; timeout?: number },
): ScriptRunner {
  const transaction = <T>(work: (tx: Tx) => Promise<T>) =>
    prisma.$transaction((tx) => work(tx as unknown as Tx), txOptions);
  return {
    async runAll(statements) {
      await transaction(async (tx) => {
        for (const [i, statement] of statements.entries()) {
          try {
            await execute(tx, statement);
          } catch (error) {
            throw new StatementFailure(i, error);
          }
        }
      });
    },
    runEach: (blocks) =>
      transaction(async (tx) => {
        const outcomes: BlockOutcome[] = [];
        for (const block of blocks) {
          await tx.$executeRaw(sql`SAVEPOINT weft_item`);
          let outcome: BlockOutcome = { ok: true };
          for (const [i, statement] of block.entries()) {
            try {
              await execute(tx, statement);
            } catch (error) {
              outcome = { ok: false, statement: i, error };
              break;
            }
          }
          // If even the rollback fails, the transaction is unusable: it rejects as a whole.
          if (!outcome.ok) await tx.$executeRaw(sql`ROLLBACK TO SAVEPOINT weft_item`);
          await tx.$executeRaw(sql`RELEASE SAVEPOINT weft_item`);
          outcomes.push(outcome);
        }
        return outcomes;
      }),
    close: async () => undefined,
  };
}
