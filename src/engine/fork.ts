/**
 * Forks share their history. A fork's log is its source's entries `[0, upToIndex)` followed by
 * its own, starting with `thread_forked`; the shared entries, their nodes, edges and snapshots
 * stay where they are and the fork's row names where they live (store/read-model/lineage.ts), so
 * a fork costs the same at any length: the source's state at the fork point (the nearest
 * snapshot plus a short replay, over the engine's latest state of the source), one entry, and the
 * fork's current-state rows (its runs, spend, resource heads and approval requests).
 */
import { err, type Result } from '../core/errors.js';
import type { LogEntry } from '../core/log/index.js';
import { commitEvent, type ThreadEvent } from '../core/thread/index.js';
import { projectEntry, projectSharedState } from '../store/read-model/index.js';
import { checkIndex, checkNewThreadId, firstFailure, invalid } from './checks.js';
import type { Runtime } from './engine.js';
import { defaultExpiry } from './retention.js';
import {
  answeredAs,
  type Located,
  locateThread,
  newThreadTenant,
  publicThreadId,
  threadTenant,
} from './tenancy.js';
import type { Derivation } from './thread-cache.js';
import type { ForkThreadInput, ForkThreadResult } from './types.js';

/** Entries read per step when looking back for a run's last change before the fork point. */
const LOOKBACK_PAGE = 256;

/**
 * The fork belongs to its source's tenant (the caller's, for a tenant's call) and is named in
 * that tenant's namespace: `thread_forked` records both ids as the tenant names them.
 */
export async function forkThread(
  rt: Runtime,
  input: ForkThreadInput,
  claim: Parameters<Runtime['newThread']>[3],
  tenant: string | undefined,
  checkRef: (value: unknown, path: string) => Result<string>,
  place: (threadId: string, owner: string) => Promise<Result<Located>>,
): Promise<Result<ForkThreadResult>> {
  const newThreadId = input.newThreadId ?? rt.ids.next();
  const checked = firstFailure(
    checkRef(input.threadId, '$.threadId'),
    checkNewThreadId(newThreadId, '$.newThreadId'),
    checkIndex(input.upToIndex, '$.upToIndex'),
  );
  if (!checked.ok) return checked;
  const located = await locateThread(rt.tenants, input.threadId, tenant);
  if (!located.ok) return located;
  const from = located.value;
  // Ordered against redactions of the lineage: one that commits first is read here, and one
  // that comes after finds this fork among the threads sharing the nodes.
  return rt.inLineage(from.key, (root) =>
    forkUnder(rt, input, tenant, {
      from,
      newThreadId,
      place,
      claim,
      under: rt.cache.derivation(root),
    }),
  );
}

/** What forkThread has settled before the lineage is its own: where, what to, and under what. */
interface ForkPlan {
  from: Located;
  newThreadId: string;
  place: (threadId: string, owner: string) => Promise<Result<Located>>;
  claim: Parameters<Runtime['newThread']>[3];
  /** The source lineage's derivation, taken before the source is read. */
  under: Derivation;
}

async function forkUnder(
  rt: Runtime,
  input: ForkThreadInput,
  tenant: string | undefined,
  { from, newThreadId, place, claim, under }: ForkPlan,
): Promise<Result<ForkThreadResult>> {
  const source = await rt.load(from.key, true);
  if (!source.ok) return answeredAs(source, from);
  const upToIndex = input.upToIndex ?? source.value.length;
  if (upToIndex < 1 || upToIndex > source.value.length) {
    return err(
      invalid(
        '$.upToIndex',
        `must be in [1, ${source.value.length}] (the first entry creates the thread)`,
      ),
    );
  }
  const owner = newThreadTenant(tenant ?? (await threadTenant(rt.tenants, from.key)));
  const placed = await place(newThreadId, owner);
  if (!placed.ok) return placed;
  const to = placed.value;
  const at = await rt.stateAt(from.key, upToIndex, source.value);
  if (!at.ok) return answeredAs(at, from);
  const copied = at.value;
  const now = rt.clock.now();
  const event: ThreadEvent = {
    type: 'thread_forked',
    threadId: newThreadId,
    fromThreadId: tenant === undefined ? publicThreadId(from.key) : from.id,
    upToIndex,
  };
  const committed = commitEvent(copied, event, rt.stamp(now), rt.machineOptions);
  if (!committed.ok) return committed;
  const { entry, state, effects, text, parts } = committed.value;
  const sourceRows = await rt.store.forkSourceRows(from.key, upToIndex);
  // The fork salts its own nodes with its source's secret (a copy of it: deleting the source
  // leaves the fork's), so content both append stays one id in both, as unsalted content does.
  const payloadSalt = (await rt.store.getPayloadSalt(from.key)) ?? null;
  const runIndexes = await lastRunChanges(rt, from.key, upToIndex, sourceRows.runIndexes);
  const changes = {
    ...projectEntry(copied, state, effects, entry, to.key, text, parts),
    ...projectSharedState(to.key, state, (runId) => runIndexes.get(runId) ?? 0),
    approvals: sourceRows.approvals.map((row) => ({ ...row, threadId: to.key })),
    // The thread row is new even though the log does not start here.
    created: true,
  };
  changes.thread = {
    ...changes.thread,
    tenantId: owner,
    baseThreadId: from.key,
    baseLogLength: upToIndex,
    baseNodeCount: copied.graph.count,
    // A fork is a new thread: the retention default applies to it, not its source's expiry.
    expiresAt: defaultExpiry(rt, now),
    payloadSalt,
  };
  const response: ForkThreadResult = {
    threadId: to.id,
    logIndex: entry.index,
    logLength: state.length,
    forkedFrom: { threadId: from.id, upToIndex },
  };
  const written = await rt.newThread(
    to.key,
    changes,
    state,
    claim,
    response,
    now,
    { entries: [entry], effects },
    under,
  );
  return answeredAs(written, to);
}

/**
 * The index of each run's last change before `upTo`. A run the source has not changed since is
 * known from its row; one changed later is looked for backwards from the fork point, by the
 * entries naming it (a run changes only by an entry naming it, or by usage of a node it wrote).
 */
async function lastRunChanges(
  rt: Runtime,
  threadId: string,
  upTo: number,
  stored: ReadonlyMap<string, number>,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const wanted = new Set<string>();
  for (const [runId, index] of stored) {
    if (index < upTo) found.set(runId, index);
    else wanted.add(runId);
  }
  for (let end = upTo; wanted.size > 0 && end > 0; end -= LOOKBACK_PAGE) {
    const page = await rt.store.readEntries(threadId, Math.max(0, end - LOOKBACK_PAGE), end);
    for (let i = page.length - 1; i >= 0 && wanted.size > 0; i--) {
      for (const runId of runsNamed(page[i]!)) {
        if (!wanted.delete(runId)) continue;
        found.set(runId, page[i]!.index);
      }
    }
  }
  return found;
}

function runsNamed(entry: LogEntry): string[] {
  const event = entry.event as {
    runId?: unknown;
    nodes?: Array<{ runId?: unknown; usage?: unknown }>;
  };
  const named: string[] = [];
  if (typeof event.runId === 'string') named.push(event.runId);
  for (const node of event.nodes ?? []) {
    if (typeof node.runId === 'string' && node.usage !== undefined) named.push(node.runId);
  }
  return named;
}
