/**
 * Approvals gate the graph (review item 8): resolved through Weft (`resolveApproval`, what
 * the console and the GraphQL mutation call), a rejection does not run the tool, and an approval
 * with no response resumes instead of crashing LangGraph with EmptyInputError; the value
 * `waitForResume` hands out says which it was, and reaches every task that interrupted in the
 * step. On SQLite and Postgres.
 */
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages/tool';
import { Annotation, Command, END, interrupt, START, StateGraph } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { getApproval, isApproved, WeftSaver } from '../../src/langgraph/index.js';
import { type Backend, postgresBackend, sqliteBackend } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';
import { compileAgent } from './agent.js';

function suite(backendName: 'sqlite' | 'postgres') {
  const backend: Backend = backendName === 'sqlite' ? sqliteBackend() : postgresBackend();
  let engine: Engine;
  let saver: WeftSaver;
  let graph: ReturnType<typeof compileAgent>;
  const ran: Array<{ thread: string; call: ToolCall }> = [];
  let current = '';

  beforeAll(async () => {
    engine = await openEngine(await backend.freshUrl());
    saver = new WeftSaver({ engine, pollIntervalMs: 10 });
    graph = compileAgent(saver, (call) => ran.push({ thread: current, call }));
  });
  afterAll(async () => {
    await engine.close();
    await backend.cleanup();
  });

  /** Runs the agent to its review; the tool has not run yet. */
  const pause = async (threadId: string) => {
    current = threadId;
    const config = { configurable: { thread_id: threadId } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q', content: 'find x' })] }, config);
    expect((await graph.getState(config)).next).toEqual(['review']);
    const weftId = saver.weftThreadId(config);
    return { config, weftId, runId: await waitingRun(weftId) };
  };
  const waitingRun = async (weftId: string) => {
    const state = await engine.getState(weftId);
    if (!state.ok) throw new Error(state.error.message);
    const run = [...state.value.runs.values()].find((r) => r.status === 'waiting');
    expect(run, 'a run waits for the review').toBeDefined();
    return run!.run_id;
  };
  const toolRunsOf = (threadId: string) => ran.filter((r) => r.thread === threadId);

  it('a rejection resolved through Weft does not run the tool', async () => {
    const { config, weftId, runId } = await pause('rejected');
    const resolved = await engine.resolveApproval({
      runId,
      threadId: weftId,
      decision: 'rejected',
      response: 'too broad',
    });
    expect(resolved.ok).toBe(true);
    const resume = await saver.waitForResume(config);
    expect(resume.value).toEqual({ decision: 'rejected', response: 'too broad' });
    const done = await graph.invoke(new Command({ resume: resume.value }), config);
    expect(toolRunsOf('rejected')).toEqual([]);
    expect(done.messages.some((m) => ToolMessage.isInstance(m))).toBe(false);
    expect((await graph.getState(config)).next).toEqual([]);
  });

  it('an approval with no response resumes the graph and runs the tool once', async () => {
    const { config, weftId, runId } = await pause('approved-empty');
    const resolved = await engine.resolveApproval({
      runId,
      threadId: weftId,
      decision: 'approved',
    });
    expect(resolved.ok).toBe(true);
    const resume = await saver.waitForResume(config);
    expect(resume.value).toEqual({ decision: 'approved', response: null });
    const done = await graph.invoke(new Command({ resume: resume.value }), config);
    expect(done.messages.at(-1)?.content).toBe('Answer: 3 results for "find x"');
    expect(toolRunsOf('approved-empty').map((r) => r.call.args)).toEqual([{ query: 'find x' }]);
  });

  it('an answer given straight to the graph gates it too, and the log keeps its decision', async () => {
    const { config, weftId, runId } = await pause('direct-reject');
    await graph.invoke(new Command({ resume: { decision: 'rejected', response: 'no' } }), config);
    expect(toolRunsOf('direct-reject')).toEqual([]);
    const state = await engine.getState(weftId);
    if (!state.ok) throw new Error(state.error.message);
    const run = state.value.runs.get(runId)!;
    expect(run.memory.human_decision).toBe('rejected');
    expect(run.memory.human_response).toBe('no');
  });

  it('one rejection stops every task that interrupted in the same step', async () => {
    const acted: string[] = [];
    const gated = (name: string) => () => {
      if (isApproved(interrupt({ question: `May ${name} act?` }))) acted.push(name);
      return { log: [name] };
    };
    const parallel = new StateGraph(
      Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => [...a, ...b] }) }),
    )
      .addNode('a', gated('a'))
      .addNode('b', gated('b'))
      .addEdge(START, 'a')
      .addEdge(START, 'b')
      .addEdge('a', END)
      .addEdge('b', END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: 'parallel' } };
    await parallel.invoke({ log: [] }, config);
    expect((await parallel.getState(config)).next.sort()).toEqual(['a', 'b']);
    const weftId = saver.weftThreadId(config);
    const resolved = await engine.resolveApproval({
      runId: await waitingRun(weftId),
      threadId: weftId,
      decision: 'rejected',
    });
    expect(resolved.ok).toBe(true);
    const resume = await saver.waitForResume(config);
    const done = await parallel.invoke(new Command({ resume: resume.value }), config);
    expect(done.log.sort()).toEqual(['a', 'b']);
    expect(acted).toEqual([]);
  });
}

describe('LangGraph approvals gate the tool [sqlite]', () => suite('sqlite'));
describeWithPostgres('LangGraph approvals gate the tool', () => suite('postgres'));

describe('getApproval', () => {
  it('approves only an explicit approval', () => {
    expect(getApproval({ decision: 'approved', response: null })).toEqual({
      approved: true,
      decision: 'approved',
      response: null,
    });
    // Graphs resumed the older way, with the reviewer's bare response.
    expect(getApproval({ approved: true }).approved).toBe(true);
    for (const answer of [
      { decision: 'rejected', response: { approved: true } },
      { decision: 'resumed', response: null },
      { approved: false },
      'yes',
      null,
      undefined,
    ]) {
      expect(getApproval(answer).approved, JSON.stringify(answer)).toBe(false);
    }
  });
});
