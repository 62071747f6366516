/**
 * Deleting a thread whose history forks may share (lineage.ts). The thread's row is marked
 * deleted and everything only it holds goes: its runs (their spend and approval requests with
 * them), resource heads, activity, idempotency records, and its entries, nodes (their edges and
 * search text cascade), and snapshots above what its forks still read. A thread with no fork left
 * loses its row, and with it the rest. Then each deleted thread its history came from is trimmed
 * the same way, now that one reader fewer needs it — so the last thread to go takes the shared
 * rows with it. Every bound is computed by the statements themselves, inside the transaction.
 */

import type { WeftPrisma } from '../prisma/index.js';
import {
  type AuditRow,
  activity,
  approval,
  auditEntry,
  idempotencyRecord,
  logEntry,
  node,
  type Provider,
  resourceHead,
  run,
  snapshot,
  thread,
  threadKey,
} from '../tables/index.js';
import type { ReadModelChanges, ThreadRow } from './rows.js';
import { selectRows } from './select.js';
import type { ScriptRecorder } from './write-script.js';

export interface ThreadRemoval {
  threadId: string;
  /** The threads its history comes from, nearest first (lineage.ts, holders after the thread). */
  bases: string[];
  at: Date;
  audit: AuditRow;
  /** Retention: remove only while the thread's expiry is at or before this instant. */
  expiredBy?: Date | undefined;
}

const T = thread.c;

/** The largest bound the forks of a thread still read, 0 without any (`field`: a base column). */
const need = (field: string) =>
  `(SELECT COALESCE(MAX(d.${field}), 0) FROM ${thread.sql} d WHERE d.${T.baseThreadId} = ?)`;

const least = (provider: Provider, a: string, b: string) =>
  provider === 'postgres' ? `LEAST(${a}, ${b})` : `MIN(${a}, ${b})`;

/** Trims deleted thread `id` to what its forks read, and removes its row when none is left. */
export function trim(script: ScriptRecorder, id: string): void {
  const deleted = `EXISTS (SELECT 1 FROM ${thread.sql} h WHERE h.${T.id} = ? AND h.${T.deletedAt} IS NOT NULL)`;
  // What its own history must still cover is what its forks read of it.
  script.add(
    `UPDATE ${thread.sql} SET ${T.baseLogLength} = ${least(script.provider, T.baseLogLength, need(T.baseLogLength))}, ${T.baseNodeCount} = ${least(script.provider, T.baseNodeCount, need(T.baseNodeCount))} WHERE ${T.id} = ? AND ${T.deletedAt} IS NOT NULL AND ${T.baseThreadId} IS NOT NULL`,
    [id, id, id],
  );
  const L = logEntry.c;
  script.add(
    `DELETE FROM ${logEntry.sql} WHERE ${L.threadId} = ? AND ${deleted} AND ${L.index} >= ${need(T.baseLogLength)}`,
    [id, id, id],
  );
  const S = snapshot.c;
  script.add(
    `DELETE FROM ${snapshot.sql} WHERE ${S.threadId} = ? AND ${deleted} AND ${S.index} > ${need(T.baseLogLength)}`,
    [id, id, id],
  );
  const N = node.c;
  script.add(
    `DELETE FROM ${node.sql} WHERE ${N.threadId} = ? AND ${deleted} AND ${N.sequence} > ${need(T.baseNodeCount)}`,
    [id, id, id],
  );
  script.add(
    `DELETE FROM ${thread.sql} WHERE ${T.id} = ? AND ${T.deletedAt} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${thread.sql} d WHERE d.${T.baseThreadId} = ?)`,
    [id, id],
  );
  // Crypto-shredding: the data key goes with the thread's row, i.e. with the last row it seals.
  script.add(
    `DELETE FROM ${threadKey.sql} WHERE ${threadKey.c.threadId} = ? AND NOT EXISTS (SELECT 1 FROM ${thread.sql} h WHERE h.${T.id} = ?)`,
    [id, id],
  );
}

/**
 * The removal's statements. The audit entry goes first, guarded: its id names the thread and its
 * creation, so of two deletions of one thread racing (two processes, two sweeps) exactly one
 * commits and the other finds it `conflict`, having written nothing.
 *
 * A retention removal (`expiredBy`) marks the thread deleted first, only if it is live and its
 * expiry has passed — on Postgres that UPDATE waits for a concurrent setThreadExpiry or deletion
 * of the row and then re-checks its condition — and then makes sure it did: if the thread is not
 * marked deleted now, the audit row just written is inserted a second time, and that unique
 * violation ends the transaction as the same `conflict` as a lost race, with nothing written.
 */
export function recordRemoval(script: ScriptRecorder, removal: ThreadRemoval): void {
  const id = removal.threadId;
  const a: AuditRow = removal.audit;
  const at = thread.encodeField('deletedAt', removal.at, script.provider);
  if (removal.expiredBy !== undefined) {
    script.add(
      `UPDATE ${thread.sql} SET ${T.deletedAt} = ? WHERE ${T.id} = ? AND ${T.deletedAt} IS NULL AND ${T.expiresAt} <= ?`,
      [at, id, thread.encodeField('expiresAt', removal.expiredBy, script.provider)],
    );
  }
  script.guard('conflict', () => {
    script.add(
      `${auditEntry.insertHead} VALUES ${auditEntry.tuple}`,
      auditEntry.encode(a, script.provider),
    );
    if (removal.expiredBy === undefined) return;
    const columns = auditEntry.fields.map((f) => auditEntry.c[f]).join(', ');
    script.add(
      `INSERT INTO ${auditEntry.sql} (${columns}) SELECT ${columns} FROM ${auditEntry.sql} WHERE ${auditEntry.c.id} = ? AND NOT EXISTS (SELECT 1 FROM ${thread.sql} WHERE ${T.id} = ? AND ${T.deletedAt} IS NOT NULL)`,
      [a.id, id],
    );
  });
  if (removal.expiredBy === undefined) {
    script.add(`UPDATE ${thread.sql} SET ${T.deletedAt} = ? WHERE ${T.id} = ?`, [at, id]);
  }
  // A row kept for its forks' history keeps no salt secret: each fork holds its own copy.
  script.add(`UPDATE ${thread.sql} SET ${T.payloadSalt} = NULL WHERE ${T.id} = ?`, [id]);
  for (const table of [approval, run, resourceHead, activity, idempotencyRecord]) {
    script.add(`DELETE FROM ${table.sql} WHERE ${table.c.threadId} = ?`, [id]);
  }
  for (const holder of [id, ...removal.bases]) trim(script, holder);
}

/**
 * The threads a live thread's history comes from, nearest first, by their rows (a fork of a fork
 * names its source even where it reads nothing of it); undefined for an unknown or deleted one.
 */
export async function baseChain(weft: WeftPrisma, threadId: string): Promise<string[] | undefined> {
  const [row] = await selectRows(
    weft,
    thread,
    `${T.id} = ? AND ${T.deletedAt} IS NULL`,
    [threadId],
    '',
    ['baseThreadId'],
  );
  if (row === undefined) return undefined;
  const bases: string[] = [];
  for (let base = row.baseThreadId; base !== null && !bases.includes(base); ) {
    bases.push(base);
    const [next] = await selectRows(weft, thread, `${T.id} = ?`, [base], '', ['baseThreadId']);
    base = next?.baseThreadId ?? null;
  }
  return bases;
}

/** The changes of a write that changes no row of a thread's own (a removal). */
export function emptyChanges(threadId: string): ReadModelChanges {
  return {
    threadId,
    created: false,
    entries: [],
    thread: { id: threadId } as ThreadRow,
    nodes: [],
    nodeParents: [],
    nodeFlags: [],
    resourceHeads: [],
    runs: [],
    runSpend: [],
    approvals: [],
  };
}
