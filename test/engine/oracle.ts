/**
 * An independent statement of what the read models of a thread must hold, read straight off its
 * ThreadState through the core's readers — not through the projector. Columns that depend on
 * which entry last touched a row (thread.updatedAt, run.logIndex) are left out.
 */
import { canonicalJson } from '../../src/core/canonical.js';
import {
  exportAgentState,
  getResourceHeads,
  isCurrent,
  parseSemanticResourceKey,
} from '../../src/core/graph/index.js';
import { getNodeMeta, type ThreadState } from '../../src/core/thread/index.js';
import type { ReadModelDump } from '../../src/store/read-model/index.js';

const iso = (value: string | undefined) =>
  value === undefined ? null : new Date(value).toISOString();

export function expectedReadModels(threadId: string, state: ThreadState): ReadModelDump {
  const config = state.config!;
  const graph = exportAgentState(state.graph);
  const frontier = new Set(graph.frontier);
  const runs = state.runOrder.map((runId) => state.runs.get(runId)!);
  return {
    thread: [
      {
        id: threadId,
        tenantId: 'default',
        createdAt: iso(config.createdAt),
        metadata: canonicalJson(config.metadata),
        nodeTypes: canonicalJson(config.nodeTypes),
        allowDynamicNodeTypes: config.allowDynamicNodeTypes,
        logLength: state.length,
        stateHash: state.stateHash,
        frontier: canonicalJson(graph.frontier),
        forkedFromId: config.forkedFrom?.threadId ?? null,
        forkedUpToIndex: config.forkedFrom?.upToIndex ?? null,
        nodeCount: graph.nodes.length,
        spendInputTokens: state.spend.inputTokens,
        spendOutputTokens: state.spend.outputTokens,
        spendCostUsd: state.spend.costUsd,
        spendCalls: state.spend.calls,
      },
    ],
    node: graph.nodes.map((node) => {
      const meta = getNodeMeta(state, node.id)!;
      return {
        threadId,
        id: node.id,
        sequence: node.sequence,
        kind: node.kind,
        payload: canonicalJson(node.payload),
        createdAt: iso(node.createdAt),
        resourceKey: node.resourceKey ?? null,
        logIndex: meta.logIndex,
        runId: meta.runId ?? null,
        taint: meta.taint === undefined ? null : canonicalJson(meta.taint),
        usage: meta.usage === undefined ? null : canonicalJson(meta.usage),
        isFrontier: frontier.has(node.id),
        isCurrent: isCurrent(state.graph, node.id),
      };
    }),
    node_parent: graph.nodes.flatMap((node) =>
      node.parents.map((parentId, position) => ({
        threadId,
        childId: node.id,
        parentId,
        position,
      })),
    ),
    resource_head: getResourceHeads(state.graph).map((head) => {
      const semantic = parseSemanticResourceKey(head.resourceKey!);
      return {
        threadId,
        resourceKey: head.resourceKey,
        nodeId: head.id,
        semanticType: semantic?.type ?? null,
        semanticKey: semantic?.key ?? null,
      };
    }),
    run: runs.map((run) => ({
      threadId,
      id: run.run_id,
      tenantId: 'default',
      status: run.status,
      goal: run.goal,
      createdAt: iso(run.created_at),
      updatedAt: iso(run.updated_at),
      startedAt: iso(run.started_at),
      waitingTimeoutAt: iso(run.waiting_timeout_at),
      executionDeadlineAt:
        run.started_at === undefined
          ? null
          : new Date(Date.parse(run.started_at) + run.max_execution_time_ms).toISOString(),
      state: canonicalJson(run),
      totalInputTokens: run.total_input_tokens,
      totalOutputTokens: run.total_output_tokens,
      totalCostUsd: run.total_cost_usd,
      waitingFor: run.status === 'waiting' ? (run.waiting_for ?? 'human_approval') : null,
    })),
    run_spend: runs.flatMap((run) =>
      (['model', 'node'] as const).flatMap((dimension) =>
        Object.entries(dimension === 'model' ? run.model_breakdown : run.node_breakdown).map(
          ([key, spend]) => ({
            threadId,
            runId: run.run_id,
            dimension,
            key,
            inputTokens: spend.input_tokens,
            outputTokens: spend.output_tokens,
            costUsd: spend.cost_usd,
            calls: spend.calls,
          }),
        ),
      ),
    ),
  };
}

/** A dump without the columns the oracle leaves out, rows sorted like the store sorts them. */
export function comparable(dump: ReadModelDump): ReadModelDump {
  const drop = (rows: Array<Record<string, unknown>>, column: string) =>
    rows.map(({ [column]: _dropped, ...rest }) => rest);
  return { ...dump, thread: drop(dump.thread, 'updatedAt'), run: drop(dump.run, 'logIndex') };
}

/** Sorts the oracle's rows into the store's dump order. */
export function sortedLikeDump(dump: ReadModelDump): ReadModelDump {
  const by =
    (...keys: string[]) =>
    (a: Record<string, unknown>, b: Record<string, unknown>) => {
      for (const key of keys) {
        const x = String(a[key]);
        const y = String(b[key]);
        if (x !== y) return x < y ? -1 : 1;
      }
      return 0;
    };
  return {
    thread: [...dump.thread].sort(by('id')),
    node: [...dump.node].sort(by('threadId', 'id')),
    node_parent: [...dump.node_parent].sort(by('threadId', 'childId', 'parentId')),
    resource_head: [...dump.resource_head].sort(by('threadId', 'resourceKey')),
    run: [...dump.run].sort(by('threadId', 'id')),
    run_spend: [...dump.run_spend].sort(by('threadId', 'runId', 'dimension', 'key')),
  };
}
