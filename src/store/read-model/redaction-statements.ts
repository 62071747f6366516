/**
 * The statements that write a redaction (after its commits', in the writer's transaction): each
 * redacted node's row rewritten and its search text dropped, the entries that created the nodes
 * repacked, the snapshots past them dropped and the stored answers holding them rewritten.
 */
import {
  idempotencyRecord,
  logEntry,
  node,
  nodeText,
  type Provider,
  snapshot,
} from '../tables/index.js';
import type { ScriptRecorder } from './write-script.js';

/** The rows as written: sealed, entries packed. */
export interface StoredRedaction {
  nodes: Array<{ threadId: string; sequence: number; payload: string }>;
  entries: Array<{
    threadId: string;
    index: number;
    recordedAt: Date;
    entry: string;
    packed: Uint8Array | null;
    nodeIds: string[];
  }>;
  snapshots: Array<{ threadId: string; fromIndex: number }>;
  /** Stored responses that held a redacted node, by (scope, stored key), rewritten and sealed. */
  records: Array<{ scope: string; key: string; response: string }>;
}

/** The statements of a redaction, after its commits' (writer.ts). */
export function recordRedaction(script: ScriptRecorder, rows: StoredRedaction): void {
  const p: Provider = script.provider;
  const N = node.c;
  for (const n of rows.nodes) {
    script.add(
      `UPDATE ${node.sql} SET ${N.payload} = ? WHERE ${N.threadId} = ? AND ${N.sequence} = ?`,
      [n.payload, n.threadId, n.sequence],
    );
    script.add(
      `DELETE FROM ${nodeText.sql} WHERE ${nodeText.c.threadId} = ? AND ${nodeText.c.sequence} = ?`,
      [n.threadId, n.sequence],
    );
  }
  const L = logEntry.c;
  for (const e of rows.entries) {
    script.add(
      `UPDATE ${logEntry.sql} SET ${L.entry} = ?, ${L.packed} = ?, ${L.verbatim} = NULL WHERE ${L.threadId} = ? AND ${L.index} = ?`,
      [e.entry, logEntry.encodeField('packed', e.packed, p), e.threadId, e.index],
    );
  }
  const S = snapshot.c;
  for (const s of rows.snapshots) {
    script.add(`DELETE FROM ${snapshot.sql} WHERE ${S.threadId} = ? AND ${S.index} > ?`, [
      s.threadId,
      s.fromIndex,
    ]);
  }
  const I = idempotencyRecord.c;
  for (const { scope, key, response } of rows.records) {
    script.add(
      `UPDATE ${idempotencyRecord.sql} SET ${I.response} = ? WHERE ${I.scope} = ? AND ${I.key} = ?`,
      [response, scope, key],
    );
  }
}
