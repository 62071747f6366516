/**
 * Runs end: the Weft run of a LangGraph invocation runs while the graph works, waits while it is
 * interrupted, completes when the graph reaches END and fails with the error when a node throws.
 * On SQLite and Postgres.
 */
import { HumanMessage } from '@langchain/core/messages';
import { Annotation, Command, END, START, StateGraph } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import { type Backend, postgresBackend, sqliteBackend } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';
import { compileAgent } from './agent.js';

const Counter = Annotation.Root({
  n: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
});

/** Counts to 3 through a loop of two nodes, or throws at `failAt`; with a Send-free fan of edges. */
function compileCounter(saver: WeftSaver, failAt?: number) {
  return new StateGraph(Counter)
    .addNode('step', (s: typeof Counter.State) => {
      if (s.n + 1 === failAt) throw new Error(`step ${failAt} broke`);
      return { n: s.n + 1 };
    })
    .addNode('check', () => ({}))
    .addEdge(START, 'step')
    .addEdge('step', 'check')
    .addConditionalEdges('check', (s: typeof Counter.State) => (s.n >= 3 ? END : 'step'))
    .compile({ checkpointer: saver });
}

function suite(backendName: 'sqlite' | 'postgres') {
  const backend: Backend = backendName === 'sqlite' ? sqliteBackend() : postgresBackend();
  let engine: Engine;
  let saver: WeftSaver;

  beforeAll(async () => {
    engine = await openEngine(await backend.freshUrl());
    saver = new WeftSaver({ engine, pollIntervalMs: 10 });
  });
  afterAll(async () => {
    await engine.close();
    await backend.cleanup();
  });

  const runsOf = async (config: { configurable: { thread_id: string } }) => {
    const state = await engine.getState(saver.weftThreadId(config));
    if (!state.ok) throw new Error(state.error.message);
    return [...state.value.runs.values()];
  };

  it('completes the run when the graph reaches END, one run per invocation', async () => {
    const graph = compileCounter(saver);
    const config = { configurable: { thread_id: 'counted' } };
    expect((await graph.invoke({ n: 0 }, config)).n).toBe(3);
    let runs = await runsOf(config);
    expect(runs.map((r) => r.status)).toEqual(['completed']);
    expect(runs[0]!.goal).toBe('LangGraph thread counted');
    expect(runs[0]!.started_at).toBeDefined();
    // A second turn on the same thread is a second run, completed in its turn.
    expect((await graph.invoke({ n: 1 }, config)).n).toBe(3);
    runs = await runsOf(config);
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed']);
  });

  it('fails the run with the error a node threw', async () => {
    const graph = compileCounter(saver, 2);
    const config = { configurable: { thread_id: 'broken' } };
    await expect(graph.invoke({ n: 0 }, config)).rejects.toThrow('step 2 broke');
    const runs = await runsOf(config);
    expect(runs.map((r) => r.status)).toEqual(['failed']);
    expect(runs[0]!.last_error).toContain('step 2 broke');
  });

  it('waits while interrupted, then completes when the resumed graph ends', async () => {
    const graph = compileAgent(saver);
    const config = { configurable: { thread_id: 'reviewed' } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q', content: 'find x' })] }, config);
    let runs = await runsOf(config);
    expect(runs.map((r) => r.status)).toEqual(['waiting']);
    const done = await graph.invoke(new Command({ resume: { approved: true } }), config);
    expect(done.messages.at(-1)?.content).toBe('Answer: 3 results for "find x"');
    runs = await runsOf(config);
    expect(runs.map((r) => r.status)).toEqual(['completed']);
  });

  it('a graph that ends at once after a rejection completes its run too', async () => {
    const graph = compileAgent(saver);
    const config = { configurable: { thread_id: 'rejected' } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q', content: 'find y' })] }, config);
    await graph.invoke(new Command({ resume: { decision: 'rejected', response: null } }), config);
    expect((await graph.getState(config)).next).toEqual([]);
    const runs = await runsOf(config);
    expect(runs.map((r) => r.status)).toEqual(['completed']);
  });
}

describe('WeftSaver runs end [sqlite]', () => suite('sqlite'));
describeWithPostgres('WeftSaver runs end [postgres]', () => suite('postgres'));
