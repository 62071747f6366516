import { err, ok, type Result } from '../core/errors.js';
import { exportAgentState, getNode, nodeCount } from '../core/graph/index.js';
import { type LogEntry, verifyLog } from '../core/log/index.js';
import {
  type Committed,
  commitEvent,
  createThreadMachine,
  type NodesAppendedEvent,
  planAppendNodes,
  planCreateThread,
  planImportState,
  planRemember,
  type ThreadEffect,
  type ThreadEvent,
} from '../core/thread/index.js';
import { mergeChanges, projectEntry } from '../store/read-model/index.js';
import { checkDepth, checkId, checkIndex, checkSize, firstFailure, invalid } from './checks.js';
import { type Runtime, threadNotFound } from './engine.js';
import { projectLog } from './project-log.js';
import { checkThread, newThreadTenant, tenantScope, threadTenant } from './tenancy.js';
import type {
  AppendNodesInput,
  AppendNodesResult,
  CreateThreadInput,
  ForkThreadInput,
  ForkThreadResult,
  ImportStateInput,
  ImportStateResult,
  RememberInput,
  RememberResult,
  StateAt,
  Written,
} from './types.js';

const written = (c: Committed, threadId: string): Written => ({
  threadId,
  logIndex: c.entry.index,
  logLength: c.state.length,
});

/** Request fields of an input: everything but the idempotency key. */
function request<T extends { idempotencyKey?: string }>(input: T): Omit<T, 'idempotencyKey'> {
  const { idempotencyKey: _ignored, ...rest } = input;
  return rest;
}

/** The thread commands for `tenant` (undefined: the system, every tenant; see tenancy.ts). */
export function createThreadCommands(rt: Runtime, tenant?: string) {
  const scoped = (scope: string) => tenantScope(scope, tenant);
  /** The first entry of a new thread (thread_created or state_imported). */
  async function startThread<T>(
    scope: string,
    input: CreateThreadInput | ImportStateInput,
    plan: (threadId: string) => Result<ThreadEvent>,
    respond: (c: Committed, threadId: string) => T,
  ): Promise<Result<T>> {
    return rt.idempotent(scoped(scope), input.idempotencyKey, request(input), async (claim) => {
      const threadId = input.threadId === undefined ? rt.ids.next() : input.threadId;
      const checked = firstFailure(
        checkId(threadId, '$.threadId'),
        checkDepth(input.metadata, '$.metadata'),
        checkSize(input.metadata, '$.metadata', rt.maxPayloadBytes),
      );
      if (!checked.ok) return checked;
      const event = plan(threadId);
      if (!event.ok) return event;
      const initial = createThreadMachine().initial;
      const now = rt.clock.now();
      const committed = commitEvent(initial, event.value, rt.stamp(now), rt.machineOptions);
      if (!committed.ok) return committed;
      const { entry, state, effects } = committed.value;
      const changes = projectEntry(initial, state, effects, entry, threadId);
      changes.thread.tenantId = newThreadTenant(tenant);
      const response = respond(committed.value, threadId);
      return rt.newThread(threadId, changes, state, claim, response, now, {
        entries: [entry],
        effects,
      });
    });
  }

  const settings = (input: CreateThreadInput | ImportStateInput) => ({
    ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
    ...(input.nodeTypes === undefined ? {} : { nodeTypes: input.nodeTypes }),
    ...(input.allowDynamicNodeTypes === undefined
      ? {}
      : { allowDynamicNodeTypes: input.allowDynamicNodeTypes }),
  });

  return {
    createThread: (input: CreateThreadInput = {}) =>
      startThread(
        'createThread',
        input,
        (threadId) => planCreateThread(threadId, settings(input)),
        written,
      ),

    importState: (input: ImportStateInput) =>
      startThread(
        'importState',
        input,
        (threadId) => planImportState(threadId, input.state, settings(input)),
        (c, threadId): ImportStateResult => ({
          ...written(c, threadId),
          nodeCount: nodeCount(c.state.graph),
        }),
      ),

    appendNodes: (input: AppendNodesInput): Promise<Result<AppendNodesResult>> =>
      rt.idempotent(scoped('appendNodes'), input.idempotencyKey, request(input), async (claim) => {
        const nodes: unknown = input.nodes;
        const checked = firstFailure(
          checkId(input.threadId, '$.threadId'),
          checkIndex(input.expectedIndex, '$.expectedIndex'),
          Array.isArray(nodes) ? ok(undefined) : err(invalid('$.nodes', 'must be a list')),
          ...(Array.isArray(nodes) ? nodes : []).map((node, i) =>
            checkSize(
              (node as { payload?: unknown } | null)?.payload,
              `$.nodes[${i}].payload`,
              rt.maxPayloadBytes,
            ),
          ),
        );
        if (!checked.ok) return checked;
        const visible = await checkThread(rt.store, input.threadId, tenant);
        if (!visible.ok) return visible;
        return rt.onThread(input.threadId, input.expectedIndex, claim, {
          plan: (state, now) => planAppendNodes(state, input.nodes, now),
          respond: (c) => ({
            ...written(c, input.threadId),
            nodes: (c.entry.event as unknown as NodesAppendedEvent).nodes.map(
              (recorded) => getNode(c.state.graph, recorded.id)!,
            ),
          }),
        });
      }),

    remember: (input: RememberInput): Promise<Result<RememberResult>> =>
      rt.idempotent(scoped('remember'), input.idempotencyKey, request(input), async (claim) => {
        const checked = firstFailure(
          checkId(input.threadId, '$.threadId'),
          checkSize(input.content, '$.content', rt.maxPayloadBytes),
        );
        if (!checked.ok) return checked;
        const visible = await checkThread(rt.store, input.threadId, tenant);
        if (!visible.ok) return visible;
        const remembered = {
          type: input.type,
          key: input.key,
          content: input.content,
          ...(input.runId === undefined ? {} : { runId: input.runId }),
        };
        return rt.onThread(input.threadId, undefined, claim, {
          plan: (state, now) => planRemember(state, remembered, now),
          respond: (c) => {
            const recorded = (c.entry.event as unknown as NodesAppendedEvent).nodes[0]!;
            const node = getNode(c.state.graph, recorded.id)!;
            const payload = node.payload as { type: string; key: string };
            return {
              ...written(c, input.threadId),
              node,
              memory: { type: payload.type, key: payload.key },
            };
          },
        });
      }),

    forkThread: (input: ForkThreadInput): Promise<Result<ForkThreadResult>> =>
      rt.idempotent(scoped('forkThread'), input.idempotencyKey, request(input), (claim) =>
        fork(rt, input, claim, tenant),
      ),

    async verify(threadId: string, options: { strict?: boolean } = {}) {
      const visible = await checkThread(rt.store, threadId, tenant);
      if (!visible.ok) return visible;
      const entries = await rt.store.readEntries(threadId);
      if (entries.length === 0) return err(threadNotFound(threadId));
      const machine = createThreadMachine(rt.machineOptions);
      return ok(verifyLog(machine, entries, { strict: options.strict ?? true }));
    },

    async stateAt(threadId: string, index?: number): Promise<Result<StateAt>> {
      const checked = checkIndex(index, '$.index');
      if (!checked.ok) return checked;
      const visible = await checkThread(rt.store, threadId, tenant);
      if (!visible.ok) return visible;
      const latest = await rt.load(threadId, true);
      if (!latest.ok) return latest;
      const at = index ?? latest.value.length;
      if (at > latest.value.length) {
        return err(
          invalid('$.index', `thread ${threadId} has ${latest.value.length} entries, not ${at}`),
        );
      }
      // Time travel: the nearest snapshot plus the replay of the entries after it.
      const state = await rt.stateAt(threadId, at, latest.value);
      if (!state.ok) return state;
      return ok({
        threadId,
        index: at,
        state: state.value,
        agentState: exportAgentState(state.value.graph),
      });
    },
  };
}

/**
 * A fork copies the entries `[0, upToIndex)` verbatim under a new thread id and appends
 * `thread_forked`; its read models are the projection of that log, written in one transaction.
 */
async function fork(
  rt: Runtime,
  input: ForkThreadInput,
  claim: Parameters<Runtime['newThread']>[3],
  tenant: string | undefined,
): Promise<Result<ForkThreadResult>> {
  const newThreadId = input.newThreadId ?? rt.ids.next();
  const checked = firstFailure(
    checkId(input.threadId, '$.threadId'),
    checkId(newThreadId, '$.newThreadId'),
    checkIndex(input.upToIndex, '$.upToIndex'),
  );
  if (!checked.ok) return checked;
  const visible = await checkThread(rt.store, input.threadId, tenant);
  if (!visible.ok) return visible;
  const source = await rt.load(input.threadId, true);
  if (!source.ok) return source;
  const upToIndex = input.upToIndex ?? source.value.length;
  if (upToIndex < 1 || upToIndex > source.value.length) {
    return err(
      invalid(
        '$.upToIndex',
        `must be in [1, ${source.value.length}] (the first entry creates the thread)`,
      ),
    );
  }
  const prefix: LogEntry[] = await rt.store.readEntries(input.threadId, 0, upToIndex);
  const projected = projectLog(newThreadId, prefix, rt.machineOptions, rt.snapshots);
  if (!projected.ok) return projected;
  const { state: copied, changes: copiedChanges } = projected.value;
  const now = rt.clock.now();
  const event: ThreadEvent = {
    type: 'thread_forked',
    threadId: newThreadId,
    fromThreadId: input.threadId,
    upToIndex,
  };
  const committed = commitEvent(copied, event, rt.stamp(now), rt.machineOptions);
  if (!committed.ok) return committed;
  const { entry, state, effects } = committed.value;
  const changes = mergeChanges([
    copiedChanges!,
    projectEntry(copied, state, effects, entry, newThreadId),
  ]);
  // A fork belongs to its source's tenant (the caller's, for a tenant's call).
  changes.thread.tenantId = newThreadTenant(
    tenant ?? (await threadTenant(rt.store, input.threadId)),
  );
  const response: ForkThreadResult = {
    threadId: newThreadId,
    logIndex: entry.index,
    logLength: state.length,
    forkedFrom: { threadId: input.threadId, upToIndex },
  };
  const forkEffects: ThreadEffect[] = [{ type: 'thread_created', threadId: newThreadId }];
  return rt.newThread(newThreadId, changes, state, claim, response, now, {
    entries: [...prefix, entry],
    effects: forkEffects,
  });
}
