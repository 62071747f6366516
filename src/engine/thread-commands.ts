import { err, ok, type Result } from '../core/errors.js';
import { exportAgentState, getNode, nodeCount, type Steps } from '../core/graph/index.js';
import { verifyLog } from '../core/log/index.js';
import {
  type Committed,
  checkRedactions,
  commitEventSteps,
  createThreadMachine,
  type NodesAppendedEvent,
  type PreparedImport,
  planAppendNodes,
  planCreateThread,
  planRemember,
  prepareImportState,
  type ThreadEvent,
} from '../core/thread/index.js';
import {
  drive,
  noPause,
  type Pause,
  projectEntrySteps,
  timeSlices,
} from '../store/read-model/index.js';
import {
  checkDepth,
  checkId,
  checkIndex,
  checkNewThreadId,
  checkSize,
  checkThreadKey,
  firstFailure,
  invalid,
  threadNotFound,
} from './checks.js';
import { deleteThread } from './delete.js';
import type { Runtime } from './engine.js';
import { forkThread } from './fork.js';
import type { IdempotencyClaim } from './idempotency.js';
import { newSaltSecret } from './payload-salts.js';
import { redactNodes } from './redact.js';
import { newThreadExpiry, setThreadExpiry } from './retention.js';
import {
  answeredAs,
  type Located,
  locateThread,
  newThreadKey,
  newThreadTenant,
  tenantScope,
} from './tenancy.js';
import type {
  AppendNodesInput,
  AppendNodesResult,
  CreateThreadInput,
  DeleteThreadInput,
  DeleteThreadResult,
  ForkThreadInput,
  ForkThreadResult,
  ImportStateInput,
  ImportStateResult,
  RedactNodesInput,
  RedactNodesResult,
  RememberInput,
  RememberResult,
  SetThreadExpiryInput,
  SetThreadExpiryResult,
  StateAt,
  Written,
} from './types.js';

const written = (c: Committed, threadId: string): Written => ({
  threadId,
  logIndex: c.entry.index,
  logLength: c.state.length,
});

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A boolean input field, if given (JavaScript callers can pass anything). */
function checkFlag(input: object, field: string): Result<undefined> {
  const value = (input as Record<string, unknown>)[field];
  if (value === undefined || typeof value === 'boolean') return ok(undefined);
  return err(invalid(`$.${field}`, 'must be true or false'));
}

/** Runs core steps (or takes a value computed in one go) to their end, pausing at each pause. */
async function driven<T extends object>(steps: Steps<T> | T, pause: Pause): Promise<T> {
  return isSteps(steps) ? drive(steps, pause) : steps;
}

const isSteps = <T extends object>(value: Steps<T> | T): value is Steps<T> =>
  typeof (value as Partial<Steps<T>>).next === 'function';

/** What a new thread starts from: its first event and, for an import, its checked graph. */
interface Start {
  event: ThreadEvent;
  importedGraph?: PreparedImport['importedGraph'];
}

/** Request fields of an input: everything but the idempotency key. */
function request<T extends { idempotencyKey?: string }>(input: T): Omit<T, 'idempotencyKey'> {
  const { idempotencyKey: _ignored, ...rest } = input;
  return rest;
}

/**
 * The CONFLICT of a new thread whose id its tenant already uses (`at`: that thread), in the
 * terms of the store's own for a lost race.
 */
export async function threadExists(
  rt: Pick<Runtime, 'store'>,
  at: Located,
  hint: string,
): Promise<Result<never>> {
  return err({
    code: 'CONFLICT',
    message: `thread ${at.id} already exists: ${hint}`,
    threadId: at.id,
    expectedIndex: 0,
    actualIndex: (await rt.store.getLogLength(at.key)) ?? 0,
  });
}

/**
 * How threads start, for `tenant` (as createThreadCommands): where a new thread goes, and its
 * first entry (thread_created or state_imported) committed and written.
 */
function createThreadStarts(rt: Runtime, tenant: string | undefined) {
  const scoped = (scope: string) => tenantScope(scope, tenant);
  /**
   * Where a new thread `threadId` of `owner` goes: its storage key and the id this caller's
   * answers show (the key, for the system), or the CONFLICT of an id the owner already uses.
   */
  async function place(threadId: string, owner: string): Promise<Result<Located>> {
    const placed = await newThreadKey(rt.tenants, threadId, owner);
    const at = { key: placed.key, id: tenant === undefined ? placed.key : threadId };
    return placed.taken ? threadExists(rt, at, 'choose another id') : ok(at);
  }

  /** The first entry of a new thread (thread_created or state_imported). */
  async function startThread<T>(
    scope: string,
    input: CreateThreadInput | ImportStateInput,
    plan: (threadId: string) => Result<Start> | Steps<Result<Start>>,
    respond: (c: Committed, threadId: string) => T,
  ): Promise<Result<T>> {
    // An import holds the event loop for as long as the state is big: every step of it —
    // checking the request, the state, committing its entry, deriving its rows, storing them —
    // runs in time slices, and other clients get their turn between slices.
    const large = scope === 'importState';
    const pause = large ? timeSlices(rt.sliceMs) : noPause;
    const command = async (claim: IdempotencyClaim | undefined): Promise<Result<T>> => {
      const threadId = input.threadId === undefined ? rt.ids.next() : input.threadId;
      const checked = firstFailure(
        checkNewThreadId(threadId, '$.threadId'),
        checkDepth(input.metadata, '$.metadata'),
        checkSize(input.metadata, '$.metadata', rt.maxPayloadBytes),
        checkFlag(input, 'saltPayloads'),
      );
      if (!checked.ok) return checked;
      if (large) await nextTurn();
      // The log names the thread by its id; where it is stored is the store's business.
      const planned = await driven(plan(threadId), pause);
      if (!planned.ok) return planned;
      await pause();
      const initial = createThreadMachine().initial;
      const now = rt.clock.now();
      const expiresAt = newThreadExpiry(rt, input.expiresAt, now);
      if (!expiresAt.ok) return expiresAt;
      const { event, importedGraph } = planned.value;
      const options =
        importedGraph === undefined ? rt.machineOptions : { ...rt.machineOptions, importedGraph };
      const committed = await drive(
        commitEventSteps(initial, event, rt.stamp(now), options),
        pause,
      );
      if (!committed.ok) return committed;
      const owner = newThreadTenant(tenant);
      const at = await place(threadId, owner);
      if (!at.ok) return at;
      const { key, id } = at.value;
      const { entry, state, effects, text, parts } = committed.value;
      await pause();
      const changes = await drive(
        projectEntrySteps(initial, state, effects, entry, key, text, parts),
        pause,
      );
      await pause();
      changes.thread.tenantId = owner;
      changes.thread.expiresAt = expiresAt.value;
      if ('saltPayloads' in input && input.saltPayloads) {
        changes.thread.payloadSalt = newSaltSecret();
      }
      const response = respond(committed.value, id);
      // Taken before the write: the store may seal the row's copy in place.
      const secret = changes.thread.payloadSalt ?? null;
      const written = await rt.newThread(
        key,
        changes,
        state,
        claim,
        response,
        now,
        { entries: [entry], effects },
        undefined,
        large ? pause : undefined,
      );
      if (written.ok) rt.salts.remember(key, secret);
      return answeredAs(written, at.value);
    };
    return rt.idempotent(
      scoped(scope),
      input.idempotencyKey,
      request(input),
      command,
      large ? { list: ['state', 'nodes'], pause } : undefined,
    );
  }

  return { place, startThread };
}

/** A new thread's settings as its first entry records them: those the input gives. */
const settings = (input: CreateThreadInput | ImportStateInput) => ({
  ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
  ...(input.nodeTypes === undefined ? {} : { nodeTypes: input.nodeTypes }),
  ...(input.allowDynamicNodeTypes === undefined
    ? {}
    : { allowDynamicNodeTypes: input.allowDynamicNodeTypes }),
});

/**
 * The thread commands for `tenant` (undefined: the system, every tenant; see tenancy.ts). A
 * tenant names threads by id, in its own namespace; the system by storage key.
 */
export function createThreadCommands(rt: Runtime, tenant?: string) {
  const scoped = (scope: string) => tenantScope(scope, tenant);
  /** A reference to an existing thread: an id for a tenant, a storage key for the system. */
  const checkRef = (value: unknown, path: string) =>
    tenant === undefined ? checkThreadKey(value, path) : checkId(value, path);
  const locate = (threadId: string) => locateThread(rt.tenants, threadId, tenant);

  const { place, startThread } = createThreadStarts(rt, tenant);

  return {
    createThread: (input: CreateThreadInput = {}) =>
      startThread(
        'createThread',
        input,
        (threadId) => {
          const event = planCreateThread(threadId, settings(input));
          return event.ok ? ok({ event: event.value }) : event;
        },
        written,
      ),

    importState: (input: ImportStateInput) =>
      startThread(
        'importState',
        input,
        (threadId) =>
          prepareImportState(
            threadId,
            input.state,
            settings(input),
            rt.machineOptions.importLimits,
          ),
        (c, threadId): ImportStateResult => ({
          ...written(c, threadId),
          nodeCount: nodeCount(c.state.graph),
        }),
      ),

    appendNodes: (input: AppendNodesInput): Promise<Result<AppendNodesResult>> =>
      rt.idempotent(scoped('appendNodes'), input.idempotencyKey, request(input), async (claim) => {
        const nodes: unknown = input.nodes;
        const checked = firstFailure(
          checkRef(input.threadId, '$.threadId'),
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
        const at = await locate(input.threadId);
        if (!at.ok) return at;
        const result = await rt.onThread(at.value.key, input.expectedIndex, claim, {
          plan: (state, now) => planAppendNodes(state, input.nodes, now),
          respond: (c) => ({
            ...written(c, at.value.id),
            nodes: (c.entry.event as unknown as NodesAppendedEvent).nodes.map(
              (recorded) => getNode(c.state.graph, recorded.id)!,
            ),
          }),
        });
        return answeredAs(result, at.value);
      }),

    remember: (input: RememberInput): Promise<Result<RememberResult>> =>
      rt.idempotent(scoped('remember'), input.idempotencyKey, request(input), async (claim) => {
        const checked = firstFailure(
          checkRef(input.threadId, '$.threadId'),
          checkSize(input.content, '$.content', rt.maxPayloadBytes),
        );
        if (!checked.ok) return checked;
        const at = await locate(input.threadId);
        if (!at.ok) return at;
        const remembered = {
          type: input.type,
          key: input.key,
          content: input.content,
          ...(input.runId === undefined ? {} : { runId: input.runId }),
        };
        const result = await rt.onThread(at.value.key, undefined, claim, {
          plan: (state, now) => planRemember(state, remembered, now),
          respond: (c) => {
            const recorded = (c.entry.event as unknown as NodesAppendedEvent).nodes[0]!;
            const node = getNode(c.state.graph, recorded.id)!;
            const payload = node.payload as { type: string; key: string };
            return {
              ...written(c, at.value.id),
              node,
              memory: { type: payload.type, key: payload.key },
            };
          },
        });
        return answeredAs(result, at.value);
      }),

    deleteThread: (input: DeleteThreadInput): Promise<Result<DeleteThreadResult>> =>
      rt.idempotent(scoped('deleteThread'), input.idempotencyKey, request(input), (claim) =>
        deleteThread(rt, input, claim, tenant, checkRef),
      ),

    redactNodes: (input: RedactNodesInput): Promise<Result<RedactNodesResult>> =>
      rt.idempotent(scoped('redactNodes'), input.idempotencyKey, request(input), (claim) =>
        redactNodes(rt, input, claim, tenant, checkRef),
      ),

    setThreadExpiry: (input: SetThreadExpiryInput): Promise<Result<SetThreadExpiryResult>> =>
      rt.idempotent(scoped('setThreadExpiry'), input.idempotencyKey, request(input), (claim) =>
        setThreadExpiry(rt, input, claim, tenant, checkRef),
      ),

    forkThread: (input: ForkThreadInput): Promise<Result<ForkThreadResult>> =>
      rt.idempotent(scoped('forkThread'), input.idempotencyKey, request(input), (claim) =>
        forkThread(rt, input, claim, tenant, checkRef, place),
      ),

    verify: (threadId: string, options: { strict?: boolean } = {}) =>
      verifyThread(rt, locate, threadId, options),

    async stateAt(threadId: string, index?: number): Promise<Result<StateAt>> {
      const checked = checkIndex(index, '$.index');
      if (!checked.ok) return checked;
      const at = await locate(threadId);
      if (!at.ok) return at;
      return answeredAs(await stateOf(rt, at.value, index), at.value);
    },
  };
}

/** The state of the thread at `at` after its first `index` entries (default: all). */
async function stateOf(rt: Runtime, at: Located, index?: number): Promise<Result<StateAt>> {
  const latest = await rt.load(at.key, true);
  if (!latest.ok) return latest;
  const length = index ?? latest.value.length;
  if (length > latest.value.length) {
    return err(
      invalid('$.index', `thread ${at.id} has ${latest.value.length} entries, not ${length}`),
    );
  }
  // Time travel: the nearest snapshot plus the replay of the entries after it.
  const state = await rt.stateAt(at.key, length, latest.value);
  if (!state.ok) return state;
  return ok({
    threadId: at.id,
    index: length,
    state: state.value,
    agentState: exportAgentState(state.value.graph),
  });
}

/** A thread's log checked from its first entry, redactions included (see verify in types.ts). */
async function verifyThread(
  rt: Runtime,
  locate: (threadId: string) => ReturnType<typeof locateThread>,
  threadId: string,
  options: { strict?: boolean } = {},
) {
  const at = await locate(threadId);
  if (!at.ok) return at;
  const entries = await rt.store.readEntries(at.value.key);
  if (entries.length === 0) return err(threadNotFound(at.value.id));
  const machine = createThreadMachine(rt.machineOptions);
  const report = verifyLog(machine, entries, { strict: options.strict ?? true });
  const redactions = checkRedactions(entries);
  if (redactions.redacted.length === 0) return ok(report);
  const { bad } = redactions;
  if (!report.ok || bad === undefined) {
    return ok({ ...report, redactedNodes: redactions.redacted });
  }
  return ok({
    ok: false,
    checkedEntries: bad.index,
    firstBadIndex: bad.index,
    entryId: entries[bad.index]!.id,
    message: bad.message,
    redactedNodes: redactions.redacted,
  });
}
