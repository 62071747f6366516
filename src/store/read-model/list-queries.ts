/**
 * The thread and run lists of the API: filtered, ordered by creation or last change in either
 * direction, keyset-paged (the cursor is the row a page starts after, in the order's
 * direction), and counted by the same filter. Each order has its index (migrations 0007, 0008).
 */
import type { WorkflowStatus } from '../../core/run/index.js';
import type { MetadataLeaf } from '../../core/thread/metadata-filter.js';
import type { WeftPrisma } from '../prisma/index.js';
import { run, thread } from '../tables/index.js';
import type { RunRow, ThreadRow } from './rows.js';
import { bind, countRows, marks, selectRows, whereBuilder } from './select.js';

/** The status of a run that waits for a human (an approval or other input). */
const WAITING: WorkflowStatus = 'waiting';

export type ThreadOrderField = 'createdAt' | 'updatedAt';

/** Which threads a list holds (and counts). */
export interface ThreadFilterQuery {
  /** Only threads of this tenant (undefined: every tenant, for system callers). */
  tenantId: string | undefined;
  forkedFromId?: string | undefined;
  createdAfter?: Date | undefined;
  createdBefore?: Date | undefined;
  updatedAfter?: Date | undefined;
  /** Only threads with (true) or without (false) a run waiting for a human. */
  hasPendingApproval?: boolean | undefined;
  /** Only threads whose metadata holds each leaf (core/thread/metadata-filter.ts). */
  metadata?: readonly MetadataLeaf[] | undefined;
}

export interface ThreadListQuery extends ThreadFilterQuery {
  /** Rows to return (the caller asks for one more to learn whether a next page exists). */
  take: number;
  /** Default: by creation time, oldest first. Ties are broken by id, in the same direction. */
  order?: { field: ThreadOrderField; descending: boolean } | undefined;
  /**
   * Keyset cursor: the row the page starts after, in the order's direction — its value of the
   * order field (`at`) and its id.
   */
  after?: { at: Date; id: string } | undefined;
}

/** Which runs a list holds (and counts). */
export interface RunFilterQuery {
  /** Only runs of this tenant (undefined: every tenant, for system callers). */
  tenantId: string | undefined;
  threadId?: string | undefined;
  statuses?: readonly string[] | undefined;
  /** Only runs waiting for one of these (`human_approval`, `external_event`, …). */
  waitingFor?: readonly string[] | undefined;
  createdAfter?: Date | undefined;
  createdBefore?: Date | undefined;
  updatedAfter?: Date | undefined;
  updatedBefore?: Date | undefined;
}

export interface RunListQuery extends RunFilterQuery {
  take: number;
  /** Default: by creation time, oldest first. Ties are broken by thread and id, likewise. */
  order?: { field: 'createdAt' | 'updatedAt'; descending: boolean } | undefined;
  /** Keyset cursor: the row the page starts after, in the order's direction. */
  after?: { at: Date; threadId: string; id: string } | undefined;
}

export interface ListQueries {
  listThreads(query: ThreadListQuery): Promise<ThreadRow[]>;
  countThreads(query: ThreadFilterQuery): Promise<number>;
  listRuns(query: RunListQuery): Promise<RunRow[]>;
  countRuns(query: RunFilterQuery): Promise<number>;
}

/** The lists on `weft`; `openThreads` and `openRuns` open the sealed columns of what they read. */
export function createListQueries(
  weft: WeftPrisma,
  openThreads: (rows: ThreadRow[]) => Promise<ThreadRow[]>,
  openRuns: (rows: RunRow[]) => Promise<RunRow[]>,
): ListQueries {
  const conditions = whereBuilder;

  /** The WHERE of a thread list's filter. */
  const threadConditions = (q: ThreadFilterQuery) => {
    const T = thread.c;
    const at = (field: 'createdAt' | 'updatedAt', d: Date) => bind(weft, thread, field, d);
    const w = conditions();
    w.add(`${T.deletedAt} IS NULL`);
    if (q.tenantId !== undefined) w.add(`${T.tenantId} = ?`, q.tenantId);
    if (q.forkedFromId !== undefined) w.add(`${T.forkedFromId} = ?`, q.forkedFromId);
    if (q.createdAfter !== undefined) w.add(`${T.createdAt} > ?`, at('createdAt', q.createdAfter));
    if (q.createdBefore !== undefined)
      w.add(`${T.createdAt} < ?`, at('createdAt', q.createdBefore));
    if (q.updatedAfter !== undefined) w.add(`${T.updatedAt} > ?`, at('updatedAt', q.updatedAfter));
    if (q.hasPendingApproval !== undefined) {
      const R = run.c;
      w.add(
        `${q.hasPendingApproval ? '' : 'NOT '}EXISTS (SELECT 1 FROM ${run.sql} r WHERE r.${R.threadId} = ${thread.sql}.${T.id} AND r.${R.status} = ?)`,
        WAITING,
      );
    }
    for (const leaf of q.metadata ?? []) {
      // Each leaf compares the JSON at its path with the filter's value, both as the database
      // renders JSON (SQLite: minified text; Postgres: jsonb equality).
      if (weft.provider === 'postgres') {
        w.add(
          `jsonb_extract_path(${T.metadata}::jsonb, ${marks(leaf.path.length)}) = ?::jsonb`,
          ...leaf.path,
          leaf.value,
        );
      } else {
        w.add(
          `(${T.metadata} -> ?) = json(?)`,
          `$${leaf.path.map((k) => `."${k}"`).join('')}`,
          leaf.value,
        );
      }
    }
    return w;
  };

  /** The WHERE of a run list's filter; undefined when it can hold nothing (no status asked). */
  const runConditions = (q: RunFilterQuery) => {
    const R = run.c;
    const w = conditions();
    if (q.tenantId !== undefined) w.add(`${R.tenantId} = ?`, q.tenantId);
    if (q.threadId !== undefined) w.add(`${R.threadId} = ?`, q.threadId);
    if (q.statuses !== undefined) {
      if (q.statuses.length === 0) return undefined;
      w.add(`${R.status} IN (${marks(q.statuses.length)})`, ...q.statuses);
    }
    if (q.waitingFor !== undefined) {
      if (q.waitingFor.length === 0) return undefined;
      w.add(`${R.waitingFor} IN (${marks(q.waitingFor.length)})`, ...q.waitingFor);
    }
    const at = (field: 'createdAt' | 'updatedAt', d: Date) => bind(weft, run, field, d);
    if (q.createdAfter !== undefined) w.add(`${R.createdAt} > ?`, at('createdAt', q.createdAfter));
    if (q.createdBefore !== undefined)
      w.add(`${R.createdAt} < ?`, at('createdAt', q.createdBefore));
    if (q.updatedAfter !== undefined) w.add(`${R.updatedAt} > ?`, at('updatedAt', q.updatedAfter));
    if (q.updatedBefore !== undefined)
      w.add(`${R.updatedAt} < ?`, at('updatedAt', q.updatedBefore));
    return w;
  };

  return {
    async listThreads(q) {
      const T = thread.c;
      const w = threadConditions(q);
      const field = q.order?.field ?? 'createdAt';
      const column = T[field];
      const direction = q.order?.descending === true ? 'DESC' : 'ASC';
      if (q.after !== undefined) {
        const at = bind(weft, thread, field, q.after.at);
        const beyond = direction === 'DESC' ? '<' : '>';
        w.add(
          `(${column} ${beyond} ? OR (${column} = ? AND ${T.id} ${beyond} ?))`,
          at,
          at,
          q.after.id,
        );
      }
      return openThreads(
        await selectRows(
          weft,
          thread,
          w.where(),
          [...w.values, q.take],
          ` ORDER BY ${column} ${direction}, ${T.id} ${direction} LIMIT ?`,
        ),
      );
    },

    countThreads: (q) => {
      const w = threadConditions(q);
      return countRows(weft, thread, w.where() === '' ? '1 = 1' : w.where(), w.values);
    },

    async listRuns(q) {
      const R = run.c;
      const w = runConditions(q);
      if (w === undefined) return [];
      const column = R[q.order?.field ?? 'createdAt'];
      const direction = q.order?.descending === true ? 'DESC' : 'ASC';
      if (q.after !== undefined) {
        const at = bind(weft, run, q.order?.field ?? 'createdAt', q.after.at);
        const beyond = direction === 'DESC' ? '<' : '>';
        w.add(
          `(${column} ${beyond} ? OR (${column} = ? AND (${R.threadId} ${beyond} ? OR (${R.threadId} = ? AND ${R.id} ${beyond} ?))))`,
          at,
          at,
          q.after.threadId,
          q.after.threadId,
          q.after.id,
        );
      }
      return openRuns(
        await selectRows(
          weft,
          run,
          w.where(),
          [...w.values, q.take],
          ` ORDER BY ${column} ${direction}, ${R.threadId} ${direction}, ${R.id} ${direction} LIMIT ?`,
        ),
      );
    },

    countRuns: (q) => {
      const w = runConditions(q);
      if (w === undefined) return Promise.resolve(0);
      return countRows(weft, run, w.where() === '' ? '1 = 1' : w.where(), w.values);
    },
  };
}
