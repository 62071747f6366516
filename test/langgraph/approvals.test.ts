/**
 * The interrupt/approval pattern's other paths: a resume given straight to the graph settles the
 * pending approval (decision `resumed`), a cancelled run ends `waitForResume` with
 * APPROVAL_ENDED, an abort signal with ABORTED, and a config without thread_id is INVALID_CONFIG.
 */
import { HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftSaver, WeftSaverError } from '../../src/langgraph/index.js';
import { type Backend, sqliteBackend } from '../engine/support.js';
import { compileAgent } from './agent.js';

describe('WeftSaver approvals [sqlite]', () => {
  const backend: Backend = sqliteBackend();
  let engine: Engine;
  let saver: WeftSaver;
  let graph: ReturnType<typeof compileAgent>;

  beforeAll(async () => {
    engine = await openEngine(await backend.freshUrl());
    saver = new WeftSaver({ engine, pollIntervalMs: 10 });
    graph = compileAgent(saver);
  });
  afterAll(async () => {
    await engine.close();
    await backend.cleanup();
  });

  const pause = async (threadId: string) => {
    const config = { configurable: { thread_id: threadId } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q', content: 'find x' })] }, config);
    const state = await engine.getState(saver.weftThreadId(config));
    if (!state.ok) throw new Error(state.error.message);
    const run = [...state.value.runs.values()].find((r) => r.status === 'waiting');
    expect(run, 'a run waits for the review').toBeDefined();
    const paused = (await graph.getState(config)).config;
    return { config, paused, runId: run!.run_id };
  };

  it('a resume given to the graph directly settles the approval as resumed', async () => {
    const { config, paused, runId } = await pause('direct');
    const done = await graph.invoke(new Command({ resume: { approved: true } }), config);
    expect(done.messages.at(-1)?.content).toBe('Answer: 3 results for "find x"');
    const state = await engine.getState(saver.weftThreadId(config));
    if (!state.ok) throw new Error(state.error.message);
    const run = state.value.runs.get(runId)!;
    expect(run.status, 'the resumed graph reached END').toBe('completed');
    expect(run.memory.human_decision).toBe('resumed');
    expect(run.memory.human_response).toEqual({ approved: true });
    // Asked about the checkpoint that paused, waitForResume reports how it was settled.
    await expect(saver.waitForResume(paused)).resolves.toMatchObject({
      runId,
      decision: 'resumed',
      response: { approved: true },
    });
  });

  it('waitForResume ends with APPROVAL_ENDED when the run is cancelled instead', async () => {
    const { config, runId } = await pause('cancelled');
    const waiting = saver.waitForResume(config);
    const cancelled = await engine.cancelRun({
      runId,
      threadId: saver.weftThreadId(config),
      reason: 'nobody is around',
    });
    expect(cancelled.ok).toBe(true);
    await expect(waiting).rejects.toMatchObject({ name: 'WeftSaverError', code: 'APPROVAL_ENDED' });
  });

  it('waitForResume stops with ABORTED on its signal', async () => {
    const { config } = await pause('aborted');
    const controller = new AbortController();
    const waiting = saver.waitForResume(config, { signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('a config without thread_id is INVALID_CONFIG and writes nothing', async () => {
    const error = await saver.waitForResume({ configurable: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WeftSaverError);
    expect((error as WeftSaverError).code).toBe('INVALID_CONFIG');
    expect((error as WeftSaverError).message).toContain('thread_id is missing');
  });
});
