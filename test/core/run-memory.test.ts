import { describe, expect, it } from 'vitest';
import {
  type AnyRunAction,
  createWorkflowState,
  DEFAULT_MAX_MEMORY_VALUE_BYTES,
  jsonByteLength,
  MAX_MEMORY_DROPS,
  MAX_SUPERVISOR_HISTORY,
  MAX_VISITED_NODES,
  mergeMemory,
  propagateTaint,
  type RunContext,
  reduceRun,
  type WorkflowState,
} from '../../src/core/run/index.js';

const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:05:00.000Z';
const fresh = () =>
  createWorkflowState({ workflowId: 'wf', goal: 'g' }, { runId: 'run-1', now: NOW });

function apply(state: WorkflowState, action: AnyRunAction, ctx: RunContext = { now: LATER }) {
  const result = reduceRun(state, action, ctx);
  if (!result.ok) throw new Error(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}
const running = () => ({
  ...apply(fresh(), { type: '_init', payload: {} }).state,
  max_iterations: 10_000,
});
const write = (state: WorkflowState, updates: Record<string, unknown>, extra = {}) =>
  apply(state, {
    id: 'w',
    type: 'update_memory',
    payload: { updates, ...extra },
  } as AnyRunAction);

describe('reserved keys', () => {
  it('never reach user memory; unknown ones are dropped and recorded', () => {
    const { state, events } = write(running(), { ok: 1, _secret: 'x', _taint_registry: 'bad' });
    expect(state.memory).toEqual({ ok: 1 });
    expect(state.memory_drops).toEqual([
      {
        key: '_secret',
        reason: 'reserved_key',
        bytes: 3,
        limit: DEFAULT_MAX_MEMORY_VALUE_BYTES,
        at: LATER,
      },
      {
        key: '_taint_registry',
        reason: 'reserved_key',
        bytes: 5,
        limit: DEFAULT_MAX_MEMORY_VALUE_BYTES,
        at: LATER,
      },
    ]);
    expect(events).toContainEqual({
      type: 'memory_dropped',
      key: '_secret',
      bytes: 3,
      limit: DEFAULT_MAX_MEMORY_VALUE_BYTES,
      reason: 'reserved_key',
    });
  });

  it('apply to the seed memory of createWorkflowState too', () => {
    const s = createWorkflowState(
      { workflowId: 'wf', goal: 'g', memory: { topic: 'x', _pending_approval: { a: 1 } } },
      { runId: 'r', now: NOW },
    );
    expect(s.memory).toEqual({ topic: 'x' });
    expect(s.pending_approval).toBeUndefined();
    expect(s.memory_drops.map((d) => d.key)).toEqual(['_pending_approval']);
  });

  it('route the cycgraph wire keys to their engine-owned fields', () => {
    const { state } = write(running(), {
      _taint_registry: { page: { source: 'mcp_tool', created_at: NOW } },
      _lesson_provenance: { e1: { node_id: 'n', fact_ids: ['f'], retrieved_at: NOW } },
      _subgraph_resume_child: { checkpoint: 1 },
      _swarm_handoff_count: 2,
    });
    expect(state.memory).toEqual({});
    expect(state.taint_registry.page?.source).toBe('mcp_tool');
    expect(Object.keys(state.lesson_provenance)).toEqual(['e1']);
    expect(state.subgraph_checkpoints).toEqual({ child: { checkpoint: 1 } });
    expect(state.swarm_handoff_count).toBe(2);
    const cleared = write(state, { _subgraph_resume_child: null, _swarm_handoff_count: 1 }).state;
    expect(cleared.subgraph_checkpoints).toEqual({});
    expect(cleared.swarm_handoff_count).toBe(2); // the counter never goes back
    expect(cleared.memory_drops.map((d) => d.key)).toEqual(['_swarm_handoff_count']);
  });
});

describe('oversized values', () => {
  it('are dropped and recorded in memory_drops with their size and the limit', () => {
    const limits = { maxValueBytes: 20 };
    const fits = 'x'.repeat(18); // '"' + 18 + '"' = 20 bytes: exactly at the limit
    const big = 'é'.repeat(10); // 20 UTF-8 bytes of content + 2 quotes = 22
    const { state, events } = apply(
      running(),
      {
        id: 'w',
        type: 'update_memory',
        payload: { updates: { fits, big, one_over: 'x'.repeat(19) } },
        metadata: { node_id: 'n1' },
      },
      { now: LATER, limits },
    );
    expect(jsonByteLength(fits)).toBe(20);
    expect(state.memory).toEqual({ fits });
    expect(state.memory_drops).toEqual([
      { key: 'big', reason: 'oversized', bytes: 22, limit: 20, at: LATER, node_id: 'n1' },
      { key: 'one_over', reason: 'oversized', bytes: 21, limit: 20, at: LATER, node_id: 'n1' },
    ]);
    expect(events).toContainEqual({
      type: 'memory_dropped',
      key: 'big',
      bytes: 22,
      limit: 20,
      reason: 'oversized',
    });
  });

  it('uses a 64 KiB default', () => {
    const { state } = write(running(), { big: 'x'.repeat(64 * 1024) });
    expect(state.memory).toEqual({});
    expect(state.memory_drops[0]).toMatchObject({ key: 'big', reason: 'oversized', limit: 65536 });
  });

  it('mergeMemory never mutates its input', () => {
    const state = running();
    const before = structuredClone(state);
    mergeMemory(state, { a: 1, _b: 2 }, { now: LATER });
    expect(state).toEqual(before);
  });
});

describe('ring buffers', () => {
  it('visited_nodes keeps the last MAX_VISITED_NODES entries', () => {
    let state = running();
    for (let i = 0; i < MAX_VISITED_NODES + 5; i++) {
      state = apply(state, { type: '_advance', payload: { node_id: `n${i}` } }).state;
    }
    expect(state.visited_nodes).toHaveLength(MAX_VISITED_NODES);
    expect(state.visited_nodes[0]).toBe('n5');
    expect(state.visited_nodes.at(-1)).toBe(`n${MAX_VISITED_NODES + 4}`);
  });

  it('supervisor_history keeps the last MAX_SUPERVISOR_HISTORY decisions', () => {
    let state = running();
    for (let i = 0; i < MAX_SUPERVISOR_HISTORY + 3; i++) {
      state = apply(state, {
        id: `h${i}`,
        type: 'handoff',
        payload: { node_id: `n${i}`, supervisor_id: 's', reasoning: `${i}` },
      }).state;
    }
    expect(state.supervisor_history).toHaveLength(MAX_SUPERVISOR_HISTORY);
    expect(state.supervisor_history[0]?.reasoning).toBe('3');
  });

  it('memory_drops keeps the last MAX_MEMORY_DROPS records', () => {
    let state = running();
    for (let i = 0; i < MAX_MEMORY_DROPS + 7; i++) state = write(state, { [`_k${i}`]: i }).state;
    expect(state.memory_drops).toHaveLength(MAX_MEMORY_DROPS);
    expect(state.memory_drops[0]?.key).toBe('_k7');
  });
});

describe('taint', () => {
  const tool = { source: 'mcp_tool', tool_name: 'web_search', server_id: 'srv' } as const;

  it('an update marked tainted registers every written key', () => {
    const { state, events } = apply(running(), {
      id: 'w',
      type: 'update_memory',
      payload: { updates: { page: 'html', summary: 's' }, taint: tool },
      metadata: { node_id: 'fetcher' },
    });
    expect(state.taint_registry).toEqual({
      page: { ...tool, node_id: 'fetcher', bytes: 6, created_at: LATER },
      summary: { ...tool, node_id: 'fetcher', bytes: 3, created_at: LATER },
    });
    expect(events.filter((e) => e.type === 'taint_recorded')).toHaveLength(2);
  });

  it('per-key taint marks only those keys; dropped keys are not registered', () => {
    const { state } = write(
      running(),
      { page: 'p', clean: 'c', _x: 1 },
      { taint_by_key: { page: { source: 'retrieval' }, _x: { source: 'a2a' } } },
    );
    expect(Object.keys(state.taint_registry)).toEqual(['page']);
  });

  it('is append-only: existing entries are never overwritten or removed', () => {
    const first = write(running(), { page: 'p' }, { taint: tool }).state;
    const entry = first.taint_registry.page;
    const again = write(first, { page: 'p2' }, { taint: { source: 'a2a' } }).state;
    expect(again.taint_registry.page).toEqual(entry);
    const wire = write(again, {
      _taint_registry: { page: { source: 'derived', created_at: NOW } },
    }).state;
    expect(wire.taint_registry.page).toEqual(entry);
    const internal = apply(wire, {
      type: '_taint',
      payload: { key: 'page', metadata: { source: 'custom_tool' } },
    }).state;
    expect(internal.taint_registry).toEqual({ page: entry });
  });

  it('propagates to outputs derived from tainted inputs', () => {
    const tainted = write(running(), { page: 'p' }, { taint: tool }).state;
    const { state } = write(
      tainted,
      { summary: 's', title: 't' },
      { input_keys: ['page', 'topic'] },
    );
    expect(state.taint_registry.summary).toEqual({
      source: 'derived',
      derived_from: ['page'],
      created_at: LATER,
    });
    expect(state.taint_registry.title?.source).toBe('derived');
    const clean = write(state, { other: 1 }, { input_keys: ['topic'] }).state;
    expect(clean.taint_registry.other).toBeUndefined();
  });

  it('propagateTaint is a pure helper with sorted, deduplicated derived_from', () => {
    const s = {
      ...running(),
      taint_registry: {
        b: { source: 'mcp_tool' as const, created_at: NOW },
        a: { source: 'retrieval' as const, created_at: NOW },
      },
    };
    const out = propagateTaint(s, {
      outputKeys: ['out', 'a'],
      inputKeys: ['b', 'a', 'b', 'clean'],
      node_id: 'n',
      now: LATER,
    });
    expect(out.taint_registry.out).toEqual({
      source: 'derived',
      derived_from: ['a', 'b'],
      node_id: 'n',
      created_at: LATER,
    });
    expect(out.taint_registry.a).toEqual(s.taint_registry.a); // append-only
    expect(s.taint_registry).not.toHaveProperty('out');
    expect(propagateTaint(s, { outputKeys: ['x'], inputKeys: ['clean'], now: LATER })).toBe(s);
  });
});

describe('lesson provenance', () => {
  it('is append-only: a recorded entry id keeps its first content', () => {
    const first = apply(running(), {
      type: '_record_lessons',
      payload: { entry_id: 'e1', node_id: 'n', agent_id: 'ag', fact_ids: ['f1'] },
    }).state;
    const second = apply(first, {
      type: '_record_lessons',
      payload: { entry_id: 'e1', node_id: 'other', fact_ids: ['f9'] },
    });
    expect(second.state.lesson_provenance).toEqual(first.lesson_provenance);
    expect(second.events).toEqual([]);
  });
});
