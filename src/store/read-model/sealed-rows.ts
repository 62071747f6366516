/**
 * Which read-model columns hold client-supplied values and how each is sealed at rest (see
 * src/store/crypto): the one place that maps rows to their stored form and back, used by every
 * writer (thread-store.ts) and reader (queries.ts, the store's dump) of these tables.
 *
 * - random-IV seal (`sealText`): thread metadata, node types and payload salt secret, node payload, taint and usage,
 *   run goal and state, approval prompt, decision and response, snapshot state, the idempotency response and request hash;
 * - deterministic seal (`sealEqual`), for columns looked up by equality or part of a key:
 *   resource keys (node, resource_head), memory types and keys (resource_head), run_spend keys
 *   (model and workflow node names);
 * - keyed hash (`digest`): idempotency keys, never read back.
 *
 * A thread's rows are sealed with its own codec (src/store/crypto/thread-keys.ts: under its data
 * key, so deleting the key shreds them); the idempotency record with the key's codec.
 *
 * Ids, tenants, enum values (kind, status, dimension, entry type), counters, flags, timestamps,
 * hashes and the frontier (node ids) are stored as they are.
 *
 * Every function returns its argument untouched when the codec has no key.
 */
import { type FieldCodec, isSealedEqual } from '../crypto/index.js';
import { idempotencyRecord, node, resourceHead, runSpend, type Table } from '../tables/index.js';
import type {
  ApprovalRow,
  NodeRow,
  ReadModelChanges,
  ResourceHeadRow,
  RunRow,
  RunSpendRow,
  SnapshotRow,
  ThreadRow,
} from './rows.js';

/** `table.column`: the label a sealed column's values are bound to. */
// biome-ignore lint/suspicious/noExplicitAny: any table's declaration
const label = <T extends Table<any, any>>(table: T, field: keyof T['columns'] & string) =>
  `${table.name}.${table.columns[field]!.name}`;

/**
 * The labels of deterministically sealed and hashed columns (part of each stored value, so they
 * never change: `node.resource_key`, …).
 */
export const LABEL = {
  nodeResourceKey: label(node, 'resourceKey'),
  headResourceKey: label(resourceHead, 'resourceKey'),
  semanticType: label(resourceHead, 'semanticType'),
  semanticKey: label(resourceHead, 'semanticKey'),
  spendKey: label(runSpend, 'key'),
  idempotencyKey: label(idempotencyRecord, 'key'),
};

/** An idempotency record as the thread store takes and returns it. */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  requestHash: string;
  /** Canonical JSON of the original response. */
  response: string;
  threadId: string | null;
  createdAt: Date;
}

const sealNullable = (codec: FieldCodec, text: string | null): string | null =>
  text === null ? null : codec.sealText(text);

const sealEqualNullable = (codec: FieldCodec, label: string, text: string | null) =>
  text === null ? null : codec.sealEqual(label, text);

const openEqualNullable = (codec: FieldCodec, label: string, stored: string | null) =>
  stored === null ? null : codec.openEqual(label, stored);

export function sealThread(codec: FieldCodec, row: ThreadRow): ThreadRow {
  return {
    ...row,
    metadata: codec.sealText(row.metadata),
    nodeTypes: codec.sealText(row.nodeTypes),
    payloadSalt: sealNullable(codec, row.payloadSalt),
  };
}

export function openThread<T extends ThreadRow>(codec: FieldCodec, row: T): T {
  if (!codec.encrypted) return row;
  return {
    ...row,
    metadata: codec.openText(row.metadata),
    nodeTypes: codec.openText(row.nodeTypes),
    payloadSalt: row.payloadSalt == null ? row.payloadSalt : codec.openText(row.payloadSalt),
  };
}

export function sealNode(codec: FieldCodec, row: NodeRow): NodeRow {
  return {
    ...row,
    payload: codec.sealText(row.payload),
    resourceKey: sealEqualNullable(codec, LABEL.nodeResourceKey, row.resourceKey),
    taint: sealNullable(codec, row.taint),
    usage: sealNullable(codec, row.usage),
  };
}

/**
 * A node row as readers get it. The payload is opened with or without a key (a sealed payload
 * read without one is ENCRYPTION_KEY_MISSING); the other columns only with one.
 */
export function openNode<T extends NodeRow>(codec: FieldCodec, row: T): T {
  if (!codec.encrypted) return { ...row, payload: codec.openText(row.payload) };
  return {
    ...row,
    payload: codec.openText(row.payload),
    resourceKey: openEqualNullable(codec, LABEL.nodeResourceKey, row.resourceKey),
    taint: codec.openNullable(row.taint),
    usage: codec.openNullable(row.usage),
  };
}

export function sealHead(codec: FieldCodec, row: ResourceHeadRow): ResourceHeadRow {
  return {
    ...row,
    resourceKey: codec.sealEqual(LABEL.headResourceKey, row.resourceKey),
    semanticType: sealEqualNullable(codec, LABEL.semanticType, row.semanticType),
    semanticKey: sealEqualNullable(codec, LABEL.semanticKey, row.semanticKey),
  };
}

export function openHead<T extends ResourceHeadRow>(codec: FieldCodec, row: T): T {
  if (!codec.encrypted) return row;
  return {
    ...row,
    resourceKey: codec.openEqual(LABEL.headResourceKey, row.resourceKey),
    semanticType: openEqualNullable(codec, LABEL.semanticType, row.semanticType),
    semanticKey: openEqualNullable(codec, LABEL.semanticKey, row.semanticKey),
  };
}

export function openSpend<T extends Pick<RunSpendRow, 'key'>>(codec: FieldCodec, row: T): T {
  if (!codec.encrypted) return row;
  return { ...row, key: codec.openEqual(LABEL.spendKey, row.key) };
}

export function sealApproval(codec: FieldCodec, row: ApprovalRow): ApprovalRow {
  return {
    ...row,
    prompt: sealNullable(codec, row.prompt),
    decision: sealNullable(codec, row.decision),
    response: sealNullable(codec, row.response),
  };
}

export function openApproval<T extends ApprovalRow>(codec: FieldCodec, row: T): T {
  if (!codec.encrypted) return row;
  return {
    ...row,
    prompt: codec.openNullable(row.prompt),
    decision: codec.openNullable(row.decision),
    response: codec.openNullable(row.response),
  };
}

export function openRun<T extends Pick<RunRow, 'goal' | 'state'>>(codec: FieldCodec, row: T): T {
  return { ...row, goal: codec.openText(row.goal), state: codec.openText(row.state) };
}

export function openSnapshot(codec: FieldCodec, row: SnapshotRow): SnapshotRow {
  return { ...row, state: codec.openText(row.state) };
}

/**
 * Rows of a keyed database that may still hold a key in plain text (written before the column
 * was sealed): the upsert of a head or spend row under its sealed key must remove them, or the
 * old row would stay beside the new one (their primary keys differ).
 */
export interface PlainTwins {
  heads: Array<readonly [threadId: string, resourceKey: string]>;
  spend: Array<
    readonly [threadId: string, runId: string, dimension: RunSpendRow['dimension'], key: string]
  >;
}

/** The changes with every client-supplied column sealed, and the plain twins to delete. */
export function sealChanges(
  codec: FieldCodec,
  changes: ReadModelChanges,
): { changes: ReadModelChanges; twins: PlainTwins } {
  const sealed: ReadModelChanges = {
    ...changes,
    thread: sealThread(codec, changes.thread),
    nodes: changes.nodes.map((n) => sealNode(codec, n)),
    resourceHeads: changes.resourceHeads.map((h) => sealHead(codec, h)),
    runs: changes.runs.map((r) => ({
      ...r,
      goal: codec.sealText(r.goal),
      state: codec.sealText(r.state),
    })),
    runSpend: changes.runSpend.map((s) => ({
      ...s,
      key: codec.sealEqual(LABEL.spendKey, s.key),
    })),
    approvals: changes.approvals.map((a) => sealApproval(codec, a)),
  };
  if (changes.snapshots !== undefined) {
    sealed.snapshots = changes.snapshots.map((s) => ({ ...s, state: codec.sealText(s.state) }));
  }
  // A key that itself looks sealed was never stored plain (equalForms does not look for it).
  return {
    changes: sealed,
    twins: {
      heads: changes.resourceHeads
        .filter((h) => !isSealedEqual(h.resourceKey))
        .map((h) => [h.threadId, h.resourceKey] as const),
      spend: changes.runSpend
        .filter((s) => !isSealedEqual(s.key))
        .map((s) => [s.threadId, s.runId, s.dimension, s.key] as const),
    },
  };
}

/** The record as stored: the key hashed, the request hash and response sealed. */
export function sealRecord(codec: FieldCodec, record: IdempotencyRecord): IdempotencyRecord {
  return {
    ...record,
    key: codec.digest(LABEL.idempotencyKey, record.key),
    requestHash: codec.sealText(record.requestHash),
    response: codec.sealText(record.response),
  };
}

/** A stored record as the engine reads it, under the `key` it was looked up by. */
export function openRecord(
  codec: FieldCodec,
  key: string,
  row: IdempotencyRecord,
): IdempotencyRecord {
  if (!codec.encrypted) return { ...row, response: codec.openText(row.response) };
  return {
    ...row,
    key,
    requestHash: codec.openText(row.requestHash),
    response: codec.openText(row.response),
  };
}
