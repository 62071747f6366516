/**
 * Commands for agent-framework checkpoint savers (src/langgraph): a checkpoint, a task's
 * intermediate writes, and the clearing of a thread's checkpoints are each one log entry, with
 * the causal nodes the saver derived from them in the same entry. Also the one read such a saver
 * needs to fold its checkpoints: the thread's log entries after an index.
 */
import { err, ok, type Result } from '../core/errors.js';
import { getNode } from '../core/graph/index.js';
import type { LogEntry } from '../core/log/index.js';
import {
  type Committed,
  type NodeInput,
  planSaveCheckpoint,
  planSaveCheckpointWrites,
  type RecordedNode,
} from '../core/thread/index.js';
import {
  checkDepth,
  checkId,
  checkIndex,
  checkLimit,
  checkSize,
  checkThreadKey,
  firstFailure,
  invalid,
  threadNotFound,
} from './checks.js';
import type { Runtime } from './engine.js';
import { answeredAs, locateThread, tenantScope } from './tenancy.js';
import type {
  AppendNodesResult,
  ClearCheckpointsInput,
  ReadEntriesOptions,
  SaveCheckpointInput,
  SaveCheckpointWritesInput,
  Written,
} from './types.js';

/**
 * How many times a node payload's limit (`maxPayloadBytes`) one checkpoint record may take: a
 * record holds only the values new since its parent, so this bounds one step's new state.
 */
export const CHECKPOINT_SIZE_FACTOR = 16;

function request<T extends { idempotencyKey?: string }>(input: T): Omit<T, 'idempotencyKey'> {
  const { idempotencyKey: _ignored, ...rest } = input;
  return rest;
}

export function createCheckpointCommands(rt: Runtime, tenant?: string) {
  const scoped = (scope: string) => tenantScope(scope, tenant);
  const checkRef = (value: unknown, path: string) =>
    tenant === undefined ? checkThreadKey(value, path) : checkId(value, path);
  const locate = (threadId: string) => locateThread(rt.tenants, threadId, tenant);

  const checkRecord = (
    input: { threadId: string; checkpointId: string; data: unknown; nodes?: unknown },
    extra: Result<unknown>[],
  ) => {
    const nodes: unknown = input.nodes ?? [];
    return firstFailure(
      checkRef(input.threadId, '$.threadId'),
      checkId(input.checkpointId, '$.checkpointId'),
      ...extra,
      typeof input.data === 'object' && input.data !== null && !Array.isArray(input.data)
        ? ok(undefined)
        : err(invalid('$.data', 'must be an object')),
      checkDepth(input.data, '$.data'),
      checkSize(input.data, '$.data', rt.maxPayloadBytes * CHECKPOINT_SIZE_FACTOR),
      Array.isArray(nodes) ? ok(undefined) : err(invalid('$.nodes', 'must be a list')),
      ...(Array.isArray(nodes) ? nodes : []).map((node, i) =>
        checkSize(
          (node as { payload?: unknown } | null)?.payload,
          `$.nodes[${i}].payload`,
          rt.maxPayloadBytes,
        ),
      ),
    );
  };

  const withNodes = (c: Committed, threadId: string): AppendNodesResult => ({
    threadId,
    logIndex: c.entry.index,
    logLength: c.state.length,
    nodes: (c.entry.event as unknown as { nodes: RecordedNode[] }).nodes.map(
      (recorded) => getNode(c.state.graph, recorded.id)!,
    ),
  });

  return {
    saveCheckpoint: (input: SaveCheckpointInput): Promise<Result<AppendNodesResult>> =>
      rt.idempotent(
        scoped('saveCheckpoint'),
        input.idempotencyKey,
        request(input),
        async (claim) => {
          const checked = checkRecord(input, [
            checkIndex(input.expectedIndex, '$.expectedIndex'),
            input.parentCheckpointId === undefined
              ? ok(undefined)
              : checkId(input.parentCheckpointId, '$.parentCheckpointId'),
          ]);
          if (!checked.ok) return checked;
          const at = await locate(input.threadId);
          if (!at.ok) return at;
          const planned = {
            checkpointId: input.checkpointId,
            data: input.data,
            nodes: (input.nodes ?? []) as NodeInput[],
            ...(input.parentCheckpointId === undefined
              ? {}
              : { parentCheckpointId: input.parentCheckpointId }),
          };
          const result = await rt.onThread(at.value.key, input.expectedIndex, claim, {
            plan: (state, now) => planSaveCheckpoint(state, planned, now),
            respond: (c) => withNodes(c, at.value.id),
          });
          return answeredAs(result, at.value);
        },
      ),

    saveCheckpointWrites: (input: SaveCheckpointWritesInput): Promise<Result<AppendNodesResult>> =>
      rt.idempotent(
        scoped('saveCheckpointWrites'),
        input.idempotencyKey,
        request(input),
        async (claim) => {
          const checked = checkRecord(input, [checkId(input.taskId, '$.taskId')]);
          if (!checked.ok) return checked;
          const at = await locate(input.threadId);
          if (!at.ok) return at;
          const planned = {
            checkpointId: input.checkpointId,
            taskId: input.taskId,
            data: input.data,
            nodes: (input.nodes ?? []) as NodeInput[],
          };
          const result = await rt.onThread(at.value.key, undefined, claim, {
            plan: (state, now) => planSaveCheckpointWrites(state, planned, now),
            respond: (c) => withNodes(c, at.value.id),
          });
          return answeredAs(result, at.value);
        },
      ),

    clearCheckpoints: (input: ClearCheckpointsInput): Promise<Result<Written>> =>
      rt.idempotent(
        scoped('clearCheckpoints'),
        input.idempotencyKey,
        request(input),
        async (claim) => {
          const checked = checkRef(input.threadId, '$.threadId');
          if (!checked.ok) return checked;
          const at = await locate(input.threadId);
          if (!at.ok) return at;
          const result = await rt.onThread(at.value.key, undefined, claim, {
            plan: () => ok({ type: 'checkpoints_cleared' as const }),
            respond: (c) => ({
              threadId: at.value.id,
              logIndex: c.entry.index,
              logLength: c.state.length,
            }),
          });
          return answeredAs(result, at.value);
        },
      ),

    readEntries: (threadId: string, fromIndex = 0, options: ReadEntriesOptions = {}) =>
      readEntries({ store: rt.store, locate, checkRef }, threadId, fromIndex, options),
  };
}

async function readEntries(
  {
    store,
    locate,
    checkRef,
  }: {
    store: Runtime['store'];
    locate: (threadId: string) => ReturnType<typeof locateThread>;
    checkRef: (value: unknown, path: string) => Result<string>;
  },
  threadId: string,
  fromIndex: number,
  options: ReadEntriesOptions,
): Promise<Result<LogEntry[]>> {
  const checked = firstFailure(
    checkRef(threadId, '$.threadId'),
    checkIndex(fromIndex, '$.fromIndex'),
    checkLimit(options.limit, '$.limit'),
  );
  if (!checked.ok) return checked;
  const at = await locate(threadId);
  if (!at.ok) return at;
  const entries = await store.readEntries(at.value.key, fromIndex, undefined, options);
  if (entries.length === 0 && fromIndex === 0) return err(threadNotFound(at.value.id));
  return ok(entries);
}
