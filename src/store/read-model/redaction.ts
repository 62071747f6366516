/**
 * Redacting nodes, the store's side. A node's payload is held in three places — its row
 * (`node.payload`), the text of the entry that created it (spliced back from the row when the
 * entry is packed, otherwise in `log_entry.entry`) and the search index (`node_text`) — and
 * derived into two more: the snapshots of every thread whose history includes the entry, and the
 * stored responses of the commands answered with the node (kept for idempotent retries). A
 * redaction drops the snapshots and rewrites the rest in the transaction that records it (a
 * stored response keeps its request hash, so a retry answers the redacted receipt), with a `nodes_redacted` entry in each live thread whose history
 * holds the nodes (the thread asked, the one whose rows hold them, and the forks sharing them).
 *
 * The entry is stored packed afterwards, its every created payload cut out and read back from the
 * node rows (packed-entry.ts), so two redactions of nodes of one entry never overwrite each
 * other's tombstones: each only rewrites its own nodes' rows and the same skeleton.
 */
import { ok, type Result } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { redactAnswerText } from '../../core/thread/index.js';
import { type FieldCodec, keyringOf } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import { idempotencyRecord, node, thread } from '../tables/index.js';
import { type CreatedPayload, packEntry } from './packed-entry.js';
import type { StoredRedaction } from './redaction-statements.js';
import type { ReadModelChanges } from './rows.js';
import { type IdempotencyRecord, openNode, sealRecord } from './sealed-rows.js';
import { selectRows } from './select.js';
import { openByThread } from './thread-keys.js';
import { keyReused } from './thread-removal.js';
import type { WriteItem, Writer } from './writer.js';

/** Threads whose stored answers one statement reads (under SQLite's bound-variable limit). */
const ANSWER_THREADS_PER_STATEMENT = 400;

/** The rows a redaction rewrites, plain (the store seals them). */
export interface RedactionRows {
  /** Node rows (by their holder's id and sequence) whose payload becomes `payload`. */
  nodes: Array<{ threadId: string; sequence: number; payload: string }>;
  /**
   * Entries rewritten: their redacted canonical text, with the payloads of every node the entry
   * created as the node rows will hold them (for packing).
   */
  entries: Array<{
    threadId: string;
    index: number;
    recordedAt: Date;
    text: string;
    created: CreatedPayload[];
    /** The ids of the redacted nodes it created: stored responses naming them are dropped. */
    nodeIds: string[];
  }>;
  /** Threads whose snapshots after `fromIndex` entries are dropped (they hold the payloads). */
  snapshots: Array<{ threadId: string; fromIndex: number }>;
  /**
   * The threads whose commands may have answered with the nodes (the thread asked, the holder
   * and every thread reading its rows), and the tombstone: their stored answers holding a node
   * are rewritten with it, so that a retry answers the same receipt and never writes again.
   */
  answers: { threadIds: string[]; payload: string };
}

/** A thread reading a holder's rows (RedactionStore.sharersOf). */
export interface Sharer {
  threadId: string;
  live: boolean;
  reach: number;
}

export interface RedactionStore {
  /** The nodes entry `index` of thread `holder`'s own rows created: sequence and plain payload. */
  createdPayloads(holder: string, index: number): Promise<CreatedPayload[]>;
  /**
   * The threads (live or deleted) whose history reads entry `index` of `holder`'s rows, or later
   * ones: its forks made after that entry, their forks, and so on. `reach`: how many of the
   * holder's entries each reads (a thread reads entry i when i < reach).
   */
  sharersOf(holder: string, index: number): Promise<Sharer[]>;
  /**
   * Commits the redaction entries of several threads (one each) and rewrites the redacted rows,
   * in one transaction. CONFLICT when any of the threads moved on meanwhile (nothing written).
   */
  commitRedaction(
    commits: readonly ReadModelChanges[],
    rows: RedactionRows,
    idempotency?: IdempotencyRecord,
  ): Promise<Result<'written' | 'conflict'>>;
}

export function createRedactionStore(deps: {
  weft: WeftPrisma;
  writer: Writer;
  codec: FieldCodec;
  ready: () => Promise<void>;
  /** A commit as the writer takes it (packed, sealed). */
  stored: (changes: ReadModelChanges) => WriteItem;
}): RedactionStore {
  const { weft, writer, codec, ready, stored: storedItem } = deps;
  const N = node.c;
  const T = thread.c;
  return {
    async createdPayloads(holder, index) {
      await ready();
      const rows = await selectRows(
        weft,
        node,
        `${N.threadId} = ? AND ${N.logIndex} = ?`,
        [holder, index],
        ` ORDER BY ${N.sequence}`,
      );
      const opened = await openByThread(codec, rows, (row) => row.threadId, openNode);
      return opened.map((row) => ({ sequence: row.sequence, payload: row.payload }));
    },

    async sharersOf(holder, index) {
      const found: Sharer[] = [];
      let frontier = [{ threadId: holder, reach: Number.POSITIVE_INFINITY }];
      // Each generation of forks reads the holder's rows only up to the least base bound on its
      // way there.
      for (let depth = 0; frontier.length > 0 && depth < 10_000; depth++) {
        const next: Sharer[] = [];
        for (const base of frontier) {
          const rows = await selectRows(
            weft,
            thread,
            `${T.baseThreadId} = ? AND ${T.baseLogLength} > ?`,
            [base.threadId, index],
            ` ORDER BY ${T.id}`,
            ['id', 'deletedAt', 'baseLogLength'],
          );
          for (const row of rows) {
            next.push({
              threadId: row.id,
              live: row.deletedAt === null,
              reach: Math.min(base.reach, row.baseLogLength ?? 0),
            });
          }
        }
        found.push(...next);
        frontier = next;
      }
      return found;
    },

    async commitRedaction(commits, rows, idempotency) {
      await ready();
      // Each row sealed as its holder's rows are: under that thread's data key, if it has one.
      const keys = keyringOf(codec);
      await keys.load([...rows.nodes, ...rows.entries].map((r) => r.threadId));
      const stored: StoredRedaction = {
        nodes: rows.nodes.map((n) => ({
          ...n,
          payload: keys.forThread(n.threadId).sealText(n.payload),
        })),
        entries: rows.entries.map((e) => {
          const sealer = keys.forThread(e.threadId);
          // Packed whatever the size, so that the text is spliced from the rows (see above).
          const packed = packEntry(e.text, e.created, undefined, true);
          return {
            threadId: e.threadId,
            index: e.index,
            recordedAt: e.recordedAt,
            entry: packed === null ? sealer.sealText(e.text) : '',
            packed: packed === null ? null : sealer.sealBytes(packed),
            nodeIds: e.nodeIds,
          };
        }),
        snapshots: rows.snapshots,
        records: await answersHolding(weft, codec, rows),
      };
      const [first, ...others] = commits.map(storedItem);
      if (first === undefined) return ok('written');
      const outcome = await writer.submit({
        ...first,
        record: idempotency === undefined ? undefined : sealRecord(codec, idempotency),
        redaction: { others, rows: stored },
      });
      if (outcome === 'idempotency') return { ok: false, error: keyReused(idempotency?.key) };
      return ok(outcome);
    },
  };
}

/**
 * The stored answers of commands on the threads that read the nodes which hold any of them
 * (the command that appended a node, one that appended identical content and was answered with
 * it, `remember`, and so on), rewritten with the tombstone and sealed. `idempotency_record` has
 * no index on its thread: each statement scans it, which a redaction (rare) can afford.
 */
async function answersHolding(
  weft: WeftPrisma,
  codec: FieldCodec,
  rows: RedactionRows,
): Promise<StoredRedaction['records']> {
  const I = idempotencyRecord.c;
  const ids = new Set(rows.entries.flatMap((e) => e.nodeIds));
  const named = [...ids].map((id) => JSON.stringify(id));
  const payload = JSON.parse(rows.answers.payload) as JsonValue;
  const threadIds = [...new Set(rows.answers.threadIds)];
  const out: StoredRedaction['records'] = [];
  for (let i = 0; i < threadIds.length; i += ANSWER_THREADS_PER_STATEMENT) {
    const chunk = threadIds.slice(i, i + ANSWER_THREADS_PER_STATEMENT);
    const found = await selectRows(
      weft,
      idempotencyRecord,
      `${I.threadId} IN (${chunk.map(() => '?').join(', ')})`,
      chunk,
      ` ORDER BY ${I.scope}, ${I.key}`,
    );
    for (const row of found) {
      const response = codec.openText(row.response);
      if (!named.some((id) => response.includes(id))) continue;
      const redacted = redactAnswerText(response, ids, payload);
      if (redacted.replaced === 0) continue;
      out.push({ scope: row.scope, key: row.key, response: codec.sealText(redacted.text) });
    }
  }
  return out;
}
