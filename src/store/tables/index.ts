/**
 * Weft's tables, each declared once: every column name the store's SQL uses comes from here
 * (a test scans src/store for column names anywhere else), and the row types follow from the
 * declarations. They mirror prisma/*\/schema.prisma; test/store/tables.test.ts checks them
 * against the migrated SQLite and Postgres databases.
 */
import { defineTable, type RowOf } from './define.js';

export type { Provider, Statement, Table } from './define.js';
export { defineTable, postgresText, type RowOf } from './define.js';

/** The tenant of rows written before tenancy, and of threads created without a caller. */
export const DEFAULT_TENANT = 'default';

const threadColumns = {
  id: { name: 'id', type: 'text' },
  /** Written when the row is created, never changed. */
  tenantId: { name: 'tenant_id', type: 'text', default: DEFAULT_TENANT },
  createdAt: { name: 'created_at', type: 'datetime' },
  updatedAt: { name: 'updated_at', type: 'datetime' },
  metadata: { name: 'metadata', type: 'text' },
  nodeTypes: { name: 'node_types', type: 'text' },
  allowDynamicNodeTypes: { name: 'allow_dynamic_node_types', type: 'boolean' },
  logLength: { name: 'log_length', type: 'integer' },
  stateHash: { name: 'state_hash', type: 'text' },
  frontier: { name: 'frontier', type: 'text' },
  forkedFromId: { name: 'forked_from_id', type: 'text', nullable: true },
  forkedUpToIndex: { name: 'forked_up_to_index', type: 'integer', nullable: true },
  /**
   * Shared history (read-model/lineage.ts): the thread whose rows hold this thread's entries
   * below `baseLogLength` and nodes up to `baseNodeCount`. Written when the row is created.
   */
  baseThreadId: { name: 'base_thread_id', type: 'text', nullable: true },
  baseLogLength: { name: 'base_log_length', type: 'integer', nullable: true },
  baseNodeCount: { name: 'base_node_count', type: 'integer', nullable: true },
  /** Set when the thread is deleted while forks still read its history (read-model/removal.ts). */
  deletedAt: { name: 'deleted_at', type: 'datetime', nullable: true },
  /**
   * Retention (read-model/retention.ts): when the sweeper deletes the thread; null never. Not
   * from the log: written at creation and by setThreadExpiry only.
   */
  expiresAt: { name: 'expires_at', type: 'datetime', nullable: true },
  nodeCount: { name: 'node_count', type: 'integer', default: 0 },
  /** The spend as of `logLength`; null on rows last written before these columns existed. */
  spendInputTokens: { name: 'spend_input_tokens', type: 'integer', nullable: true },
  spendOutputTokens: { name: 'spend_output_tokens', type: 'integer', nullable: true },
  spendCostUsd: { name: 'spend_cost_usd', type: 'real', nullable: true },
  spendCalls: { name: 'spend_calls', type: 'integer', nullable: true },
  /**
   * A salted thread's secret (src/engine/payload-salts.ts), sealed like metadata; null: not
   * salted. Written when the row is created (a fork copies its source's), never changed.
   */
  payloadSalt: { name: 'payload_salt', type: 'text', nullable: true },
} as const;
export const thread = defineTable('thread', threadColumns, ['id']);
export type ThreadRow = RowOf<typeof threadColumns>;

const logEntryColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  index: { name: 'log_index', type: 'integer' },
  entryId: { name: 'entry_id', type: 'text' },
  type: { name: 'type', type: 'text' },
  recordedAt: { name: 'recorded_at', type: 'datetime' },
  /** canonicalJson(entry), or '' when the entry is packed. */
  entry: { name: 'entry', type: 'text' },
  /** The entry without the payloads of the nodes it created (packed-entry.ts). */
  packed: { name: 'packed', type: 'bytes', nullable: true },
  /** The entry's text as appended, kept only where its key order is not canonical. */
  verbatim: { name: 'verbatim', type: 'text', nullable: true },
} as const;
export const logEntry = defineTable('log_entry', logEntryColumns, ['threadId', 'index']);
export type StoredEntryRow = RowOf<typeof logEntryColumns>;

const nodeColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  id: { name: 'id', type: 'text' },
  sequence: { name: 'sequence', type: 'integer' },
  kind: { name: 'kind', type: 'text' },
  payload: { name: 'payload', type: 'text' },
  createdAt: { name: 'created_at', type: 'datetime' },
  resourceKey: { name: 'resource_key', type: 'text', nullable: true },
  logIndex: { name: 'log_index', type: 'integer' },
  runId: { name: 'run_id', type: 'text', nullable: true },
  taint: { name: 'taint', type: 'text', nullable: true },
  usage: { name: 'usage', type: 'text', nullable: true },
  isFrontier: { name: 'is_frontier', type: 'boolean' },
  isCurrent: { name: 'is_current', type: 'boolean' },
} as const;
export const node = defineTable('node', nodeColumns, ['threadId', 'id']);
export type NodeRow = RowOf<typeof nodeColumns>;

/**
 * Search: a node's entry in the search index (its text is its payload's string values, see
 * read-model/search-queries.ts), written with the node while search is on. `id` is given by the
 * database (the FTS5 rowid on SQLite); `body` holds the text only when the node's payload is
 * sealed at rest (otherwise null: the text is read from the payload); `tsv` is
 * to_tsvector('simple', text) on Postgres and stays NULL on SQLite, whose index is the FTS5 table
 * below.
 */
const nodeTextColumns = {
  id: { name: 'id', type: 'integer' },
  threadId: { name: 'thread_id', type: 'text' },
  sequence: { name: 'sequence', type: 'integer' },
  body: { name: 'body', type: 'text', nullable: true },
  tsv: { name: 'tsv', type: 'text', nullable: true },
} as const;
export const nodeText = defineTable('node_text', nodeTextColumns, ['id']);
/**
 * A node_text row as written (the database gives `id`; `tsv` is computed), with the text that is
 * indexed: not a column of its own, it is stored in `body` only when the payload is sealed.
 */
export type NodeTextRow = Omit<RowOf<typeof nodeTextColumns>, 'id' | 'tsv'> & { text: string };

/**
 * SQLite's full-text index of the node texts: a contentless FTS5 table (no copy of the text)
 * written by hand in migration 0020, its rows named by node_text.id and kept by that migration's
 * triggers (a node_text row indexed when written, forgotten when deleted, which deleting a node
 * or changing its payload does first); not part of the Prisma schema, nor are the shadow tables
 * FTS5 keeps it in. The schema checks leave exactly these out.
 */
export const nodeSearch = {
  sql: '"node_search"',
  name: 'node_search',
  shadowTables: ['node_search_data', 'node_search_idx', 'node_search_config'],
  /** Shadow tables of the index migrations 0010–0019 kept (per-row sizes, dropped by 0020). */
  formerShadowTables: ['node_search_docsize'],
} as const;

/** Postgres's GIN index on node_text.tsv, written by hand in migration 0010 (see nodeSearch). */
export const NODE_TEXT_GIN_INDEX = 'node_text_tsv_idx';

/** A parent edge; nodes are named by sequence (`node.sequence`). */
const nodeParentColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  childSeq: { name: 'child_seq', type: 'integer' },
  parentSeq: { name: 'parent_seq', type: 'integer' },
  position: { name: 'position', type: 'integer' },
} as const;
export const nodeParent = defineTable('node_parent', nodeParentColumns, [
  'threadId',
  'childSeq',
  'parentSeq',
]);
export type NodeParentRow = RowOf<typeof nodeParentColumns>;

const resourceHeadColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  resourceKey: { name: 'resource_key', type: 'text' },
  nodeId: { name: 'node_id', type: 'text' },
  semanticType: { name: 'semantic_type', type: 'text', nullable: true },
  semanticKey: { name: 'semantic_key', type: 'text', nullable: true },
} as const;
export const resourceHead = defineTable('resource_head', resourceHeadColumns, [
  'threadId',
  'resourceKey',
]);
export type ResourceHeadRow = RowOf<typeof resourceHeadColumns>;

const runColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  id: { name: 'id', type: 'text' },
  /** The tenant of the run's thread, read from its row (written first in the transaction). */
  tenantId: {
    name: 'tenant_id',
    type: 'text',
    computed: { sql: '(SELECT "tenant_id" FROM "thread" WHERE "id" = ?)', from: 'threadId' },
  },
  status: { name: 'status', type: 'text' },
  goal: { name: 'goal', type: 'text' },
  createdAt: { name: 'created_at', type: 'datetime' },
  updatedAt: { name: 'updated_at', type: 'datetime' },
  startedAt: { name: 'started_at', type: 'datetime', nullable: true },
  waitingTimeoutAt: { name: 'waiting_timeout_at', type: 'datetime', nullable: true },
  executionDeadlineAt: { name: 'execution_deadline_at', type: 'datetime', nullable: true },
  state: { name: 'state', type: 'text' },
  totalInputTokens: { name: 'total_input_tokens', type: 'integer' },
  totalOutputTokens: { name: 'total_output_tokens', type: 'integer' },
  totalCostUsd: { name: 'total_cost_usd', type: 'real' },
  logIndex: { name: 'log_index', type: 'integer' },
  /** What a waiting run waits for; null unless its status is `waiting`. */
  waitingFor: { name: 'waiting_for', type: 'text', nullable: true },
} as const;
export const run = defineTable('run', runColumns, ['threadId', 'id']);
export type RunRow = RowOf<typeof runColumns>;

const runSpendColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  runId: { name: 'run_id', type: 'text' },
  /** `model` or `node`. */
  dimension: { name: 'dimension', type: 'text' },
  key: { name: 'key', type: 'text' },
  inputTokens: { name: 'input_tokens', type: 'integer' },
  outputTokens: { name: 'output_tokens', type: 'integer' },
  costUsd: { name: 'cost_usd', type: 'real' },
  calls: { name: 'calls', type: 'integer' },
} as const;
export const runSpend = defineTable('run_spend', runSpendColumns, [
  'threadId',
  'runId',
  'dimension',
  'key',
]);
export type RunSpendRow = RowOf<typeof runSpendColumns>;

/** A run's request for human input, from the entry that asked to the one that settled it. */
const approvalColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  runId: { name: 'run_id', type: 'text' },
  requestedAt: { name: 'requested_at', type: 'datetime' },
  tenantId: {
    name: 'tenant_id',
    type: 'text',
    computed: { sql: '(SELECT "tenant_id" FROM "thread" WHERE "id" = ?)', from: 'threadId' },
  },
  /** `pending`, `resolved` or `expired`. */
  state: { name: 'state', type: 'text' },
  waitingFor: { name: 'waiting_for', type: 'text' },
  /** Canonical JSON shown to the approver (sealed at rest). */
  prompt: { name: 'prompt', type: 'text', nullable: true },
  expiresAt: { name: 'expires_at', type: 'datetime', nullable: true },
  requestIndex: { name: 'request_index', type: 'integer' },
  resolvedAt: { name: 'resolved_at', type: 'datetime', nullable: true },
  resolvedIndex: { name: 'resolved_index', type: 'integer', nullable: true },
  /** The decision given on resume (sealed at rest). */
  decision: { name: 'decision', type: 'text', nullable: true },
  /** Canonical JSON response given with the decision (sealed at rest). */
  response: { name: 'response', type: 'text', nullable: true },
} as const;
export const approval = defineTable('approval', approvalColumns, [
  'threadId',
  'runId',
  'requestedAt',
]);
export type ApprovalRow = RowOf<typeof approvalColumns>;

/** The tenant's activity feed: one row per committed entry, numbered per tenant. */
const activityColumns = {
  tenantId: { name: 'tenant_id', type: 'text' },
  seq: { name: 'seq', type: 'integer' },
  threadId: { name: 'thread_id', type: 'text' },
  logIndex: { name: 'log_index', type: 'integer' },
} as const;
export const activity = defineTable('activity', activityColumns, ['tenantId', 'seq']);
export type ActivityRow = RowOf<typeof activityColumns>;

/** The last activity number given out per tenant. */
const activityCounterColumns = {
  tenantId: { name: 'tenant_id', type: 'text' },
  seq: { name: 'seq', type: 'integer' },
} as const;
export const activityCounter = defineTable('activity_counter', activityCounterColumns, [
  'tenantId',
]);

/** A snapshot of the thread state after entries [0, index) (src/core/thread/snapshot.ts). */
const snapshotColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  index: { name: 'log_index', type: 'integer' },
  /** verification.stateHash of entry index - 1. */
  stateHash: { name: 'state_hash', type: 'text' },
  /** SHA-256 (hex) of `state`. */
  checksum: { name: 'checksum', type: 'text' },
  state: { name: 'state', type: 'text' },
  createdAt: { name: 'created_at', type: 'datetime' },
} as const;
export const snapshot = defineTable('snapshot', snapshotColumns, ['threadId', 'index']);
export type SnapshotRow = RowOf<typeof snapshotColumns>;

const idempotencyColumns = {
  scope: { name: 'scope', type: 'text' },
  key: { name: 'key', type: 'text' },
  requestHash: { name: 'request_hash', type: 'text' },
  response: { name: 'response', type: 'text' },
  threadId: { name: 'thread_id', type: 'text', nullable: true },
  createdAt: { name: 'created_at', type: 'datetime' },
} as const;
export const idempotencyRecord = defineTable('idempotency_record', idempotencyColumns, [
  'scope',
  'key',
]);
export type IdempotencyRow = RowOf<typeof idempotencyColumns>;

const apiKeyColumns = {
  id: { name: 'id', type: 'text' },
  tenantId: { name: 'tenant_id', type: 'text' },
  scopes: { name: 'scopes', type: 'text' },
  keyHash: { name: 'key_hash', type: 'text' },
  name: { name: 'name', type: 'text', nullable: true },
  createdAt: { name: 'created_at', type: 'datetime' },
  revokedAt: { name: 'revoked_at', type: 'datetime', nullable: true },
} as const;
export const apiKey = defineTable('api_key', apiKeyColumns, ['id']);
export type ApiKeyRow = RowOf<typeof apiKeyColumns>;

const settingColumns = {
  key: { name: 'key', type: 'text' },
  value: { name: 'value', type: 'text' },
} as const;
export const setting = defineTable('weft_setting', settingColumns, ['key']);
export type SettingRow = RowOf<typeof settingColumns>;

/**
 * The migration runner's ledger (src/store/migrate): which migrations ran. Not in the Prisma
 * schema — the runner creates it before the first migration.
 */
const migrationColumns = {
  name: { name: 'name', type: 'text' },
  /** SHA-256 of the migration's SQL. */
  checksum: { name: 'checksum', type: 'text' },
  appliedAt: { name: 'applied_at', type: 'datetime' },
} as const;
export const migrationLedger = defineTable('_weft_migrations', migrationColumns, ['name']);

/** The tenant's audit trail (deleteThread). */
const auditColumns = {
  id: { name: 'id', type: 'text' },
  tenantId: { name: 'tenant_id', type: 'text' },
  recordedAt: { name: 'recorded_at', type: 'datetime' },
  actor: { name: 'actor', type: 'text' },
  action: { name: 'action', type: 'text' },
  threadId: { name: 'thread_id', type: 'text' },
  logLength: { name: 'log_length', type: 'integer' },
  stateHash: { name: 'state_hash', type: 'text' },
} as const;
export const auditEntry = defineTable('audit_entry', auditColumns, ['id']);
export type AuditRow = RowOf<typeof auditColumns>;

/**
 * A thread's data key (src/store/crypto/thread-keys.ts), wrapped under the encryption key; keyed
 * by the storage key of the thread whose rows it seals. Removed with the last of those rows.
 */
const threadKeyColumns = {
  threadId: { name: 'thread_id', type: 'text' },
  /** `wkey1:` + base64(iv ‖ tag ‖ sealed data key). */
  wrapped: { name: 'wrapped', type: 'text' },
  createdAt: { name: 'created_at', type: 'datetime' },
} as const;
export const threadKey = defineTable('thread_key', threadKeyColumns, ['threadId']);
export type ThreadKeyRow = RowOf<typeof threadKeyColumns>;

/** Every table of the Prisma schema, by SQL name. */
export const TABLES = {
  thread,
  log_entry: logEntry,
  node,
  node_parent: nodeParent,
  node_text: nodeText,
  resource_head: resourceHead,
  run,
  run_spend: runSpend,
  approval,
  activity,
  activity_counter: activityCounter,
  idempotency_record: idempotencyRecord,
  snapshot,
  api_key: apiKey,
  weft_setting: setting,
  audit_entry: auditEntry,
  thread_key: threadKey,
} as const;
