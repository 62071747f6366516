/**
 * What a fork reads of its source when it is created: the current-state rows that do not follow
 * from its shared history by index — the approval requests made before the fork point (as they
 * stood there) and the index of each run's last change, where it lies before that point.
 */
import type { FieldCodec } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import { type ApprovalRow, approval, run } from '../tables/index.js';
import { openApproval } from './sealed-rows.js';
import { selectRows } from './select.js';
import { openByThread } from './thread-keys.js';

export interface ForkSourceRows {
  /** Requests made before `upTo`, settled only if settled before it too. */
  approvals: ApprovalRow[];
  /** Per run of the source: the index of the entry that last changed it. */
  runIndexes: Map<string, number>;
}

export async function readForkSourceRows(
  weft: WeftPrisma,
  codec: FieldCodec,
  threadId: string,
  upTo: number,
): Promise<ForkSourceRows> {
  const A = approval.c;
  const requests = await selectRows(weft, approval, `${A.threadId} = ? AND ${A.requestIndex} < ?`, [
    threadId,
    upTo,
  ]);
  const opened = await openByThread(codec, requests, (r) => r.threadId, openApproval);
  const approvals = opened.map((row) => {
    if (row.resolvedIndex === null || row.resolvedIndex < upTo) return row;
    return {
      ...row,
      state: 'pending',
      resolvedAt: null,
      resolvedIndex: null,
      decision: null,
      response: null,
    };
  });
  const runs = await selectRows(weft, run, `${run.c.threadId} = ?`, [threadId], '', [
    'id',
    'logIndex',
  ]);
  return { approvals, runIndexes: new Map(runs.map((r) => [r.id, r.logIndex] as const)) };
}
