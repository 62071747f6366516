import { err, ok, type Result } from '../core/errors.js';
import { DEFAULT_IMPORT_LIMITS } from '../core/graph/index.js';
import type { JsonObject } from '../core/json.js';
import { childPath } from '../core/log/index.js';
import {
  findPlainJsonIssue,
  isWorkflowStatus,
  parseRunAction,
  repeatsTerminalStatus,
  spentLimitError,
  type WorkflowStatus,
} from '../core/run/index.js';
import {
  type Committed,
  planCancelRun,
  planDispatch,
  planImportWorkflowState,
  planRecordUsage,
  planResolveApproval,
  planStartRun,
  type ThreadEvent,
  type ThreadState,
} from '../core/thread/index.js';
import { checkId, checkIndex, checkSize, checkThreadKey, firstFailure, invalid } from './checks.js';
import type { Runtime } from './engine.js';
import type { IdempotencyClaim } from './idempotency.js';
import {
  answeredAs,
  type Located,
  locateThread,
  runHomes,
  shownId,
  tenantScope,
} from './tenancy.js';
import type {
  CancelRunInput,
  DispatchInput,
  ImportWorkflowStateInput,
  RecordUsageInput,
  ResolveApprovalInput,
  RunResult,
  StartRunInput,
} from './types.js';

function request<T extends { idempotencyKey?: string }>(input: T): Omit<T, 'idempotencyKey'> {
  const { idempotencyKey: _ignored, ...rest } = input;
  return rest;
}

const runResult =
  (threadId: string, runId: string) =>
  (c: Committed): RunResult => ({
    threadId,
    runId,
    logIndex: c.entry.index,
    logLength: c.state.length,
    status: c.state.runs.get(runId)?.status ?? 'pending',
  });

/**
 * A dispatch or approval on a run whose budget or iteration limit is spent is refused with
 * BUDGET_EXCEEDED / ITERATION_LIMIT_EXCEEDED and writes nothing (a malformed action still gets
 * its VALIDATION_FAILED first). Rolling the run back (`set_status` to cancelled, or cancelRun)
 * and reporting usage stay allowed: the spend is a fact and the saga must be able to unwind.
 */
function refuseSpent<T>(
  state: ThreadState,
  runId: string,
  planned: Result<T>,
  rollback = false,
): Result<T> {
  if (rollback || (!planned.ok && planned.error.code === 'VALIDATION_FAILED')) return planned;
  const run = state.runs.get(runId);
  const spent = run === undefined ? undefined : spentLimitError(run);
  return spent === undefined ? planned : err(spent);
}

const isRollback = (action: JsonObject): boolean => {
  const payload = action.payload;
  return (
    action.type === 'set_status' &&
    typeof payload === 'object' &&
    payload !== null &&
    !Array.isArray(payload) &&
    payload.status === 'cancelled'
  );
};

/** The status a `set_status` action asks for, if that is what `action` is. */
const targetStatus = (action: JsonObject): WorkflowStatus | undefined => {
  const payload = action.payload;
  if (action.type !== 'set_status' || typeof payload !== 'object' || payload === null) {
    return undefined;
  }
  const status = (payload as JsonObject).status;
  return isWorkflowStatus(status) ? status : undefined;
};

/** What a planning step returns for a command that would change nothing: write no entry. */
const UNCHANGED: unique symbol = Symbol('unchanged');
type Planned = Result<ThreadEvent> | typeof UNCHANGED;

/**
 * The runtime's write path always commits what a step plans, so a repeat stops it with this
 * error and `onRun` answers with the run as it stands instead; callers never see it.
 */
const NOTHING_TO_WRITE = {
  code: 'INVALID_ACTION' as const,
  message: 'the command repeats the run status and writes nothing',
};

/** A run command's answer when it wrote nothing: the run and the log as they stand. */
const currentResult = (threadId: string, runId: string, state: ThreadState): RunResult => ({
  threadId,
  runId,
  logIndex: state.length - 1,
  logLength: state.length,
  status: state.runs.get(runId)?.status ?? 'pending',
});

/**
 * The first field of a keyed request that an idempotency key cannot be hashed over (see
 * `keyedRequest`), as VALIDATION_FAILED. `roots` names the path a field has where the core
 * checks it (a dispatch's action is the core's `$`), so the error is the one the same command
 * gets without a key; other fields are reported at `$.<field>`.
 */
function notPlainRequest(
  body: Record<string, unknown>,
  roots: Readonly<Record<string, string>>,
): Result<never> | undefined {
  for (const [field, value] of Object.entries(body)) {
    const issue = findPlainJsonIssue(value, roots[field] ?? childPath('$', field));
    if (issue !== undefined) {
      return err({
        code: 'VALIDATION_FAILED',
        message: `${issue.path}: ${issue.message}`,
        issues: [issue],
      });
    }
  }
  return undefined;
}

const runNotFound = (runId: string) => ({
  code: 'NOT_FOUND' as const,
  message: `run ${runId} does not exist`,
  entity: 'Run',
  id: runId,
});

/** The lookups and wrappers every run command of `tenant` shares. */
function createRunContext(rt: Runtime, tenant: string | undefined) {
  const scoped = (scope: string) => tenantScope(scope, tenant);
  /** A reference to an existing thread: an id for a tenant, a storage key for the system. */
  const checkRef = (value: unknown, path: string) =>
    tenant === undefined ? checkThreadKey(value, path) : checkId(value, path);
  const shown = (key: string) => shownId(key, tenant);
  /** The threads holding `runId` that this caller may see. */
  const runThreads = async (runId: string) =>
    (await rt.store.findRunThreads(runId)).filter(
      (p) => tenant === undefined || p.tenantId === tenant,
    );

  /**
   * The thread a run command applies to. A run id repeats in forks of the thread that started
   * it; without `threadId` the command goes to that starting thread (the one whose fork source
   * does not hold the run), and `threadId` picks a fork's copy.
   */
  async function locateRun(runId: string, threadId: string | undefined): Promise<Result<Located>> {
    const checked = firstFailure(
      checkId(runId, '$.runId'),
      threadId === undefined ? ok(undefined) : checkRef(threadId, '$.threadId'),
    );
    if (!checked.ok) return checked;
    const places = await runThreads(runId);
    if (threadId !== undefined) {
      // A thread the caller does not have holds none of its runs.
      const at = await locateThread(rt.tenants, threadId, tenant);
      return at.ok && places.some((p) => p.threadId === at.value.key)
        ? at
        : err(runNotFound(runId));
    }
    const homes = runHomes(places);
    if (homes.length === 1) return ok({ key: homes[0]!.threadId, id: shown(homes[0]!.threadId) });
    if (homes.length === 0) return err(runNotFound(runId));
    return err(
      invalid(
        '$.threadId',
        `run ${runId} exists in threads ${homes.map((h) => shown(h.threadId)).join(', ')}: pass threadId`,
      ),
    );
  }

  /** A caller-chosen run id must be new in the caller's tenant (everywhere, for the system). */
  async function checkNewRunId(runId: string): Promise<Result<void>> {
    const places = await runThreads(runId);
    if (places.length === 0) return ok(undefined);
    return err(
      invalid(
        '$.runId',
        `run ${runId} already exists (thread ${shown(places[0]!.threadId)}): use a new id`,
      ),
    );
  }

  /**
   * `rt.idempotent` for a run command. With a key, the request is hashed as canonical JSON,
   * which a cycle, a bigint or a very deep value cannot become: such input gets the core's typed
   * VALIDATION_FAILED (naming the path) instead of an exception from the hash.
   */
  function keyedRequest<T extends { idempotencyKey?: string }>(
    scope: string,
    input: T,
    command: (claim: IdempotencyClaim | undefined) => Promise<Result<RunResult>>,
    roots: Readonly<Record<string, string>> = {},
  ): Promise<Result<RunResult>> {
    const body = request(input);
    const refused =
      input.idempotencyKey === undefined
        ? undefined
        : notPlainRequest(body as Record<string, unknown>, roots);
    if (refused !== undefined) return Promise.resolve(refused);
    return rt.idempotent(scoped(scope), input.idempotencyKey, body, command);
  }

  /**
   * A command on an existing run: locate it, then commit `plan` on its thread. A plan that
   * returns UNCHANGED writes nothing and answers with the run as it stands.
   */
  function onRun(
    scope: string,
    input: { runId: string; threadId?: string; idempotencyKey?: string },
    expectedIndex: number | undefined,
    checks: Result<unknown>[],
    plan: (state: ThreadState, now: string) => Planned,
    roots: Readonly<Record<string, string>> = {},
  ): Promise<Result<RunResult>> {
    return keyedRequest(
      scope,
      input,
      async (claim) => {
        const checked = firstFailure(...checks, checkIndex(expectedIndex, '$.expectedIndex'));
        if (!checked.ok) return checked;
        const located = await locateRun(input.runId, input.threadId);
        if (!located.ok) return located;
        const at = located.value;
        let unchanged: RunResult | undefined;
        const result = await rt.onThread(at.key, expectedIndex, claim, {
          plan: (state, now) => {
            const planned = plan(state, now);
            unchanged =
              planned === UNCHANGED ? currentResult(at.id, input.runId, state) : undefined;
            return planned === UNCHANGED ? err(NOTHING_TO_WRITE) : planned;
          },
          respond: runResult(at.id, input.runId),
        });
        return unchanged === undefined ? answeredAs(result, at) : ok(unchanged);
      },
      roots,
    );
  }

  return { rt, tenant, scoped, checkRef, locateRun, checkNewRunId, keyedRequest, onRun };
}

type RunContext = ReturnType<typeof createRunContext>;

/** The commands that start a run on a thread: a new one, or one imported from a workflow. */
function createRunStarts({
  rt,
  tenant,
  scoped,
  checkRef,
  checkNewRunId,
  keyedRequest,
}: RunContext) {
  return {
    startRun: (input: StartRunInput): Promise<Result<RunResult>> =>
      keyedRequest('startRun', input, async (claim) => {
        const runId = input.runId ?? rt.ids.next();
        const checked = firstFailure(
          checkRef(input.threadId, '$.threadId'),
          checkId(runId, '$.runId'),
          typeof input.goal === 'string' && input.goal.trim() === ''
            ? err(invalid('$.goal', 'must say what the run is for: it is empty'))
            : ok(undefined),
          checkSize(input.memory, '$.memory', rt.maxPayloadBytes),
        );
        if (!checked.ok) return checked;
        const at = await locateThread(rt.tenants, input.threadId, tenant);
        if (!at.ok) return at;
        if (input.runId !== undefined) {
          const fresh = await checkNewRunId(runId);
          if (!fresh.ok) return fresh;
        }
        const { idempotencyKey: _key, threadId: _thread, ...fields } = input;
        return startOn(rt, at.value, claim, runId, (state, now) =>
          planStartRun(state, { ...fields, runId }, now),
        );
      }),

    importWorkflowState: (input: ImportWorkflowStateInput): Promise<Result<RunResult>> =>
      rt.idempotent(
        scoped('importWorkflowState'),
        input.idempotencyKey,
        request(input),
        async (claim) => {
          const checked = firstFailure(
            checkRef(input.threadId, '$.threadId'),
            checkSize(input.state, '$.state', DEFAULT_IMPORT_LIMITS.maxBytes),
          );
          if (!checked.ok) return checked;
          const at = await locateThread(rt.tenants, input.threadId, tenant);
          if (!at.ok) return at;
          const runId = (input.state as { run_id?: unknown } | null)?.run_id;
          if (typeof runId === 'string') {
            const fresh = await checkNewRunId(runId);
            if (!fresh.ok) return fresh;
          }
          return startOn(rt, at.value, claim, typeof runId === 'string' ? runId : '', (state) =>
            planImportWorkflowState(state, input.state),
          );
        },
      ),
  };
}

/** The commands on an existing run. */
function createRunSteps({ rt, onRun }: RunContext) {
  return {
    dispatch: (input: DispatchInput) => {
      const action: JsonObject = {
        ...(input.action as unknown as JsonObject),
        id: input.action?.id ?? rt.ids.next(),
      };
      return onRun(
        'dispatch',
        input,
        input.expectedIndex,
        [checkSize(input.action, '$.action', rt.maxPayloadBytes)],
        (state, now) => {
          const to = targetStatus(action);
          const from = state.runs.get(input.runId)?.status;
          // Only a valid action counts as a repeat: a malformed one still gets its error.
          if (to !== undefined && from !== undefined && repeatsTerminalStatus(from, to)) {
            if (parseRunAction(action).ok) return UNCHANGED;
          }
          return refuseSpent(
            state,
            input.runId,
            planDispatch(state, { runId: input.runId, action }, now),
            isRollback(action),
          );
        },
        { action: '$' },
      );
    },

    resolveApproval: (input: ResolveApprovalInput) =>
      onRun(
        'resolveApproval',
        input,
        undefined,
        [
          checkSize(input.response, '$.response', rt.maxPayloadBytes),
          checkSize(input.memoryUpdates, '$.memoryUpdates', rt.maxPayloadBytes),
        ],
        (state, now) =>
          refuseSpent(
            state,
            input.runId,
            planResolveApproval(
              state,
              {
                runId: input.runId,
                actionId: rt.ids.next(),
                decision: input.decision,
                ...(input.response === undefined ? {} : { response: input.response }),
                ...(input.memoryUpdates === undefined
                  ? {}
                  : { memoryUpdates: input.memoryUpdates }),
              },
              now,
            ),
          ),
        { response: '$.payload.response', memoryUpdates: '$.payload.memory_updates' },
      ),

    cancelRun: (input: CancelRunInput) =>
      onRun('cancelRun', input, undefined, [], (state) => {
        const status = state.runs.get(input.runId)?.status;
        if (status !== undefined && repeatsTerminalStatus(status, 'cancelled')) return UNCHANGED;
        return planCancelRun(state, {
          runId: input.runId,
          ...(input.reason === undefined ? {} : { reason: input.reason }),
          ...(input.rollback === undefined ? {} : { rollback: input.rollback }),
        });
      }),

    recordUsage: (input: RecordUsageInput) =>
      onRun('recordUsage', input, undefined, [], (state) =>
        planRecordUsage(state, {
          runId: input.runId,
          model: input.model,
          inputTokens: input.inputTokens,
          outputTokens: input.outputTokens,
          ...(input.nodeId === undefined ? {} : { nodeId: input.nodeId }),
          ...(input.costUsd === undefined ? {} : { costUsd: input.costUsd }),
        }),
      ),
  };
}

/**
 * The run commands for `tenant` (undefined: the system, every tenant). A tenant sees only the
 * runs of its threads: a run id is unique within a tenant, and another tenant's run is NOT_FOUND
 * like a run that does not exist.
 */
export function createRunCommands(rt: Runtime, tenant?: string) {
  const context = createRunContext(rt, tenant);
  return { ...createRunStarts(context), ...createRunSteps(context) };
}

async function startOn(
  rt: Runtime,
  at: Located,
  claim: IdempotencyClaim | undefined,
  runId: string,
  plan: (state: ThreadState, now: string) => Result<ThreadEvent>,
): Promise<Result<RunResult>> {
  const result = await rt.onThread(at.key, undefined, claim, {
    plan,
    respond: runResult(at.id, runId),
  });
  return answeredAs(result, at);
}
