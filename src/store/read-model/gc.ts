/**
 * `weft gc`: what storage no thread needs. deleteThread removes everything only its thread holds
 * in its own transaction (removal.ts), so on a healthy database every figure here is 0; gc is
 * the safety net (a removal interrupted by a crash of an older version, rows written by hand, a
 * connection with foreign keys off) and the report. It finds:
 * - deleted threads no live thread reads any more (no live thread's lineage passes through
 *   them): their rows, and with them their entries, nodes, edges, search text and snapshots;
 * - rows of deleted threads above what their forks read (entries, nodes, snapshots);
 * - current-state rows of deleted threads (runs, resource heads, approvals, activity,
 *   idempotency records), which no reader shows;
 * - orphaned rows, whose thread, node or run row is gone.
 * Idempotency records are kept for ever by design (a retry must find its answer), and audit
 * entries are the audit trail: gc touches neither but the records of threads that are gone.
 * Every figure is computed by SQL over the whole database; `apply` removes them in one
 * transaction with the same conditions, the trims being removal.ts's own statements.
 */
import type { WeftPrisma } from '../prisma/index.js';
import { rawQuery } from '../prisma/raw.js';
import {
  activity,
  approval,
  idempotencyRecord,
  logEntry,
  node,
  nodeParent,
  nodeText,
  postgresText,
  resourceHead,
  run,
  runSpend,
  snapshot,
  thread,
  threadKey,
} from '../tables/index.js';
import { trim } from './removal.js';
import { ScriptRecorder, StatementTexts } from './write-script.js';

const T = thread.c;

/** Deleted threads some live thread's lineage still passes through. */
const NEEDED = `WITH RECURSIVE needed(id) AS (SELECT ${T.baseThreadId} FROM ${thread.sql} WHERE ${T.deletedAt} IS NULL AND ${T.baseThreadId} IS NOT NULL UNION SELECT t.${T.baseThreadId} FROM ${thread.sql} t JOIN needed n ON t.${T.id} = n.id WHERE t.${T.baseThreadId} IS NOT NULL) SELECT id FROM needed`;
const UNNEEDED = `SELECT ${T.id} FROM ${thread.sql} WHERE ${T.deletedAt} IS NOT NULL AND ${T.id} NOT IN (${NEEDED})`;
const DELETED = `SELECT ${T.id} FROM ${thread.sql} WHERE ${T.deletedAt} IS NOT NULL`;
/** Deleted threads some live thread still reads (the others go whole). */
const KEPT = `${DELETED} AND ${T.id} IN (${NEEDED})`;
const need = (field: string, of: string) =>
  `(SELECT COALESCE(MAX(d.${field}), 0) FROM ${thread.sql} d WHERE d.${T.baseThreadId} = ${of})`;

/** One kind of row gc removes: how many, and the statement removing them. */
interface Kind {
  category: GcCategory;
  table: string;
  /** `FROM … WHERE …` of the rows (counted as `SELECT COUNT(*) …`, removed as `DELETE …`). */
  from: string;
  /** The DELETE, when not `DELETE <from>`. */
  remove?: string;
}

export type GcCategory = 'unneeded-threads' | 'beyond-forks' | 'deleted-state' | 'orphans';

export const GC_CATEGORIES: Record<GcCategory, string> = {
  'unneeded-threads': 'deleted threads no live thread reads (with their entries, nodes, snapshots)',
  'beyond-forks': 'rows of deleted threads beyond what their forks read',
  'deleted-state': 'runs, heads, approvals, activity and idempotency records of deleted threads',
  orphans: 'orphaned rows (their thread, node or run is gone)',
};

const inThreads = (table: { sql: string; c: { threadId: string } }, ids: string) =>
  `FROM ${table.sql} WHERE ${table.c.threadId} IN (${ids})`;

const orphanOf = (table: { sql: string; c: { threadId: string } }) =>
  `FROM ${table.sql} WHERE NOT EXISTS (SELECT 1 FROM ${thread.sql} h WHERE h.${T.id} = ${table.sql}.${table.c.threadId})`;

const KINDS: Kind[] = [
  {
    category: 'unneeded-threads',
    table: 'thread',
    from: `FROM ${thread.sql} WHERE ${T.id} IN (${UNNEEDED})`,
  },
  ...[logEntry, node, snapshot].map((table) => ({
    category: 'unneeded-threads' as const,
    table: table.name,
    from: inThreads(table, UNNEEDED),
    // Cascades with the thread row.
    remove: 'SELECT 1',
  })),
  {
    category: 'beyond-forks',
    table: 'log_entry',
    from: `FROM ${logEntry.sql} WHERE ${logEntry.c.threadId} IN (${KEPT}) AND ${logEntry.c.index} >= ${need(T.baseLogLength, `${logEntry.sql}.${logEntry.c.threadId}`)}`,
  },
  {
    category: 'beyond-forks',
    table: 'node',
    from: `FROM ${node.sql} WHERE ${node.c.threadId} IN (${KEPT}) AND ${node.c.sequence} > ${need(T.baseNodeCount, `${node.sql}.${node.c.threadId}`)}`,
  },
  {
    category: 'beyond-forks',
    table: 'snapshot',
    from: `FROM ${snapshot.sql} WHERE ${snapshot.c.threadId} IN (${KEPT}) AND ${snapshot.c.index} > ${need(T.baseLogLength, `${snapshot.sql}.${snapshot.c.threadId}`)}`,
  },
  ...[run, resourceHead, approval, activity, idempotencyRecord].map((table) => ({
    category: 'deleted-state' as const,
    table: table.name,
    from: inThreads(table, DELETED),
  })),
  // A data key outliving its thread's row (thread_key has no foreign key) is shredded here.
  ...[logEntry, node, snapshot, run, resourceHead, approval, activity, threadKey].map((table) => ({
    category: 'orphans' as const,
    table: table.name,
    from: orphanOf(table),
  })),
  {
    category: 'orphans',
    table: 'idempotency_record',
    from: `${orphanOf(idempotencyRecord)} AND ${idempotencyRecord.c.threadId} IS NOT NULL`,
  },
  {
    category: 'orphans',
    table: 'node_parent',
    from: `FROM ${nodeParent.sql} WHERE NOT EXISTS (SELECT 1 FROM ${node.sql} n WHERE n.${node.c.threadId} = ${nodeParent.sql}.${nodeParent.c.threadId} AND n.${node.c.sequence} = ${nodeParent.sql}.${nodeParent.c.childSeq})`,
  },
  {
    category: 'orphans',
    table: 'node_text',
    from: `FROM ${nodeText.sql} WHERE NOT EXISTS (SELECT 1 FROM ${node.sql} n WHERE n.${node.c.threadId} = ${nodeText.sql}.${nodeText.c.threadId} AND n.${node.c.sequence} = ${nodeText.sql}.${nodeText.c.sequence})`,
  },
  {
    category: 'orphans',
    table: 'run_spend',
    from: `FROM ${runSpend.sql} WHERE NOT EXISTS (SELECT 1 FROM ${run.sql} r WHERE r.${run.c.threadId} = ${runSpend.sql}.${runSpend.c.threadId} AND r.${run.c.id} = ${runSpend.sql}.${runSpend.c.runId})`,
  },
];

/** What gc found (or removed): rows per category and table, zero counts left out. */
export type GcReport = Record<GcCategory, Record<string, number>>;

const emptyReport = (): GcReport => ({
  'unneeded-threads': {},
  'beyond-forks': {},
  'deleted-state': {},
  orphans: {},
});

/** Rows in a report. */
export const gcRows = (report: GcReport): number =>
  Object.values(report).reduce(
    (sum, tables) => sum + Object.values(tables).reduce((a, b) => a + b, 0),
    0,
  );

/** What gc would remove now. */
export async function gcReport(weft: WeftPrisma): Promise<GcReport> {
  const report = emptyReport();
  for (const kind of KINDS) {
    const [row] = await rawQuery(weft, `SELECT COUNT(*) AS n ${kind.from}`);
    const n = Number(row?.n ?? 0);
    if (n > 0) report[kind.category][kind.table] = (report[kind.category][kind.table] ?? 0) + n;
  }
  return report;
}

interface Tx {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
  $queryRawUnsafe<R = unknown>(query: string, ...values: unknown[]): Promise<R>;
}

/**
 * Removes what `gcReport` finds, in one transaction; resolves with what was there before. The
 * trims run first, forks before the threads they read (a deleted fork's bound shrinks before its
 * source is trimmed to it), then the rest.
 */
export async function gcApply(weft: WeftPrisma): Promise<GcReport> {
  const before = await gcReport(weft);
  if (gcRows(before) === 0) return before;
  const text = (sql: string) => (weft.provider === 'postgres' ? postgresText(sql) : sql);
  const prisma = weft.prisma as unknown as {
    $transaction<R>(
      work: (tx: Tx) => Promise<R>,
      options?: { timeout?: number; maxWait?: number },
    ): Promise<R>;
  };
  await prisma.$transaction(
    async (tx) => {
      const deleted = (await tx.$queryRawUnsafe(
        text(
          `SELECT ${T.id} AS id, ${T.baseThreadId} AS base FROM ${thread.sql} WHERE ${T.deletedAt} IS NOT NULL`,
        ),
      )) as Array<{ id: string; base: string | null }>;
      const recorder = new ScriptRecorder(new StatementTexts(weft.provider));
      for (const id of readersFirst(deleted)) trim(recorder, id);
      for (const s of recorder.statements) await tx.$executeRawUnsafe(s.text, ...s.values);
      for (const kind of KINDS) {
        if (kind.remove === 'SELECT 1') continue;
        await tx.$executeRawUnsafe(text(kind.remove ?? `DELETE ${kind.from}`));
      }
    },
    { timeout: 600_000, maxWait: 60_000 },
  );
  return before;
}

/** Deleted threads ordered so that each comes after every deleted thread reading from it. */
function readersFirst(deleted: ReadonlyArray<{ id: string; base: string | null }>): string[] {
  const ids = new Set(deleted.map((d) => d.id));
  const readers = new Map<string, string[]>();
  for (const d of deleted) {
    if (d.base === null || !ids.has(d.base)) continue;
    const list = readers.get(d.base) ?? [];
    list.push(d.id);
    readers.set(d.base, list);
  }
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (id: string) => {
    if (seen.has(id)) return;
    seen.add(id);
    for (const reader of readers.get(id) ?? []) visit(reader);
    out.push(id);
  };
  for (const d of deleted) visit(d.id);
  return out;
}
