import type {
  ApprovalRow,
  NodeFlagChange,
  NodeRow,
  ReadModelChanges,
  ResourceHeadRow,
  RunRow,
  RunSpendRow,
} from './rows.js';

/**
 * Folds the changes of consecutive entries of one thread into one set of writes, as if they
 * were one entry: later rows win, and flag changes of nodes created within the batch land on
 * their rows. Linear in the total size of the changes. Used to write a fork's copied prefix, or
 * a rebuild, in one transaction with one multi-row insert per table.
 */
export function mergeChanges(all: readonly ReadModelChanges[]): ReadModelChanges {
  const first = all[0];
  const last = all[all.length - 1];
  if (first === undefined || last === undefined) throw new Error('mergeChanges: nothing to merge');
  const nodes: NodeRow[] = [];
  const position = new Map<string, number>();
  const flags = new Map<string, NodeFlagChange>();
  const heads = new Map<string, ResourceHeadRow>();
  const runs = new Map<string, RunRow>();
  const spend = new Map<string, RunSpendRow>();
  const merged: ReadModelChanges = {
    threadId: first.threadId,
    created: false,
    entries: [],
    thread: last.thread,
    nodes,
    nodeParents: [],
    nodeFlags: [],
    resourceHeads: [],
    runs: [],
    runSpend: [],
    approvals: [],
  };
  const approvals = new Map<string, ApprovalRow>();
  for (const changes of all) {
    if (changes.threadId !== merged.threadId) {
      throw new Error(`mergeChanges: threads differ (${merged.threadId}, ${changes.threadId})`);
    }
    merged.created ||= changes.created;
    merged.entries.push(...changes.entries);
    merged.nodeParents.push(...changes.nodeParents);
    if (changes.snapshots !== undefined && changes.snapshots.length > 0) {
      merged.snapshots = [...(merged.snapshots ?? []), ...changes.snapshots];
    }
    for (const flag of changes.nodeFlags) {
      const i = position.get(flag.nodeId);
      if (i === undefined) {
        flags.set(flag.nodeId, { ...flags.get(flag.nodeId), ...flag });
        continue;
      }
      const row = nodes[i]!;
      if (flag.isFrontier !== undefined) row.isFrontier = flag.isFrontier;
      if (flag.isCurrent !== undefined) row.isCurrent = flag.isCurrent;
    }
    for (const row of changes.nodes) {
      position.set(row.id, nodes.length);
      nodes.push({ ...row });
    }
    for (const head of changes.resourceHeads) heads.set(head.resourceKey, head);
    for (const run of changes.runs) runs.set(run.id, run);
    for (const row of changes.runSpend) {
      spend.set(`${row.runId}\u0000${row.dimension}\u0000${row.key}`, row);
    }
    for (const row of changes.approvals) {
      const key = `${row.runId}\u0000${row.requestedAt.getTime()}`;
      const earlier = approvals.get(key);
      // A request settled within the batch keeps the index of the entry that made it.
      approvals.set(
        key,
        earlier === undefined ? row : { ...row, requestIndex: earlier.requestIndex },
      );
    }
  }
  merged.nodeFlags = [...flags.values()];
  merged.resourceHeads = [...heads.values()];
  merged.runs = [...runs.values()];
  merged.runSpend = [...spend.values()];
  merged.approvals = [...approvals.values()];
  return merged;
}
