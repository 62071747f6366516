/**
 * Write scripts: a commit's statements are recorded first and then run as one unit, so that the
 * database work of a transaction never waits on the event loop (on SQLite it runs whole in the
 * writer thread, see sqlite-writer.ts). The statement builders of sql.ts append to a
 * `ScriptRecorder`; nothing is executed until the script is whole.
 *
 * A `ScriptRunner` runs scripts in one transaction each:
 * - `runAll(statements)`: all or nothing; the first failing statement rolls everything back and
 *   the runner rejects with a `StatementFailure` naming it.
 * - `runEach(blocks)`: each block in its own SAVEPOINT; a failing block rolls back alone, the
 *   others commit, and each block's outcome is returned.
 * Both reject with the error itself when the transaction as a whole fails (begin, commit).
 */
import { type Provider, postgresText } from '../tables/index.js';
import type { Pause } from './time-slices.js';

/** An expected failure a statement may raise: a unique violation of it means this. */
export type GuardReason = 'conflict' | 'idempotency';

/**
 * One recorded statement: its text with `?` placeholders (`$1`, `$2`, … on Postgres) and the
 * values to bind, already encoded for the driver (tables/define.ts).
 */
export interface RecordedStatement {
  text: string;
  values: unknown[];
  /** Set when the statement was recorded inside `guard(reason, …)`. */
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
  /**
   * `runAll` for a script of very many statements, handed on in slices with `pause` between
   * them (time-slices.ts): still one transaction, committed only after its last statement.
   */
  runAllInSlices(statements: readonly RecordedStatement[], pause: Pause): Promise<void>;
  runEach(blocks: ReadonlyArray<readonly RecordedStatement[]>): Promise<BlockOutcome[]>;
  close(): Promise<void>;
}

/**
 * The statement texts a writer builds, kept while it lives: multi-row texts by shape and row
 * count (few distinct, so the SQLite writer's prepared statements are reused), and their
 * Postgres forms. Bounded; owned by one writer.
 */
export class StatementTexts {
  private readonly multiRows = new Map<string, string>();
  private readonly numbered = new Map<string, string>();

  constructor(readonly provider: Provider) {}

  /** `head VALUES tuple, tuple, … tail` for `rows` rows. */
  multiRow(head: string, tuple: string, rows: number, tail: string): string {
    const key = `${rows}\u0000${head}\u0000${tuple}\u0000${tail}`;
    let text = this.multiRows.get(key);
    if (text === undefined) {
      text = `${head} VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}${tail}`;
      if (this.multiRows.size >= 512) this.multiRows.clear();
      this.multiRows.set(key, text);
    }
    return text;
  }

  /** `text` with the provider's placeholders. */
  forProvider(text: string): string {
    if (this.provider !== 'postgres') return text;
    let out = this.numbered.get(text);
    if (out === undefined) {
      out = postgresText(text);
      if (this.numbered.size >= 1024) this.numbered.clear();
      this.numbered.set(text, out);
    }
    return out;
  }
}

/** Collects a transaction's statements instead of running them (see the module comment). */
export class ScriptRecorder {
  readonly statements: RecordedStatement[] = [];
  private reason: GuardReason | undefined;

  constructor(readonly texts: StatementTexts) {}

  get provider(): Provider {
    return this.texts.provider;
  }

  /** Records `text` (with `?` placeholders) and its encoded values. */
  add(text: string, values: unknown[]): void {
    const statement: RecordedStatement = { text: this.texts.forProvider(text), values };
    if (this.reason !== undefined) statement.reason = this.reason;
    this.statements.push(statement);
  }

  /** Marks the statements `record` adds: a unique violation of one of them means `reason`. */
  guard(reason: GuardReason, record: () => void): void {
    this.reason = reason;
    try {
      record();
    } finally {
      this.reason = undefined;
    }
  }
}

/** Records what `write` does on a fresh recorder. */
export function recordScript(
  texts: StatementTexts,
  write: (script: ScriptRecorder) => void,
): RecordedStatement[] {
  const recorder = new ScriptRecorder(texts);
  write(recorder);
  return recorder.statements;
}

/** A Prisma client of either provider, or its interactive-transaction client. */
export interface RawClient {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $transaction<T>(
    work: (tx: RawClient) => Promise<T>,
    options?: { maxWait?: number; timeout?: number },
  ): Promise<T>;
}

const execute = (tx: RawClient, s: RecordedStatement) => tx.$executeRawUnsafe(s.text, ...s.values);

/**
 * A runner on a Prisma client's interactive transactions (Postgres; SQLite through Prisma in
 * `createThreadStore`): the statements go one by one, inside the transaction.
 */
export function prismaScriptRunner(
  prisma: RawClient,
  txOptions: { maxWait?: number; timeout?: number },
): ScriptRunner {
  const transaction = <T>(work: (tx: RawClient) => Promise<T>) =>
    prisma.$transaction(work, txOptions);
  const runAll = async (statements: readonly RecordedStatement[], pause?: Pause) => {
    await transaction(async (tx) => {
      for (const [i, statement] of statements.entries()) {
        try {
          await execute(tx, statement);
        } catch (error) {
          throw new StatementFailure(i, error);
        }
        await pause?.();
      }
    });
  };
  return {
    runAll: (statements) => runAll(statements),
    runAllInSlices: runAll,
    runEach: (blocks) =>
      transaction(async (tx) => {
        const outcomes: BlockOutcome[] = [];
        for (const block of blocks) {
          await tx.$executeRawUnsafe('SAVEPOINT weft_item');
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
          if (!outcome.ok) await tx.$executeRawUnsafe('ROLLBACK TO SAVEPOINT weft_item');
          await tx.$executeRawUnsafe('RELEASE SAVEPOINT weft_item');
          outcomes.push(outcome);
        }
        return outcomes;
      }),
    close: async () => undefined,
  };
}
