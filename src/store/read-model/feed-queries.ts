/**
 * The approvals inbox and the tenant activity feed: keyset-paged reads of the `approval` and
 * `activity` tables, each answered by one index range (migration 0009) whatever the history.
 */
import type { FieldCodec } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import {
  type ApprovalRow,
  type AuditRow,
  activity,
  approval,
  auditEntry,
  logEntry,
} from '../tables/index.js';
import { openApproval } from './sealed-rows.js';
import { bind, countRows, selectRows, whereBuilder } from './select.js';
import { openByThread } from './thread-keys.js';

export type ApprovalState = 'pending' | 'resolved' | 'expired';

/** Which approval requests a list holds (and counts). */
export interface ApprovalFilterQuery {
  tenantId: string;
  states?: readonly ApprovalState[] | undefined;
  threadId?: string | undefined;
  requestedAfter?: Date | undefined;
  requestedBefore?: Date | undefined;
}

export interface ApprovalListQuery extends ApprovalFilterQuery {
  take: number;
  /** Newest request first (the default), or oldest first. Ties by thread and run, likewise. */
  descending?: boolean | undefined;
  /** Keyset cursor: the request the page starts after, in the page's direction. */
  after?: { at: Date; threadId: string; runId: string } | undefined;
}

/** Which audit entries a list holds (and counts). */
export interface AuditFilterQuery {
  tenantId: string;
  threadId?: string | undefined;
  action?: string | undefined;
}

export interface AuditListQuery extends AuditFilterQuery {
  take: number;
  /** Newest first (the default), or oldest first; ties by id, likewise. */
  descending?: boolean | undefined;
  /** Keyset cursor: the entry the page starts after, in the page's direction. */
  after?: { at: Date; id: string } | undefined;
}

/** One entry of the activity feed: its number in the tenant's sequence and the entry it names. */
export interface ActivityRow {
  seq: number;
  threadId: string;
  index: number;
  type: string;
  recordedAt: Date;
}

export interface FeedQueries {
  listApprovals(query: ApprovalListQuery): Promise<ApprovalRow[]>;
  countApprovals(query: ApprovalFilterQuery): Promise<number>;
  /** The tenant's activity numbered above `afterSeq`, in order, at most `take`. */
  activity(tenantId: string, afterSeq: number, take: number): Promise<ActivityRow[]>;
  /** A page of the tenant's audit trail. */
  auditEntries(query: AuditListQuery): Promise<AuditRow[]>;
  countAuditEntries(query: AuditFilterQuery): Promise<number>;
  /** The tenant's last activity number (0 before any). */
  lastActivity(tenantId: string): Promise<number>;
}

export function createFeedQueries(weft: WeftPrisma, codec: FieldCodec): FeedQueries {
  const A = approval.c;
  const conditions = (q: ApprovalFilterQuery) => {
    const w = whereBuilder();
    w.add(`${A.tenantId} = ?`, q.tenantId);
    if (q.threadId !== undefined) w.add(`${A.threadId} = ?`, q.threadId);
    if (q.states !== undefined) {
      if (q.states.length === 0) return undefined;
      w.add(`${A.state} IN (${q.states.map(() => '?').join(', ')})`, ...q.states);
    }
    if (q.requestedAfter !== undefined) {
      w.add(`${A.requestedAt} > ?`, bind(weft, approval, 'requestedAt', q.requestedAfter));
    }
    if (q.requestedBefore !== undefined) {
      w.add(`${A.requestedAt} < ?`, bind(weft, approval, 'requestedAt', q.requestedBefore));
    }
    return w;
  };

  const U = auditEntry.c;
  const auditConditions = (q: AuditFilterQuery) => {
    const w = whereBuilder();
    w.add(`${U.tenantId} = ?`, q.tenantId);
    if (q.threadId !== undefined) w.add(`${U.threadId} = ?`, q.threadId);
    if (q.action !== undefined) w.add(`${U.action} = ?`, q.action);
    return w;
  };

  return {
    async listApprovals(q) {
      const w = conditions(q);
      if (w === undefined) return [];
      const direction = q.descending === false ? 'ASC' : 'DESC';
      if (q.after !== undefined) {
        const at = bind(weft, approval, 'requestedAt', q.after.at);
        const beyond = direction === 'DESC' ? '<' : '>';
        w.add(
          `(${A.requestedAt} ${beyond} ? OR (${A.requestedAt} = ? AND (${A.threadId} ${beyond} ? OR (${A.threadId} = ? AND ${A.runId} ${beyond} ?))))`,
          at,
          at,
          q.after.threadId,
          q.after.threadId,
          q.after.runId,
        );
      }
      const rows = await selectRows(
        weft,
        approval,
        w.where(),
        [...w.values, q.take],
        ` ORDER BY ${A.requestedAt} ${direction}, ${A.threadId} ${direction}, ${A.runId} ${direction} LIMIT ?`,
      );
      return openByThread(codec, rows, (r) => r.threadId, openApproval);
    },

    countApprovals(q) {
      const w = conditions(q);
      return w === undefined ? Promise.resolve(0) : countRows(weft, approval, w.where(), w.values);
    },

    auditEntries(q) {
      const w = auditConditions(q);
      const direction = q.descending === false ? 'ASC' : 'DESC';
      if (q.after !== undefined) {
        const at = bind(weft, auditEntry, 'recordedAt', q.after.at);
        const beyond = direction === 'DESC' ? '<' : '>';
        w.add(
          `(${U.recordedAt} ${beyond} ? OR (${U.recordedAt} = ? AND ${U.id} ${beyond} ?))`,
          at,
          at,
          q.after.id,
        );
      }
      return selectRows(
        weft,
        auditEntry,
        w.where(),
        [...w.values, q.take],
        ` ORDER BY ${U.recordedAt} ${direction}, ${U.id} ${direction} LIMIT ?`,
      );
    },

    countAuditEntries(q) {
      const w = auditConditions(q);
      return countRows(weft, auditEntry, w.where(), w.values);
    },

    async activity(tenantId, afterSeq, take) {
      const a = activity.c;
      const e = logEntry.c;
      const rows = await rawQuery(
        weft,
        `SELECT a.${a.seq}, a.${a.threadId}, a.${a.logIndex}, e.${e.type}, e.${e.recordedAt} ` +
          `FROM ${activity.sql} a JOIN ${logEntry.sql} e ` +
          `ON e.${e.threadId} = a.${a.threadId} AND e.${e.index} = a.${a.logIndex} ` +
          `WHERE a.${a.tenantId} = ? AND a.${a.seq} > ? ORDER BY a.${a.seq} LIMIT ?`,
        [tenantId, afterSeq, take],
      );
      return rows.map((raw) => {
        const feed = activity.decode(raw, weft.provider);
        const entry = logEntry.decode(raw, weft.provider);
        return {
          seq: Number(feed.seq),
          threadId: feed.threadId,
          index: Number(feed.logIndex),
          type: entry.type,
          recordedAt: entry.recordedAt,
        };
      });
    },

    async lastActivity(tenantId) {
      const a = activity.c;
      const [row] = await rawQuery(
        weft,
        `SELECT MAX(${a.seq}) AS seq FROM ${activity.sql} WHERE ${a.tenantId} = ?`,
        [tenantId],
      );
      return row?.seq === null || row?.seq === undefined ? 0 : Number(row.seq);
    },
  };
}
