/**
 * The write statements of the thread store, built from the table declarations (src/store/tables):
 * multi-row `INSERT … VALUES (…), (…)` and `INSERT … ON CONFLICT (…) DO UPDATE SET … =
 * excluded.…`, which SQLite and Postgres share. Each builder appends to a ScriptRecorder
 * (write-script.ts); the values are encoded for the recorder's provider by the table.
 */
import {
  type ApprovalRow,
  activity,
  activityCounter,
  approval,
  type IdempotencyRow,
  idempotencyRecord,
  logEntry,
  type NodeParentRow,
  type NodeRow,
  type NodeTextRow,
  node,
  nodeParent,
  nodeText,
  type ResourceHeadRow,
  type RunRow,
  type RunSpendRow,
  resourceHead,
  run,
  runSpend,
  type SnapshotRow,
  type StoredEntryRow,
  snapshot,
  type Table,
  type ThreadRow,
  thread,
} from '../tables/index.js';
import type { ScriptRecorder } from './write-script.js';

/**
 * Bound parameters per statement, kept under SQLite's 32,766 (Postgres allows 65,535); the widest
 * row (run) has 15 columns.
 */
const PARAMETERS_PER_STATEMENT = 30_000;

// biome-ignore lint/suspicious/noExplicitAny: any table's declaration
type AnyTable<Row> = Table<Row, any>;

/** Appends `rows` to `table` (an upsert with `tail`), in statements of at most the bound above. */
function insertRows<Row>(
  script: ScriptRecorder,
  table: AnyTable<Row>,
  rows: readonly Row[],
  tail = '',
): void {
  const columns = table.fields.length;
  const chunk = Math.max(1, Math.floor(PARAMETERS_PER_STATEMENT / columns));
  const encode = table.encoder(script.provider);
  for (let i = 0; i < rows.length; i += chunk) {
    const end = Math.min(rows.length, i + chunk);
    const values: unknown[] = [];
    for (let r = i; r < end; r++) {
      const encoded = encode(rows[r]!);
      for (let c = 0; c < encoded.length; c++) values.push(encoded[c]);
    }
    script.add(script.texts.multiRow(table.insertHead, table.tuple, end - i, tail), values);
  }
}

/**
 * Statements of tuples of key values, for `WHERE (…) IN (VALUES …)`: `head` is the statement up
 * to `VALUES`, `prefix` values come before the tuples' (a SET value).
 */
function byKeys(
  script: ScriptRecorder,
  head: string,
  prefix: readonly unknown[],
  keys: ReadonlyArray<readonly unknown[]>,
  tail = ')',
): void {
  if (keys.length === 0) return;
  const width = keys[0]!.length;
  const tuple = `(${Array.from({ length: width }, () => '?').join(', ')})`;
  const chunk = Math.floor((PARAMETERS_PER_STATEMENT - prefix.length) / width);
  for (let i = 0; i < keys.length; i += chunk) {
    const part = keys.slice(i, i + chunk);
    script.add(`${head} ${part.map(() => tuple).join(', ')}${tail}`, [...prefix, ...part.flat()]);
  }
}

export const insertThreads = (script: ScriptRecorder, rows: readonly ThreadRow[]) =>
  insertRows(script, thread, rows);

/** What an existing thread's row may change: everything but its id, tenant and creation time. */
const THREAD_UPSERT_TAIL = thread.upsertTail([
  'updatedAt',
  'metadata',
  'nodeTypes',
  'allowDynamicNodeTypes',
  'logLength',
  'stateHash',
  'frontier',
  'forkedFromId',
  'forkedUpToIndex',
  'nodeCount',
  'spendInputTokens',
  'spendOutputTokens',
  'spendCostUsd',
  'spendCalls',
]);

/** Creates the thread rows that do not exist yet; existing ones are left as they are. */
export const ensureThreads = (script: ScriptRecorder, rows: readonly ThreadRow[]) =>
  insertRows(script, thread, rows, ` ON CONFLICT (${thread.c.id}) DO NOTHING`);

/**
 * Sets the log length (and update time) of one thread, leaving the rest of its row but the
 * spend: entries appended without projection may have charged usage, so the stored spend is
 * marked unknown (null) and read from the folded state until a projected commit sets it again.
 */
export const setLogLength = (script: ScriptRecorder, row: ThreadRow) => {
  const c = thread.c;
  script.add(
    `UPDATE ${thread.sql} SET ${c.logLength} = ?, ${c.updatedAt} = ?, ${c.spendInputTokens} = NULL, ${c.spendOutputTokens} = NULL, ${c.spendCostUsd} = NULL, ${c.spendCalls} = NULL WHERE ${c.id} = ?`,
    [row.logLength, thread.encodeField('updatedAt', row.updatedAt, script.provider), row.id],
  );
};

/** Brings existing thread rows up to date (an upsert; the ids must be distinct). */
export const updateThreads = (script: ScriptRecorder, rows: readonly ThreadRow[]) =>
  insertRows(script, thread, rows, THREAD_UPSERT_TAIL);

export const insertEntries = (script: ScriptRecorder, rows: readonly StoredEntryRow[]) =>
  insertRows(script, logEntry, rows);

export const insertNodes = (script: ScriptRecorder, rows: readonly NodeRow[]) =>
  insertRows(script, node, rows);

/**
 * Node texts for search (search-queries.ts): each node's row, its text in `body` only when the
 * payload is sealed. On SQLite the triggers of migration 0020 index the text (the body, or the
 * one derived from the payload in SQL) in the contentless FTS5 table. On Postgres each row's
 * `tsv` is computed by the database from the text, in the same statement.
 */
export function insertNodeTexts(script: ScriptRecorder, rows: readonly NodeTextRow[]): void {
  if (rows.length === 0) return;
  const T = nodeText.c;
  const columns = `${T.threadId}, ${T.sequence}, ${T.body}`;
  const postgres = script.provider === 'postgres';
  const [head, tuple, tail] = postgres
    ? [
        `INSERT INTO ${nodeText.sql} (${columns}, ${T.tsv}) SELECT v.t, v.s, v.b, to_tsvector('simple', v.x) FROM (`,
        '(CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS TEXT))',
        ') AS v(t, s, b, x)',
      ]
    : [`INSERT INTO ${nodeText.sql} (${columns})`, '(?, ?, ?)', ''];
  const width = postgres ? 4 : 3;
  const chunk = Math.floor(PARAMETERS_PER_STATEMENT / width);
  for (let i = 0; i < rows.length; i += chunk) {
    const part = rows.slice(i, i + chunk);
    const values: unknown[] = [];
    for (const r of part) {
      values.push(r.threadId, r.sequence, r.body);
      if (postgres) values.push(r.text);
    }
    script.add(script.texts.multiRow(head, tuple, part.length, tail), values);
  }
}

export const insertNodeParents = (script: ScriptRecorder, rows: readonly NodeParentRow[]) =>
  insertRows(script, nodeParent, rows);

/** Snapshots are caches: a row at the same index is replaced. */
export const upsertSnapshots = (script: ScriptRecorder, rows: readonly SnapshotRow[]) =>
  insertRows(
    script,
    snapshot,
    rows,
    snapshot.upsertTail(['stateHash', 'checksum', 'state', 'createdAt']),
  );

export const upsertResourceHeads = (script: ScriptRecorder, rows: readonly ResourceHeadRow[]) =>
  insertRows(
    script,
    resourceHead,
    rows,
    resourceHead.upsertTail(['nodeId', 'semanticType', 'semanticKey']),
  );

const RUN_UPSERT_TAIL = run.upsertTail(run.fields.filter((f) => f !== 'threadId' && f !== 'id'));

export const upsertRuns = (script: ScriptRecorder, rows: readonly RunRow[]) =>
  insertRows(script, run, rows, RUN_UPSERT_TAIL);

export const upsertRunSpend = (script: ScriptRecorder, rows: readonly RunSpendRow[]) =>
  insertRows(
    script,
    runSpend,
    rows,
    runSpend.upsertTail(['inputTokens', 'outputTokens', 'costUsd', 'calls']),
  );

/** A settled request keeps the index of the entry that made it (projection cannot know it). */
export const upsertApprovals = (script: ScriptRecorder, rows: readonly ApprovalRow[]) =>
  insertRows(
    script,
    approval,
    rows,
    approval.upsertTail([
      'state',
      'waitingFor',
      'prompt',
      'expiresAt',
      'resolvedAt',
      'resolvedIndex',
      'decision',
      'response',
    ]),
  );

const tenantOfThread = `(SELECT ${thread.c.tenantId} FROM ${thread.sql} WHERE ${thread.c.id} = ?)`;

/**
 * Numbers `logIndexes` (new entries of one thread, in order) in its tenant's activity feed: the
 * tenant's counter is raised by their count, then each gets its number counted back from the
 * new value. The counter's row stays locked until the transaction ends, so on Postgres writers
 * of one tenant take their numbers in commit order and a reader never sees a number before a
 * smaller one; statements of this kind go last in a transaction so that no other lock is
 * awaited while it is held.
 */
export function appendActivity(
  script: ScriptRecorder,
  threadId: string,
  logIndexes: readonly number[],
): void {
  if (logIndexes.length === 0) return;
  const c = activityCounter.c;
  script.add(
    `INSERT INTO ${activityCounter.sql} (${c.tenantId}, ${c.seq}) VALUES (${tenantOfThread}, ?) ` +
      `ON CONFLICT (${c.tenantId}) DO UPDATE SET ${c.seq} = ${activityCounter.sql}.${c.seq} + excluded.${c.seq}`,
    [threadId, logIndexes.length],
  );
  const a = activity.c;
  const chunk = Math.floor((PARAMETERS_PER_STATEMENT - 2) / 2);
  for (let i = 0; i < logIndexes.length; i += chunk) {
    const part = logIndexes.slice(i, i + chunk);
    const values: unknown[] = [];
    for (let j = 0; j < part.length; j++) values.push(part[j], logIndexes.length - 1 - (i + j));
    script.add(
      `WITH v(at, back) AS (VALUES ${part.map(() => '(CAST(? AS INTEGER), CAST(? AS INTEGER))').join(', ')}) ` +
        `INSERT INTO ${activity.sql} (${a.tenantId}, ${a.seq}, ${a.threadId}, ${a.logIndex}) ` +
        `SELECT k.${c.tenantId}, k.${c.seq} - v.back, ?, v.at FROM v, ${activityCounter.sql} k ` +
        `WHERE k.${c.tenantId} = ${tenantOfThread}`,
      [...values, threadId, threadId],
    );
  }
}

export const insertIdempotencyRecords = (script: ScriptRecorder, rows: readonly IdempotencyRow[]) =>
  insertRows(script, idempotencyRecord, rows);

/** Sets one flag of nodes of any threads, given as (threadId, nodeId) pairs. */
export function setNodeFlag(
  script: ScriptRecorder,
  field: 'isFrontier' | 'isCurrent',
  value: boolean,
  pairs: ReadonlyArray<readonly [string, string]>,
): void {
  byKeys(
    script,
    `UPDATE ${node.sql} SET ${node.c[field]} = ? WHERE (${node.c.threadId}, ${node.c.id}) IN (VALUES`,
    [node.encodeField(field, value, script.provider)],
    pairs,
  );
}

/** Deletes resource heads by (thread, stored key). */
export const deleteHeads = (
  script: ScriptRecorder,
  keys: ReadonlyArray<readonly [string, string]>,
) =>
  byKeys(
    script,
    `DELETE FROM ${resourceHead.sql} WHERE (${resourceHead.c.threadId}, ${resourceHead.c.resourceKey}) IN (VALUES`,
    [],
    keys,
  );

/** Deletes run_spend rows by their whole primary key. */
export const deleteSpend = (
  script: ScriptRecorder,
  keys: ReadonlyArray<readonly [string, string, string, string]>,
) =>
  byKeys(
    script,
    `DELETE FROM ${runSpend.sql} WHERE (${runSpend.key.map((f) => runSpend.c[f]).join(', ')}) IN (VALUES`,
    [],
    keys,
  );
