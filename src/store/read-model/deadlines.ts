/**
 * The deadline query of the run read model: which runs have an approval or execution deadline
 * that has passed. The engine's deadline sweep (src/engine/deadlines.ts) reads it, then lets the
 * core decide on the thread's own state whether each deadline still applies — this query only
 * finds candidates, it never decides.
 */
import { isTerminalStatus, WORKFLOW_STATUSES } from '../../core/run/index.js';
import { parseDatabaseUrl } from '../migrate/database-url.js';
import { createPostgresPrisma, createSqliteWeft, type WeftPrisma } from '../prisma/index.js';
import { run } from '../tables/index.js';
import { marks, selectRows } from './select.js';

/** A run of a thread: the run read model's key (a run id repeats in forks of its thread). */
export interface RunKey {
  threadId: string;
  runId: string;
}

/** A run whose deadline had passed when the read model was queried. */
export interface DueRun extends RunKey {
  /** Which deadline: approval wins when both have passed (as `getExpiredDeadline` decides). */
  deadline: 'approval' | 'execution';
  dueAt: Date;
}

export interface DueRunQuery {
  /** Deadlines at or before this instant are due. */
  now: Date;
  /** At most this many runs, in `(threadId, runId)` order. */
  limit: number;
  /** Keyset cursor: only runs after this key (the last run of the previous page). */
  after?: RunKey | undefined;
}

/** Where the engine's deadline sweep finds due runs. */
export interface DueRunSource {
  findDueRuns(query: DueRunQuery): Promise<DueRun[]>;
}

/** The statuses a deadline can still fire in (every non-terminal one). */
export const ACTIVE_RUN_STATUSES: readonly string[] = WORKFLOW_STATUSES.filter(
  (status) => !isTerminalStatus(status),
);

/**
 * Due runs, one page in `(threadId, runId)` order. One query over the run table, restricted to
 * active statuses first (`run_status_idx`): the execution deadline column keeps its value after
 * a run ends, so a range over it alone would walk every finished run; the active runs are the
 * small, bounded set. `waiting_timeout_at` is only set while a run waits (leaving `waiting`
 * clears it), so it needs no status check of its own.
 */
export async function findDueRuns(weft: WeftPrisma, query: DueRunQuery): Promise<DueRun[]> {
  const { now, limit, after } = query;
  const R = run.c;
  const at = run.encodeField('waitingTimeoutAt', now, weft.provider);
  const values: unknown[] = [...ACTIVE_RUN_STATUSES, at, at];
  let where = `${R.status} IN (${marks(ACTIVE_RUN_STATUSES.length)}) AND (${R.waitingTimeoutAt} <= ? OR ${R.executionDeadlineAt} <= ?)`;
  if (after !== undefined) {
    where += ` AND (${R.threadId} > ? OR (${R.threadId} = ? AND ${R.id} > ?))`;
    values.push(after.threadId, after.threadId, after.runId);
  }
  const rows = await selectRows(
    weft,
    run,
    where,
    [...values, limit],
    ` ORDER BY ${R.threadId}, ${R.id} LIMIT ?`,
    ['threadId', 'id', 'waitingTimeoutAt', 'executionDeadlineAt'],
  );
  return rows.map((row) => {
    const approval = row.waitingTimeoutAt !== null && row.waitingTimeoutAt <= now;
    return {
      threadId: row.threadId,
      runId: row.id,
      deadline: approval ? 'approval' : 'execution',
      dueAt: (approval ? row.waitingTimeoutAt : row.executionDeadlineAt) as Date,
    };
  });
}

export function openDueRunSource(databaseUrl: string): DueRunSource & { close(): Promise<void> } {
  const target = parseDatabaseUrl(databaseUrl);
  // Reads only: on SQLite (WAL) a reader never waits for the writer connection, and on Postgres
  // a sweep runs one query at a time, so a small pool is plenty.
  const weft: WeftPrisma =
    target.provider === 'sqlite'
      ? createSqliteWeft(target.path)
      : { provider: 'postgres', prisma: createPostgresPrisma(target.url, { pool: { max: 2 } }) };
  return {
    findDueRuns: (query) => findDueRuns(weft, query),
    close: () => weft.prisma.$disconnect(),
  };
}
