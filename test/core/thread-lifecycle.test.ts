import { describe, expect, it } from 'vitest';
import {
  appendNodes,
  createGraph,
  DEFAULT_NODE_TYPES,
  exportAgentState,
  getFrontier,
  getNode,
  getResourceHead,
  nodeCount,
} from '../../src/core/graph/index.js';
import { forkLog, GENESIS_STATE_HASH, replay, verifyLog } from '../../src/core/log/index.js';
import { createWorkflowState, DEFAULT_APPROVAL_TIMEOUT_MS } from '../../src/core/run/index.js';
import {
  commitEvent,
  dueDeadlines,
  getNodeMeta,
  type NodesAppendedEvent,
  planAppendNodes,
  planCancelRun,
  planCreateThread,
  planDispatch,
  planImportState,
  planImportWorkflowState,
  planRecordUsage,
  planRemember,
  planResolveApproval,
  planStartRun,
  type RunActionDispatchedEvent,
  type ThreadEffect,
} from '../../src/core/thread/index.js';
import {
  createSession,
  DAY,
  failure,
  fingerprint,
  HOUR,
  iso,
  must,
  type Session,
  summarise,
  T0,
} from './support/thread-fixtures.js';

const appendOne = (s: Session, input: Parameters<typeof planAppendNodes>[1][number]) => {
  const { entry } = s.commit(planAppendNodes(s.state, [input], s.now()));
  const id = (entry.event as unknown as NodesAppendedEvent).nodes[0]!.id;
  return id;
};

function threadWithRun(options: { maxExecutionTimeMs?: number } = {}) {
  const s = createSession();
  s.commit(planCreateThread('t1', {}));
  const system = appendOne(s, { kind: 'system', payload: { prompt: 'be brief' } });
  s.tick(1000);
  s.commit(planStartRun(s.state, { runId: 'r1', goal: 'write a haiku', ...options }, s.now()));
  return { s, system };
}

const dispatch = (s: Session, runId: string, action: Record<string, unknown>) =>
  s.commit(planDispatch(s.state, { runId, action: action as never }, s.now()));

const ofType = <T extends ThreadEffect['type']>(effects: ThreadEffect[], type: T) =>
  effects.filter((e): e is Extract<ThreadEffect, { type: T }> => e.type === type);

describe('planCreateThread', () => {
  it('records thread_created with the resolved vocabulary and makes it the config', () => {
    const s = createSession();
    const event = must(planCreateThread('t1', { metadata: { team: 'a' } }));
    expect(event).toEqual({
      type: 'thread_created',
      threadId: 't1',
      metadata: { team: 'a' },
      nodeTypes: DEFAULT_NODE_TYPES,
      allowDynamicNodeTypes: false,
    });
    const { entry, state, effects } = must(
      commitEvent(s.state, event, { id: 'e0', recordedAt: s.now() }),
    );
    expect(effects).toEqual([{ type: 'thread_created', threadId: 't1' }]);
    expect(state.config).toEqual({
      threadId: 't1',
      createdAt: iso(T0),
      metadata: { team: 'a' },
      nodeTypes: DEFAULT_NODE_TYPES,
      allowDynamicNodeTypes: false,
    });
    expect(state.length).toBe(1);
    expect(entry).toMatchObject({ index: 0, id: 'e0', recordedAt: iso(T0), event });
    expect(entry.verification?.stateHash).toBe(state.stateHash);
    expect(state.stateHash).not.toBe(GENESIS_STATE_HASH);
    expect(verifyLog(s.machine, [entry], { strict: true })).toEqual({
      ok: true,
      checkedEntries: 1,
    });
  });
});

describe('planAppendNodes', () => {
  it('defaults parents to the frontier and advances it to the new node', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const a = appendOne(s, { kind: 'system', payload: 'sys' });
    const b = appendOne(s, { kind: 'inference', payload: { text: 'hi' } });
    expect(getNode(s.state.graph, a)?.parents).toEqual([]);
    expect(getNode(s.state.graph, b)?.parents).toEqual([a]);
    expect(getFrontier(s.state.graph)).toEqual([b]);
    expect(getNodeMeta(s.state, b)).toEqual({ logIndex: 2 });
    expect(s.effects[2]).toEqual([
      { type: 'node_appended', node: getNode(s.state.graph, b), meta: { logIndex: 2 } },
    ]);
  });

  it('takes explicit parents as given, sorted, and leaves other heads in the frontier', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const a = appendOne(s, { kind: 'system', payload: 'sys' });
    const b = appendOne(s, { kind: 'inference', payload: 1 });
    const c = appendOne(s, { kind: 'tool_call', payload: 2, parents: [b, a] });
    expect(getNode(s.state.graph, c)?.parents).toEqual([a, b].sort());
    const d = appendOne(s, { kind: 'answer', payload: 3, parents: [a] });
    expect(getNode(s.state.graph, d)?.parents).toEqual([a]);
    expect(getFrontier(s.state.graph)).toEqual([c, d]);
  });

  it('adds the previous head of a resource key as a parent', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const a = appendOne(s, { kind: 'system', payload: 'sys' });
    const v1 = appendOne(s, {
      kind: 'resource',
      payload: 'v1',
      resourceKey: 'file:x',
      parents: [],
    });
    const b = appendOne(s, { kind: 'inference', payload: 'b', parents: [a] });
    const v2 = appendOne(s, {
      kind: 'resource',
      payload: 'v2',
      resourceKey: 'file:x',
      parents: [b],
    });
    expect(getNode(s.state.graph, v2)?.parents).toEqual([b, v1].sort());
    expect(getResourceHead(s.state.graph, 'file:x')?.id).toBe(v2);
    // v1 was a head; as v2's parent it leaves the frontier.
    expect(getFrontier(s.state.graph)).not.toContain(v1);
    expect(getFrontier(s.state.graph)).toContain(v2);
  });

  it('re-appending identical content creates no node and announces nothing', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const a = appendOne(s, { kind: 'system', payload: 'sys' });
    const b = appendOne(s, { kind: 'inference', payload: { n: 1 }, parents: [a] });
    const before = summarise(s.state);
    const { entry, effects, state } = s.commit(
      planAppendNodes(s.state, [{ kind: 'inference', payload: { n: 1 }, parents: [a] }], s.now()),
    );
    expect((entry.event as unknown as NodesAppendedEvent).nodes.map((n) => n.id)).toEqual([b]);
    expect(ofType(effects, 'node_appended')).toEqual([]);
    expect(nodeCount(state.graph)).toBe(2);
    expect(exportAgentState(state.graph)).toEqual(before.graph);
    expect(getNodeMeta(state, b)).toEqual({ logIndex: 2 });
    expect(state.length).toBe(before.length + 1);
  });

  it('with advance: false leaves the frontier as it was', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const a = appendOne(s, { kind: 'system', payload: 'sys' });
    const side = appendOne(s, { kind: 'verification', payload: 'aside', advance: false });
    expect(getNode(s.state.graph, side)?.parents).toEqual([a]);
    expect(getFrontier(s.state.graph)).toEqual([a]);
  });
});

describe('planRemember', () => {
  it('appends a normalised semantic node that stays out of the frontier', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const a = appendOne(s, { kind: 'system', payload: 'sys' });
    const { entry } = s.commit(
      planRemember(s.state, { type: ' Preference ', key: 'User Name!', content: 'Ada' }, s.now()),
    );
    const node = (entry.event as unknown as NodesAppendedEvent).nodes[0]!;
    expect(node).toMatchObject({
      kind: 'semantic',
      payload: { type: 'preference', key: 'user-name', content: 'Ada' },
      resourceKey: 'semantic:preference:user-name',
      parents: [a],
    });
    expect(getFrontier(s.state.graph)).toEqual([a]);
    const again = s.commit(
      planRemember(s.state, { type: 'preference', key: 'user name', content: 'Grace' }, s.now()),
    );
    const second = (again.entry.event as unknown as NodesAppendedEvent).nodes[0]!;
    expect(second.parents).toEqual([a, node.id].sort());
    expect(getResourceHead(s.state.graph, 'semantic:preference:user-name')?.id).toBe(second.id);
    expect(getFrontier(s.state.graph)).toEqual([a]);
  });

  it('refuses a type outside the vocabulary unless dynamic types are allowed', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const refused = failure(
      planRemember(s.state, { type: 'recipe', key: 'k', content: 1 }, s.now()),
    );
    expect(refused).toMatchObject({ code: 'SEMANTIC_TYPE_NOT_ALLOWED', type: 'recipe' });

    const open = createSession();
    open.commit(planCreateThread('t2', { allowDynamicNodeTypes: true }));
    open.commit(planRemember(open.state, { type: 'recipe', key: 'k', content: 1 }, open.now()));
    expect(getResourceHead(open.state.graph, 'semantic:recipe:k')?.payload).toEqual({
      type: 'recipe',
      key: 'k',
      content: 1,
    });
  });
});

describe('planStartRun', () => {
  it('anchors the goal node in the latest system node and the frontier and starts the run', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const sys = appendOne(s, { kind: 'system', payload: 'sys' });
    const x = appendOne(s, { kind: 'inference', payload: 'x' });
    const y = appendOne(s, { kind: 'inference', payload: 'y', parents: [] });
    expect(getFrontier(s.state.graph)).toEqual([x, y]);
    s.tick(5000);
    const { entry, state, effects } = s.commit(
      planStartRun(s.state, { runId: 'r1', goal: 'g', constraints: ['short'] }, s.now()),
    );
    const goal = (entry.event as { goalNode?: { id: string } }).goalNode!.id;
    const node = getNode(state.graph, goal)!;
    expect(node.kind).toBe('goal');
    expect(node.parents).toEqual([sys, x, y].sort());
    expect(node.payload).toEqual({ goal: 'g', runId: 'r1', constraints: ['short'] });
    expect(getFrontier(state.graph)).toEqual([goal]);
    expect(getNodeMeta(state, goal)).toEqual({ logIndex: 4, runId: 'r1' });
    const run = state.runs.get('r1')!;
    expect(run).toMatchObject({ status: 'running', goal: 'g', started_at: s.now() });
    expect(state.runOrder).toEqual(['r1']);
    expect(effects.map((e) => e.type)).toEqual([
      'run_started',
      'run_status_changed',
      'run_status_changed',
      'node_appended',
    ]);
    expect(ofType(effects, 'run_status_changed')).toEqual([
      { type: 'run_status_changed', runId: 'r1', from: 'pending', to: 'scheduled' },
      { type: 'run_status_changed', runId: 'r1', from: 'scheduled', to: 'running' },
    ]);
  });

  it('refuses a second run with the same id', () => {
    const { s } = threadWithRun();
    expect(failure(planStartRun(s.state, { runId: 'r1', goal: 'again' }, s.now())).code).toBe(
      'VALIDATION_FAILED',
    );
  });
});

describe('planDispatch update_memory', () => {
  it('keeps run memory without mirroring it when the vocabulary has no memory type', () => {
    const s = createSession();
    s.commit(
      planCreateThread('t1', { nodeTypes: [{ name: 'artifact', description: 'Outputs.' }] }),
    );
    s.commit(planStartRun(s.state, { runId: 'r1', goal: 'write a haiku' }, s.now()));
    const nodes = nodeCount(s.state.graph);
    const { entry } = dispatch(s, 'r1', {
      id: 'a1',
      type: 'update_memory',
      payload: { updates: { a: 1 } },
    });
    expect((entry.event as unknown as RunActionDispatchedEvent).memoryNodes).toEqual([]);
    expect(s.state.runs.get('r1')!.memory).toEqual({ a: 1 });
    expect(nodeCount(s.state.graph)).toBe(nodes);
  });

  it('updates run memory and mirrors only the changed keys as semantic memory nodes', () => {
    const { s } = threadWithRun();
    const frontier = getFrontier(s.state.graph);
    const first = dispatch(s, 'r1', {
      id: 'a1',
      type: 'update_memory',
      payload: { updates: { a: 1, b: 2 } },
    });
    const firstNodes = (first.entry.event as unknown as RunActionDispatchedEvent).memoryNodes;
    expect(firstNodes.map((n) => n.resourceKey)).toEqual([
      'semantic:memory:a',
      'semantic:memory:b',
    ]);
    const second = dispatch(s, 'r1', {
      id: 'a2',
      type: 'update_memory',
      payload: { updates: { a: 1, b: 3, c: { deep: true } } },
    });
    const secondNodes = (second.entry.event as unknown as RunActionDispatchedEvent).memoryNodes;
    expect(secondNodes.map((n) => n.resourceKey)).toEqual([
      'semantic:memory:b',
      'semantic:memory:c',
    ]);
    expect(s.state.runs.get('r1')!.memory).toEqual({ a: 1, b: 3, c: { deep: true } });

    const head = (key: string) => getResourceHead(s.state.graph, `semantic:memory:${key}`)!;
    expect(head('a').payload).toEqual({ type: 'memory', key: 'a', content: 1 });
    expect(head('b').payload).toEqual({ type: 'memory', key: 'b', content: 3 });
    expect(head('c').payload).toEqual({ type: 'memory', key: 'c', content: { deep: true } });
    expect(head('b').parents).toContain(firstNodes[1]!.id);
    for (const key of ['a', 'b', 'c']) {
      expect(getNodeMeta(s.state, head(key).id)).toMatchObject({ runId: 'r1' });
    }
    expect(ofType(second.effects, 'node_appended').map((e) => e.node.id)).toEqual(
      secondNodes.map((n) => n.id),
    );
    expect(getFrontier(s.state.graph)).toEqual(frontier);
  });
});

describe('human approval', () => {
  it('request_human_input announces an approval with the 24 h default timeout', () => {
    const { s } = threadWithRun();
    s.tick(60_000);
    const { effects, state } = dispatch(s, 'r1', {
      id: 'ask',
      type: 'request_human_input',
      payload: { pending_approval: { draft: 'old pond' } },
    });
    const timeoutAt = iso(s.clock + DEFAULT_APPROVAL_TIMEOUT_MS);
    expect(DEFAULT_APPROVAL_TIMEOUT_MS).toBe(DAY);
    expect(ofType(effects, 'approval_requested')).toEqual([
      {
        type: 'approval_requested',
        runId: 'r1',
        waitingFor: 'human_approval',
        pendingApproval: { draft: 'old pond' },
        timeoutAt,
      },
    ]);
    expect(state.runs.get('r1')).toMatchObject({
      status: 'waiting',
      waiting_timeout_at: timeoutAt,
    });
    expect(ofType(effects, 'run_status_changed')).toEqual([
      { type: 'run_status_changed', runId: 'r1', from: 'running', to: 'waiting' },
    ]);

    s.tick(HOUR);
    const resolved = s.commit(
      planResolveApproval(s.state, { runId: 'r1', actionId: 'ok', decision: 'approve' }, s.now()),
    );
    const run = resolved.state.runs.get('r1')!;
    expect(run.status).toBe('running');
    expect(run.memory.human_decision).toBe('approve');
    expect(run.waiting_timeout_at).toBeUndefined();
    expect(ofType(resolved.effects, 'run_status_changed')).toEqual([
      { type: 'run_status_changed', runId: 'r1', from: 'waiting', to: 'running' },
    ]);
  });

  it('planResolveApproval refuses a run that is not waiting', () => {
    const { s } = threadWithRun();
    expect(
      failure(
        planResolveApproval(s.state, { runId: 'r1', actionId: 'x', decision: 'approve' }, s.now()),
      ),
    ).toMatchObject({ code: 'INVALID_TRANSITION', from: 'running', to: 'running' });
  });

  it('dispatching resume_from_human mirrors the memory it writes', () => {
    const { s } = threadWithRun();
    dispatch(s, 'r1', { id: 'ask', type: 'request_human_input', payload: {} });
    dispatch(s, 'r1', { id: 'ok', type: 'resume_from_human', payload: { decision: 'approve' } });
    expect(getResourceHead(s.state.graph, 'semantic:memory:human_decision')?.payload).toEqual({
      type: 'memory',
      key: 'human_decision',
      content: 'approve',
    });
  });

  // Memory written by a run is also a semantic node (semantic:memory:<key>).
  // Dispatching resume_from_human mirrors its memory writes; resolving an approval — the same
  // action through the resolveApproval command — must too.
  it('memory written by resolving an approval is mirrored as semantic memory nodes', () => {
    const { s } = threadWithRun();
    dispatch(s, 'r1', { id: 'ask', type: 'request_human_input', payload: {} });
    s.commit(
      planResolveApproval(
        s.state,
        {
          runId: 'r1',
          actionId: 'ok',
          decision: 'approve',
          response: 'looks good',
          memoryUpdates: { tone: 'calm' },
        },
        s.now(),
      ),
    );
    const run = s.state.runs.get('r1')!;
    expect(run.memory).toMatchObject({
      human_decision: 'approve',
      human_response: 'looks good',
      tone: 'calm',
    });
    for (const key of ['human_decision', 'human_response', 'tone']) {
      const head = getResourceHead(s.state.graph, `semantic:memory:${key}`);
      expect(head?.payload, `semantic:memory:${key}`).toEqual({
        type: 'memory',
        key,
        content: run.memory[key],
      });
    }
  });
});

describe('usage', () => {
  it('planRecordUsage charges the run and the thread spend', () => {
    const { s } = threadWithRun();
    const { state, effects } = s.commit(
      planRecordUsage(s.state, {
        runId: 'r1',
        model: 'gpt-4o',
        inputTokens: 1000,
        outputTokens: 500,
      }),
    );
    const run = state.runs.get('r1')!;
    // gpt-4o: 2.5 $/Mtok in, 10 $/Mtok out.
    const usd = (1000 * 2.5 + 500 * 10) / 1e6;
    expect(run).toMatchObject({
      total_input_tokens: 1000,
      total_output_tokens: 500,
      total_tokens_used: 1500,
      total_cost_usd: usd,
    });
    expect(run.model_breakdown['gpt-4o']).toEqual({
      input_tokens: 1000,
      output_tokens: 500,
      cost_usd: usd,
      calls: 1,
    });
    expect(state.spend).toEqual({ inputTokens: 1000, outputTokens: 500, costUsd: usd, calls: 1 });
    expect(ofType(effects, 'run_event').map((e) => e.event.type)).toContain('usage_recorded');

    const more = s.commit(
      planRecordUsage(s.state, {
        runId: 'r1',
        model: 'custom',
        inputTokens: 10,
        outputTokens: 20,
        costUsd: 0.5,
      }),
    );
    expect(more.state.spend).toEqual({
      inputTokens: 1010,
      outputTokens: 520,
      costUsd: usd + 0.5,
      calls: 2,
    });
  });

  it('usage reported on a node is charged to the run by node', () => {
    const { s } = threadWithRun();
    const id = appendOne(s, {
      kind: 'inference',
      payload: { text: 'old pond' },
      runId: 'r1',
      usage: { model: 'm', inputTokens: 10, outputTokens: 5, costUsd: 0.002 },
    });
    const run = s.state.runs.get('r1')!;
    expect(run.node_breakdown[id]).toEqual({
      input_tokens: 10,
      output_tokens: 5,
      cost_usd: 0.002,
      calls: 1,
    });
    expect(run.total_cost_usd).toBe(0.002);
    expect(getNodeMeta(s.state, id)).toEqual({
      logIndex: 3,
      runId: 'r1',
      usage: { model: 'm', inputTokens: 10, outputTokens: 5, costUsd: 0.002 },
    });
    expect(s.state.spend).toEqual({ inputTokens: 10, outputTokens: 5, costUsd: 0.002, calls: 1 });

    s.commit(
      planRecordUsage(s.state, {
        runId: 'r1',
        nodeId: id,
        model: 'm',
        inputTokens: 1,
        outputTokens: 1,
      }),
    );
    expect(s.state.runs.get('r1')!.node_breakdown[id]).toMatchObject({
      calls: 2,
      input_tokens: 11,
    });
  });
});

describe('planCancelRun', () => {
  it('drains the compensation stack LIFO into compensation_popped events', () => {
    const { s } = threadWithRun();
    for (const id of ['book-flight', 'book-hotel', 'charge-card']) {
      dispatch(s, 'r1', {
        id,
        type: 'update_memory',
        payload: { updates: { [id]: true } },
        compensation: { type: `undo-${id}`, payload: { ref: id } },
      });
    }
    expect(s.state.runs.get('r1')!.compensation_stack).toHaveLength(3);
    const { state, effects } = s.commit(
      planCancelRun(s.state, { runId: 'r1', reason: 'user aborted', rollback: true }),
    );
    const popped = ofType(effects, 'run_event').filter(
      (e) => e.event.type === 'compensation_popped',
    );
    expect(popped.map((e) => e.event)).toEqual(
      ['charge-card', 'book-hotel', 'book-flight'].map((id) => ({
        type: 'compensation_popped',
        entry: { action_id: id, compensation_action: { type: `undo-${id}`, payload: { ref: id } } },
        rollback: true,
      })),
    );
    expect(state.runs.get('r1')).toMatchObject({ status: 'cancelled', compensation_stack: [] });
    expect(ofType(effects, 'run_status_changed')).toEqual([
      { type: 'run_status_changed', runId: 'r1', from: 'running', to: 'cancelled' },
    ]);
  });

  it('without rollback keeps the stack and pops nothing', () => {
    const { s } = threadWithRun();
    dispatch(s, 'r1', {
      id: 'a',
      type: 'update_memory',
      payload: { updates: { a: 1 } },
      compensation: { type: 'undo', payload: {} },
    });
    const { state, effects } = s.commit(planCancelRun(s.state, { runId: 'r1', rollback: false }));
    expect(
      ofType(effects, 'run_event').filter((e) => e.event.type === 'compensation_popped'),
    ).toEqual([]);
    expect(state.runs.get('r1')!.compensation_stack).toHaveLength(1);
  });
});

describe('deadlines', () => {
  it('an approval deadline is due only once it has passed, and firing it times the run out', () => {
    const { s } = threadWithRun({ maxExecutionTimeMs: 30 * DAY });
    dispatch(s, 'r1', { id: 'ask', type: 'request_human_input', payload: {} });
    const dueAt = iso(s.clock + DAY);
    expect(dueDeadlines(s.state, iso(s.clock + DAY - 1))).toEqual([]);
    expect(dueDeadlines(s.state, iso(s.clock + DAY))).toEqual([
      { type: 'deadline_fired', runId: 'r1', deadline: 'approval', dueAt },
    ]);
    s.tick(DAY + 5);
    const [due] = dueDeadlines(s.state, s.now());
    const { state, effects } = must(s.tryCommit(due!));
    expect(state.runs.get('r1')!.status).toBe('timeout');
    expect(ofType(effects, 'run_status_changed')).toEqual([
      { type: 'run_status_changed', runId: 'r1', from: 'waiting', to: 'timeout' },
    ]);
    expect(dueDeadlines(state, iso(s.clock + 100 * DAY))).toEqual([]);
  });

  it('a deadline that lost the race with a resolution is rejected and changes nothing', () => {
    const { s } = threadWithRun({ maxExecutionTimeMs: 30 * DAY });
    dispatch(s, 'r1', { id: 'ask', type: 'request_human_input', payload: {} });
    const [stale] = dueDeadlines(s.state, iso(s.clock + 2 * DAY));
    expect(stale).toBeDefined();
    s.tick(HOUR);
    s.commit(
      planResolveApproval(s.state, { runId: 'r1', actionId: 'ok', decision: 'approve' }, s.now()),
    );
    s.tick(2 * DAY);
    const before = fingerprint(s.state);
    const refused = failure(s.tryCommit(stale!));
    expect(refused).toMatchObject({ code: 'INVALID_ACTION', runId: 'r1' });
    expect(fingerprint(s.state)).toBe(before);
  });

  it('a deadline recorded before it is due is rejected', () => {
    const { s } = threadWithRun({ maxExecutionTimeMs: 30 * DAY });
    dispatch(s, 'r1', { id: 'ask', type: 'request_human_input', payload: {} });
    const [due] = dueDeadlines(s.state, iso(s.clock + DAY));
    s.tick(HOUR);
    expect(failure(s.tryCommit(due!)).code).toBe('INVALID_ACTION');
    expect(s.state.runs.get('r1')!.status).toBe('waiting');
  });

  it('the execution deadline fires max_execution_time_ms after the start', () => {
    const { s } = threadWithRun({ maxExecutionTimeMs: 1000 });
    const started = Date.parse(s.state.runs.get('r1')!.started_at!);
    expect(dueDeadlines(s.state, iso(started + 999))).toEqual([]);
    s.tick(1000);
    expect(dueDeadlines(s.state, s.now())).toEqual([
      { type: 'deadline_fired', runId: 'r1', deadline: 'execution', dueAt: iso(started + 1000) },
    ]);
    must(s.tryCommit(dueDeadlines(s.state, s.now())[0]!));
    expect(s.state.runs.get('r1')!.status).toBe('timeout');
  });
});

describe('planImportWorkflowState', () => {
  const external = () =>
    createWorkflowState(
      { workflowId: 'wf', goal: 'imported', memory: { k: 'v' } },
      { runId: 'ext-1', now: iso(T0 - DAY) },
    );

  it('adds the run as it was exported', () => {
    const s = createSession();
    s.commit(planCreateThread('t1', {}));
    const raw = JSON.parse(JSON.stringify(external()));
    const { state, effects } = s.commit(planImportWorkflowState(s.state, raw));
    expect(state.runs.get('ext-1')).toEqual(external());
    expect(state.runOrder).toEqual(['ext-1']);
    expect(effects).toContainEqual({ type: 'run_started', runId: 'ext-1' });
    const again = failure(planImportWorkflowState(state, raw));
    expect(again.code).toBe('VALIDATION_FAILED');
  });

  it('refuses an id that a started run already has, at planning and at commit', () => {
    const { s } = threadWithRun();
    const raw = { ...JSON.parse(JSON.stringify(external())), run_id: 'r1' };
    expect(failure(planImportWorkflowState(s.state, raw)).code).toBe('VALIDATION_FAILED');
    const before = fingerprint(s.state);
    const forced = s.tryCommit({ type: 'workflow_state_imported', runId: 'r1', state: raw });
    expect(forced.ok).toBe(false);
    expect(fingerprint(s.state)).toBe(before);
  });
});

describe('planImportState', () => {
  const agentState = () => {
    const graph = must(createGraph());
    const appended = must(
      appendNodes(
        graph,
        [
          { kind: 'system', payload: { prompt: 'p' } },
          { kind: 'inference', payload: { text: 't' } },
        ],
        iso(T0 - DAY),
      ),
    );
    return JSON.parse(JSON.stringify(exportAgentState(appended.graph)));
  };

  it('imports a valid AgentState as the first entry', () => {
    const s = createSession();
    const input = agentState();
    const { state, effects } = s.commit(
      planImportState('t9', input, { metadata: { from: 'sdk' } }),
    );
    expect(exportAgentState(state.graph)).toEqual(input);
    expect(state.config).toMatchObject({ threadId: 't9', metadata: { from: 'sdk' } });
    expect(state.latestSystemNodeId).toBe(input.nodes[0].id);
    expect(effects.map((e) => e.type)).toEqual([
      'thread_created',
      'node_appended',
      'node_appended',
    ]);
    for (const node of input.nodes) expect(getNodeMeta(state, node.id)).toEqual({ logIndex: 0 });
    expect(verifyLog(s.machine, s.entries, { strict: true }).ok).toBe(true);

    s.commit(planStartRun(s.state, { runId: 'r1', goal: 'g' }, s.now()));
    const goal = getFrontier(s.state.graph)[0]!;
    expect(getNode(s.state.graph, goal)?.parents).toEqual(
      [...input.frontier, input.nodes[0].id].sort(),
    );
  });

  it('rejects an invalid AgentState with its import rule code, at planning and at commit', () => {
    const s = createSession();
    const tampered = agentState();
    tampered.nodes[1].payload = { text: 'edited' };
    const error = failure(planImportState('t9', tampered, {}));
    expect(error).toMatchObject({ code: 'NODE_ID_MISMATCH', nodeId: tampered.nodes[1].id });
    const forced = failure(
      s.tryCommit({
        type: 'state_imported',
        threadId: 't9',
        metadata: null,
        nodeTypes: [...DEFAULT_NODE_TYPES],
        allowDynamicNodeTypes: false,
        state: tampered,
      }),
    );
    expect(forced.code).toBe('NODE_ID_MISMATCH');
    expect(s.state).toBe(s.machine.initial);
    expect(failure(planImportState('t9', { ...agentState(), version: 2 }, {})).code).toBe(
      'STATE_VERSION_UNSUPPORTED',
    );
  });
});

describe('thread_forked', () => {
  it('replaying a fork prefix then recording the fork sets config.forkedFrom', () => {
    const { s } = threadWithRun();
    const prefix = must(forkLog(s.entries, 2));
    const base = must(replay(s.machine, prefix, { verify: 'strict' })).state;
    const { state } = must(
      commitEvent(
        base,
        { type: 'thread_forked', threadId: 't2', fromThreadId: 't1', upToIndex: 2 },
        { id: 'f2', recordedAt: iso(T0 + DAY) },
      ),
    );
    expect(state.config).toEqual({
      ...base.config,
      threadId: 't2',
      forkedFrom: { threadId: 't1', upToIndex: 2 },
    });
    expect(exportAgentState(state.graph)).toEqual(exportAgentState(base.graph));
    expect(state.length).toBe(3);
  });
});
