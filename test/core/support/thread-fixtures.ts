import fc from 'fast-check';
import { canonicalJson } from '../../../src/core/canonical.js';
import { ok, type Result, type WeftError } from '../../../src/core/errors.js';
import {
  type AgentState,
  appendNodes,
  createGraph,
  exportAgentState,
  getNodeBySequence,
  type NodeDraft,
  type NodeKind,
  nodeCount,
} from '../../../src/core/graph/index.js';
import type { JsonObject, JsonValue } from '../../../src/core/json.js';
import type { LogEntry } from '../../../src/core/log/index.js';
import { WORKFLOW_STATUSES, type WorkflowStatus } from '../../../src/core/run/index.js';
import {
  type Committed,
  commitEvent,
  createThreadMachine,
  dueDeadlines,
  getNodeMeta,
  type NodeInput,
  planAppendNodes,
  planCancelRun,
  planCreateThread,
  planDispatch,
  planImportState,
  planRecordUsage,
  planRemember,
  planResolveApproval,
  planStartRun,
  type RememberInput,
  type ResolveApprovalInput,
  type ThreadEffect,
  type ThreadEvent,
  type ThreadState,
} from '../../../src/core/thread/index.js';

/** The clock every thread test starts from; tests move it explicitly. */
export const T0 = Date.parse('2026-03-01T00:00:00.000Z');
export const iso = (ms: number): string => new Date(ms).toISOString();
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** Unwraps a Result, failing the test with the error code and message when it is an error. */
export function must<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** The error of a Result, failing the test when it succeeded. */
export function failure<T>(result: Result<T>): WeftError {
  if (result.ok) throw new Error('expected an error, got a success');
  return result.error;
}

/**
 * Everything observable about a thread state, as plain JSON: the AgentState, per-node metadata
 * (read through getNodeMeta), runs in start order, spend, hash, length, config. Two states with
 * equal summaries answer every reader the same way.
 */
export function summarise(state: ThreadState) {
  const graph = exportAgentState(state.graph);
  return {
    graph,
    nodeMeta: graph.nodes.map((node) => getNodeMeta(state, node.id) ?? null),
    runs: Object.fromEntries(state.runs),
    runOrder: [...state.runOrder],
    spend: state.spend,
    latestSystemNodeId: state.latestSystemNodeId ?? null,
    stateHash: state.stateHash,
    length: state.length,
    config: state.config,
  };
}

/** The summary as canonical JSON text: a snapshot later mutations cannot reach. */
export const fingerprint = (state: ThreadState): string => canonicalJson(summarise(state));

/**
 * A thread driven the way the engine drives it: plan → commit → keep the entry. Keeps every
 * intermediate state (`states[k]` is the state after `k` entries) and the effects of each entry.
 */
export function createSession(start = T0) {
  const machine = createThreadMachine();
  const session = {
    machine,
    state: machine.initial,
    entries: [] as LogEntry[],
    states: [machine.initial] as ThreadState[],
    effects: [] as ThreadEffect[][],
    clock: start,
    now: () => iso(session.clock),
    tick(ms: number) {
      session.clock += ms;
      return session.now();
    },
    /** Commits a planned event at the current clock; a failure of either step fails the test. */
    commit(planned: Result<ThreadEvent>): Committed {
      const committed = must(session.tryCommit(must(planned)));
      return committed;
    },
    /** Commits an event, keeping the entry on success and leaving everything as is on failure. */
    tryCommit(event: ThreadEvent): Result<Committed> {
      const result = commitEvent(session.state, event, {
        id: `e${session.state.length}`,
        recordedAt: session.now(),
      });
      if (result.ok) {
        session.state = result.value.state;
        session.entries.push(result.value.entry);
        session.states.push(result.value.state);
        session.effects.push(result.value.effects);
      }
      return result;
    },
  };
  return session;
}

export type Session = ReturnType<typeof createSession>;

// ─── Generated scenarios ─────────────────────────────────────────────────────────────────────

type Json = JsonValue;

/** One command of a generated scenario; indices pick among what exists when it runs. */
export type Command =
  | { t: 'append'; nodes: AppendSpec[] }
  | { t: 'remember'; type: string; key: string; content: Json; run?: number }
  | { t: 'start'; maxIterations?: number; budgetUsd?: number; maxExecutionTimeMs?: number }
  | { t: 'memory'; run: number; updates: Record<string, Json>; compensation: boolean }
  | { t: 'status'; run: number; status: WorkflowStatus }
  | { t: 'ask'; run: number; timeoutMs?: number }
  | { t: 'resolve'; run: number; decision: string; memoryUpdates?: Record<string, Json> }
  | {
      t: 'usage';
      run: number;
      node?: number;
      model: string;
      tokens: [number, number];
      milli?: number;
    }
  | { t: 'cancel'; run: number; rollback: boolean }
  | { t: 'deadlines' };

interface AppendSpec {
  kind: NodeKind;
  payload: Json;
  parents?: number[];
  resourceKey?: string;
  advance?: boolean;
  run?: number;
  tainted: boolean;
  usage?: [number, number];
}

export interface Scenario {
  setup: { kind: 'create'; dynamic: boolean } | { kind: 'import'; nodes: number };
  /** Start a run right after creation, so run commands have a target from the first step. */
  startsWithRun: boolean;
  steps: Array<{ ms: number; command: Command }>;
}

const smallJson: fc.Arbitrary<Json> = fc.oneof(
  fc.integer({ min: 0, max: 3 }),
  fc.constantFrom('x', 'y', null, true),
  fc.record({ n: fc.integer({ min: 0, max: 2 }) }),
  fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }),
);
const runPick = fc.nat({ max: 7 });

const appendSpec: fc.Arbitrary<AppendSpec> = fc.record(
  {
    kind: fc.constantFrom<NodeKind>('system', 'inference', 'tool_call', 'tool_result', 'answer'),
    payload: smallJson,
    parents: fc.array(fc.nat({ max: 40 }), { maxLength: 3 }),
    resourceKey: fc.constantFrom('file:a', 'file:b'),
    advance: fc.boolean(),
    run: runPick,
    tainted: fc.boolean(),
    usage: fc.tuple(fc.nat({ max: 2000 }), fc.nat({ max: 2000 })),
  },
  { requiredKeys: ['kind', 'payload', 'tainted'] },
);

const memoryUpdates = fc.dictionary(
  fc.constantFrom('a', 'b', 'Notes', '_reserved'),
  fc.integer({ min: 0, max: 3 }),
  { maxKeys: 3 },
);

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('append'),
      nodes: fc.array(appendSpec, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        t: fc.constant('remember'),
        type: fc.constantFrom('memory', ' Preference ', 'wisdom', 'recipe'),
        key: fc.constantFrom('a', 'B', 'c d'),
        content: smallJson,
        run: runPick,
      },
      { requiredKeys: ['t', 'type', 'key', 'content'] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        t: fc.constant('start'),
        maxIterations: fc.integer({ min: 1, max: 4 }),
        budgetUsd: fc.constantFrom(0.05, 5),
        maxExecutionTimeMs: fc.constantFrom(60_000, 3 * DAY),
      },
      { requiredKeys: ['t'] },
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('memory'),
      run: runPick,
      updates: memoryUpdates,
      compensation: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('status'),
      run: runPick,
      status: fc.constantFrom(...WORKFLOW_STATUSES),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      { t: fc.constant('ask'), run: runPick, timeoutMs: fc.constantFrom(1000, HOUR) },
      { requiredKeys: ['t', 'run'] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        t: fc.constant('resolve'),
        run: runPick,
        decision: fc.constantFrom('approve', 'reject'),
        memoryUpdates: memoryUpdates,
      },
      { requiredKeys: ['t', 'run', 'decision'] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        t: fc.constant('usage'),
        run: runPick,
        node: fc.nat({ max: 40 }),
        model: fc.constantFrom('gpt-4o', 'custom'),
        tokens: fc.tuple(fc.nat({ max: 5000 }), fc.nat({ max: 5000 })),
        milli: fc.nat({ max: 20 }),
      },
      { requiredKeys: ['t', 'run', 'model', 'tokens'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('cancel'), run: runPick, rollback: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'deadlines' as const }) },
);

export const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  setup: fc.oneof(
    fc.record({ kind: fc.constant('create' as const), dynamic: fc.boolean() }),
    fc.record({ kind: fc.constant('import' as const), nodes: fc.integer({ min: 1, max: 3 }) }),
  ),
  startsWithRun: fc.boolean(),
  steps: fc.array(
    fc.record({
      // Mostly small steps; now and then a jump of up to two days, so deadlines come due.
      ms: fc.oneof(
        { weight: 4, arbitrary: fc.nat({ max: 120_000 }) },
        { weight: 1, arbitrary: fc.nat({ max: 2 * DAY }) },
      ),
      command: commandArb,
    }),
    { minLength: 4, maxLength: 30, size: 'max' },
  ),
});

/** A small valid AgentState: a system node followed by inference nodes. */
export function sampleAgentState(nodes: number): AgentState {
  const drafts: NodeDraft[] = [{ kind: 'system', payload: { prompt: 'imported' } }];
  for (let i = 1; i < nodes; i++) drafts.push({ kind: 'inference', payload: { step: i } });
  const appended = must(appendNodes(must(createGraph()), drafts, iso(T0 - DAY)));
  return JSON.parse(JSON.stringify(exportAgentState(appended.graph))) as AgentState;
}

export interface PlayedScenario {
  session: Session;
  /** `snapshots[k]`: fingerprint of the state after `k` entries, taken when it was reached. */
  snapshots: string[];
  /** Error codes of the commands refused by planning or commit, in order. */
  refusedCodes: string[];
}

/**
 * Plays a scenario through plan → commit. A refused command must leave the state exactly as it
 * was (checked here, by fingerprint, for every refusal); it then simply adds no entry.
 */
export function playScenario(scenario: Scenario): PlayedScenario {
  const s = createSession();
  const snapshots = [fingerprint(s.state)];
  const refusedCodes: string[] = [];
  const attempt = (planned: Result<ThreadEvent>) => {
    const before = fingerprint(s.state);
    const result = planned.ok ? s.tryCommit(planned.value) : planned;
    if (result.ok) {
      snapshots.push(fingerprint(s.state));
      return;
    }
    refusedCodes.push(result.error.code);
    const after = fingerprint(s.state);
    if (after !== before) {
      throw new Error(`refused command (${result.error.code}) changed the state`);
    }
  };
  if (scenario.setup.kind === 'create') {
    attempt(planCreateThread('t1', { allowDynamicNodeTypes: scenario.setup.dynamic }));
  } else {
    attempt(planImportState('t1', sampleAgentState(scenario.setup.nodes), {}));
  }
  const steps = scenario.startsWithRun
    ? [{ ms: 0, command: { t: 'start' } as Command }, ...scenario.steps]
    : scenario.steps;
  for (const { ms, command } of steps) {
    s.tick(ms);
    if (command.t === 'deadlines') {
      for (const due of dueDeadlines(s.state, s.now())) attempt(ok(due));
    } else {
      attempt(planCommand(s, command));
    }
  }
  return { session: s, snapshots, refusedCodes };
}

function planCommand(s: Session, command: Exclude<Command, { t: 'deadlines' }>) {
  const { state } = s;
  const now = s.now();
  const run = (i: number) =>
    state.runOrder.length === 0 ? 'ghost' : state.runOrder[i % state.runOrder.length]!;
  const node = (i: number) => {
    const count = nodeCount(state.graph);
    return count === 0 ? undefined : getNodeBySequence(state.graph, (i % count) + 1)!.id;
  };
  switch (command.t) {
    case 'append':
      return planAppendNodes(
        state,
        command.nodes.map((spec) => {
          const input: NodeInput = { kind: spec.kind, payload: spec.payload };
          if (spec.parents !== undefined) {
            input.parents = spec.parents.flatMap((i) => node(i) ?? []);
          }
          if (spec.resourceKey !== undefined) input.resourceKey = spec.resourceKey;
          if (spec.advance !== undefined) input.advance = spec.advance;
          if (spec.run !== undefined && state.runOrder.length > 0) input.runId = run(spec.run);
          if (spec.tainted) input.taint = { source: 'mcp_tool', toolName: 'fetch' };
          if (spec.usage !== undefined) {
            input.usage = {
              model: 'gpt-4o',
              inputTokens: spec.usage[0],
              outputTokens: spec.usage[1],
            };
          }
          return input;
        }),
        now,
      );
    case 'remember': {
      const input: RememberInput = {
        type: command.type,
        key: command.key,
        content: command.content,
      };
      if (command.run !== undefined && state.runOrder.length > 0) input.runId = run(command.run);
      return planRemember(state, input, now);
    }
    case 'start': {
      const { t: _t, ...options } = command;
      return planStartRun(
        state,
        { runId: `r${state.runOrder.length + 1}`, goal: 'g', ...options },
        now,
      );
    }
    case 'memory': {
      const action: JsonObject = {
        id: `act-${state.length}`,
        type: 'update_memory',
        payload: { updates: command.updates },
      };
      if (command.compensation)
        action.compensation = { type: 'undo', payload: { at: state.length } };
      return planDispatch(state, { runId: run(command.run), action }, now);
    }
    case 'status':
      return planDispatch(
        state,
        {
          runId: run(command.run),
          action: {
            id: `act-${state.length}`,
            type: 'set_status',
            payload: { status: command.status },
          },
        },
        now,
      );
    case 'ask': {
      const payload: JsonObject = { pending_approval: { at: state.length } };
      if (command.timeoutMs !== undefined) payload.timeout_ms = command.timeoutMs;
      return planDispatch(
        state,
        {
          runId: run(command.run),
          action: { id: `act-${state.length}`, type: 'request_human_input', payload },
        },
        now,
      );
    }
    case 'resolve': {
      const input: ResolveApprovalInput = {
        runId: run(command.run),
        actionId: `act-${state.length}`,
        decision: command.decision,
      };
      if (command.memoryUpdates !== undefined) input.memoryUpdates = command.memoryUpdates;
      return planResolveApproval(state, input, now);
    }
    case 'usage': {
      const nodeId = command.node === undefined ? undefined : node(command.node);
      return planRecordUsage(state, {
        runId: run(command.run),
        model: command.model,
        inputTokens: command.tokens[0],
        outputTokens: command.tokens[1],
        ...(nodeId === undefined ? {} : { nodeId }),
        ...(command.milli === undefined ? {} : { costUsd: command.milli / 1000 }),
      });
    }
    case 'cancel':
      return planCancelRun(state, { runId: run(command.run), rollback: command.rollback });
  }
}
