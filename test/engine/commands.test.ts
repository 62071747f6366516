import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import type { WeftError } from '../../src/core/errors.js';
import type { Engine } from '../../src/engine/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { describeWithPostgres } from '../support/services.js';
import { comparable, expectedReadModels, sortedLikeDump } from './oracle.js';
import {
  type Backend,
  failure,
  must,
  openEngine,
  postgresBackend,
  sqliteBackend,
  type TestEngine,
  useBackend,
} from './support.js';

/** Everything a command could write: every read-model row and every thread's stored log. */
async function snapshot(engine: Engine) {
  const dump = await engine.store.dumpReadModels();
  const logs: Record<string, number> = {};
  for (const t of dump.thread) {
    logs[t.id as string] = (await engine.store.readEntries(t.id as string)).length;
  }
  return { dump, logs };
}

/** Runs a failing command and checks its typed error and that it wrote nothing. */
async function refused(
  engine: Engine,
  command: () => Promise<{ ok: boolean }>,
  expected: Partial<WeftError> & { code: WeftError['code'] },
) {
  const before = await snapshot(engine);
  const result = (await command()) as Parameters<typeof failure>[0];
  expect(failure(result)).toMatchObject(expected);
  expect(await snapshot(engine)).toEqual(before);
}

/** The read models of a thread equal what its state says they must be. */
async function expectConsistent(engine: Engine, threadId: string) {
  const state = must(await engine.getState(threadId));
  expect(comparable(await engine.store.dumpReadModels([threadId]))).toEqual(
    sortedLikeDump(expectedReadModels(threadId, state)),
  );
  expect(must(await engine.verify(threadId, { strict: true }))).toEqual({
    ok: true,
    checkedEntries: state.length,
  });
}

function commandSuite(backend: Backend) {
  let engine: TestEngine;
  const open = async () => {
    engine = await openEngine(backend);
    return engine;
  };
  afterEach(async () => {
    await engine?.close();
  });

  const threadWithRun = async () => {
    const { threadId } = must(await engine.createThread({}));
    must(await engine.appendNodes({ threadId, nodes: [{ kind: 'system', payload: { p: 'hi' } }] }));
    const { runId } = must(await engine.startRun({ threadId, goal: 'write a haiku' }));
    return { threadId, runId };
  };

  describe('createThread', () => {
    it('writes the thread row with its configuration', async () => {
      await open();
      const created = must(
        await engine.createThread({ metadata: { team: 'a' }, allowDynamicNodeTypes: true }),
      );
      expect(created).toEqual({ threadId: 'id-1', logIndex: 0, logLength: 1 });
      const { thread } = await engine.store.dumpReadModels();
      expect(thread[0]).toMatchObject({
        id: 'id-1',
        metadata: '{"team":"a"}',
        allowDynamicNodeTypes: true,
        logLength: 1,
        frontier: '[]',
      });
      await expectConsistent(engine, created.threadId);
    });

    it('refuses a taken id, a bad vocabulary and oversized metadata, writing nothing', async () => {
      await open();
      must(await engine.createThread({ threadId: 't1' }));
      await refused(engine, () => engine.createThread({ threadId: 't1' }), {
        code: 'CONFLICT',
        threadId: 't1',
        actualIndex: 1,
      });
      await refused(
        engine,
        () => engine.createThread({ nodeTypes: [{ name: '9 bad', description: '' }] }),
        { code: 'VALIDATION_FAILED' },
      );
      await refused(engine, () => engine.createThread({ threadId: '' }), {
        code: 'VALIDATION_FAILED',
      });
      await refused(
        engine,
        () => engine.createThread({ metadata: { blob: 'x'.repeat(1024 * 1024) } }),
        { code: 'VALIDATION_FAILED' },
      );
    });
  });

  describe('appendNodes', () => {
    it('appends, versions resources, dedupes identical content and moves the frontier', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      const first = must(
        await engine.appendNodes({
          threadId,
          expectedIndex: 1,
          nodes: [
            { kind: 'system', payload: { p: 1 } },
            { kind: 'resource', payload: { v: 1 }, resourceKey: 'doc:a' },
          ],
        }),
      );
      expect(first.logIndex).toBe(1);
      const [system, v1] = first.nodes;
      const second = must(
        await engine.appendNodes({
          threadId,
          nodes: [
            { kind: 'resource', payload: { v: 2 }, resourceKey: 'doc:a' },
            { kind: 'system', payload: { p: 1 }, parents: [] },
          ],
        }),
      );
      expect(second.nodes[0]!.parents).toContain(v1!.id);
      expect(second.nodes[1]).toEqual(system); // identical content: the existing node
      const { node, resource_head } = await engine.store.dumpReadModels();
      expect(node).toHaveLength(3);
      expect(node.find((n) => n.id === v1!.id)).toMatchObject({
        isCurrent: false,
        isFrontier: false,
      });
      expect(resource_head).toEqual([
        expect.objectContaining({ resourceKey: 'doc:a', nodeId: second.nodes[0]!.id }),
      ]);
      await expectConsistent(engine, threadId);
    });

    it('gives every bad input a typed error and writes nothing', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      must(await engine.appendNodes({ threadId, nodes: [{ kind: 'system', payload: {} }] }));
      const append = (input: Partial<Parameters<Engine['appendNodes']>[0]>) => () =>
        engine.appendNodes({ threadId, nodes: [{ kind: 'answer', payload: 1 }], ...input });
      await refused(engine, append({ threadId: 'nope' }), {
        code: 'NOT_FOUND',
        entity: 'Thread',
        id: 'nope',
      });
      await refused(engine, append({ expectedIndex: 1 }), {
        code: 'CONFLICT',
        threadId,
        expectedIndex: 1,
        actualIndex: 2,
      });
      await refused(engine, append({ expectedIndex: 7 }), {
        code: 'CONFLICT',
        expectedIndex: 7,
        actualIndex: 2,
      });
      await refused(engine, append({ nodes: [] }), { code: 'VALIDATION_FAILED' });
      await refused(
        engine,
        append({ nodes: [{ kind: 'answer', payload: 1, parents: ['cw_x'] }] }),
        {
          code: 'UNKNOWN_PARENT',
        },
      );
      await refused(engine, append({ nodes: [{ kind: 'bogus' as never, payload: 1 }] }), {
        code: 'VALIDATION_FAILED',
      });
      await refused(engine, append({ nodes: [{ kind: 'answer', payload: Number.NaN }] }), {
        code: 'VALIDATION_FAILED',
      });
      await refused(engine, append({ nodes: [{ kind: 'answer', payload: 1, runId: 'r9' }] }), {
        code: 'NOT_FOUND',
        entity: 'Run',
      });
      await refused(
        engine,
        append({ nodes: [{ kind: 'answer', payload: 'x'.repeat(1024 * 1024 + 1) }] }),
        { code: 'VALIDATION_FAILED' },
      );
      await refused(engine, append({ expectedIndex: -1 }), { code: 'VALIDATION_FAILED' });
    });

    it('serialises concurrent appends in one process without losing any', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          engine.appendNodes({ threadId, nodes: [{ kind: 'inference', payload: { i } }] }),
        ),
      );
      expect(results.map((r) => must(r).logIndex).sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      await expectConsistent(engine, threadId);
    });
  });

  describe('remember', () => {
    it('writes a semantic head with its type and key', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      must(await engine.remember({ threadId, type: 'Preference', key: 'Tone', content: 'dry' }));
      const again = must(
        await engine.remember({ threadId, type: 'preference', key: 'tone', content: 'warm' }),
      );
      expect(again.memory).toEqual({ type: 'preference', key: 'tone' });
      const { resource_head, node } = await engine.store.dumpReadModels();
      expect(resource_head).toEqual([
        {
          threadId,
          resourceKey: 'semantic:preference:tone',
          nodeId: again.node.id,
          semanticType: 'preference',
          semanticKey: 'tone',
        },
      ]);
      expect(node.filter((n) => n.isCurrent)).toHaveLength(1);
      await expectConsistent(engine, threadId);
    });

    it('refuses a type outside the vocabulary and an unknown run', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      await refused(
        engine,
        () => engine.remember({ threadId, type: 'secret', key: 'k', content: 1 }),
        {
          code: 'SEMANTIC_TYPE_NOT_ALLOWED',
        },
      );
      await refused(
        engine,
        () => engine.remember({ threadId, type: 'memory', key: 'k', content: 1, runId: 'r0' }),
        { code: 'NOT_FOUND', entity: 'Run' },
      );
    });
  });

  describe('importState', () => {
    it('imports an exported AgentState into a new thread', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      must(
        await engine.appendNodes({
          threadId,
          nodes: [
            { kind: 'system', payload: { p: 1 } },
            { kind: 'answer', payload: 'ok' },
          ],
        }),
      );
      must(await engine.remember({ threadId, type: 'memory', key: 'k', content: 1 }));
      const exported = must(await engine.stateAt(threadId)).agentState;
      const imported = must(await engine.importState({ state: exported, metadata: { from: 1 } }));
      expect(imported.nodeCount).toBe(3);
      expect(must(await engine.stateAt(imported.threadId)).agentState).toEqual(exported);
      await expectConsistent(engine, imported.threadId);
    });

    it('rejects a corrupted AgentState with its rule code and writes nothing', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      must(await engine.appendNodes({ threadId, nodes: [{ kind: 'system', payload: { p: 1 } }] }));
      const good = must(await engine.stateAt(threadId)).agentState;
      const tampered = structuredClone(good);
      tampered.nodes[0]!.payload = { p: 2 };
      await refused(engine, () => engine.importState({ state: tampered }), {
        code: 'NODE_ID_MISMATCH',
        nodeId: good.nodes[0]!.id,
      });
      await refused(engine, () => engine.importState({ state: { ...good, version: 2 } }), {
        code: 'STATE_VERSION_UNSUPPORTED',
      });
      await refused(engine, () => engine.importState({ state: 'nope' }), {
        code: 'STATE_SHAPE_INVALID',
      });
    });
  });

  describe('runs', () => {
    it('startRun writes the run row and a goal node linked to it', async () => {
      await open();
      const { threadId, runId } = await threadWithRun();
      const { run, node } = await engine.store.dumpReadModels();
      expect(run).toEqual([
        expect.objectContaining({ threadId, id: runId, status: 'running', goal: 'write a haiku' }),
      ]);
      expect(node.find((n) => n.kind === 'goal')).toMatchObject({ runId, isFrontier: true });
      await expectConsistent(engine, threadId);
    });

    it('startRun refuses an unknown thread, a bad config and a taken run id', async () => {
      await open();
      const { threadId, runId } = await threadWithRun();
      await refused(engine, () => engine.startRun({ threadId: 'nope', goal: 'g' }), {
        code: 'NOT_FOUND',
      });
      await refused(engine, () => engine.startRun({ threadId, goal: 'g', maxIterations: -1 }), {
        code: 'VALIDATION_FAILED',
      });
      await refused(engine, () => engine.startRun({ threadId, goal: 'g', runId }), {
        code: 'VALIDATION_FAILED',
      });
    });

    it('dispatch updates memory (mirrored as semantic nodes) and checks transitions', async () => {
      await open();
      const { threadId, runId } = await threadWithRun();
      const dispatched = must(
        await engine.dispatch({
          runId,
          expectedIndex: 3,
          action: { type: 'update_memory', payload: { updates: { topic: 'rain' } } },
        }),
      );
      expect(dispatched).toMatchObject({ threadId, runId, logIndex: 3, status: 'running' });
      const { resource_head } = await engine.store.dumpReadModels();
      expect(resource_head[0]).toMatchObject({ semanticType: 'memory', semanticKey: 'topic' });
      must(
        await engine.dispatch({
          runId,
          action: { type: 'set_status', payload: { status: 'completed' } },
        }),
      );
      await refused(
        engine,
        () =>
          engine.dispatch({
            runId,
            action: { type: 'set_status', payload: { status: 'running' } },
          }),
        { code: 'INVALID_TRANSITION', from: 'completed', to: 'running' },
      );
      await refused(
        engine,
        () => engine.dispatch({ runId, action: { type: 'launch_rockets', payload: {} } }),
        { code: 'VALIDATION_FAILED' },
      );
      await refused(
        engine,
        () => engine.dispatch({ runId: 'nope', action: { type: 'goto_node', payload: {} } }),
        { code: 'NOT_FOUND', entity: 'Run', id: 'nope' },
      );
      await refused(
        engine,
        () =>
          engine.dispatch({
            runId,
            expectedIndex: 2,
            action: { type: 'update_memory', payload: { updates: { a: 1 } } },
          }),
        { code: 'CONFLICT', threadId, expectedIndex: 2, actualIndex: 5 },
      );
      await expectConsistent(engine, threadId);
    });

    it('resolveApproval resumes a waiting run and refuses one that is not waiting', async () => {
      await open();
      const { threadId, runId } = await threadWithRun();
      await refused(engine, () => engine.resolveApproval({ runId, decision: 'approve' }), {
        code: 'INVALID_TRANSITION',
      });
      const waiting = must(
        await engine.dispatch({
          runId,
          action: { type: 'request_human_input', payload: { pending_approval: { q: 'ok?' } } },
        }),
      );
      expect(waiting.status).toBe('waiting');
      expect((await engine.store.dumpReadModels()).run[0]!.waitingTimeoutAt).not.toBeNull();
      const resumed = must(
        await engine.resolveApproval({ runId, decision: 'approve', memoryUpdates: { ok: true } }),
      );
      expect(resumed.status).toBe('running');
      await expectConsistent(engine, threadId);
    });

    it('cancelRun rolls back compensation; a completed run cannot be cancelled', async () => {
      await open();
      const { threadId, runId } = await threadWithRun();
      must(
        await engine.dispatch({
          runId,
          action: {
            type: 'update_memory',
            payload: { updates: { booked: true } },
            compensation: { type: 'unbook', payload: {} },
          },
        }),
      );
      const cancelled = must(await engine.cancelRun({ runId, reason: 'user', rollback: true }));
      expect(cancelled.status).toBe('cancelled');
      await refused(engine, () => engine.cancelRun({ runId: 'nope' }), { code: 'NOT_FOUND' });
      const second = must(await engine.startRun({ threadId, goal: 'again' }));
      must(
        await engine.dispatch({
          runId: second.runId,
          action: { type: 'set_status', payload: { status: 'completed' } },
        }),
      );
      await refused(engine, () => engine.cancelRun({ runId: second.runId }), {
        code: 'INVALID_TRANSITION',
      });
      await expectConsistent(engine, threadId);
    });

    it('recordUsage charges the run by model and by node', async () => {
      await open();
      const { threadId, runId } = await threadWithRun();
      const { nodes } = must(
        await engine.appendNodes({ threadId, nodes: [{ kind: 'inference', payload: 'x', runId }] }),
      );
      const nodeId = nodes[0]!.id;
      must(
        await engine.recordUsage({
          runId,
          nodeId,
          model: 'gpt-4o',
          inputTokens: 100,
          outputTokens: 20,
          costUsd: 0.5,
        }),
      );
      const { run, run_spend } = await engine.store.dumpReadModels();
      expect(run[0]).toMatchObject({ totalInputTokens: 100, totalOutputTokens: 20 });
      expect(run_spend.map((s) => [s.dimension, s.key, s.inputTokens])).toEqual([
        ['model', 'gpt-4o', 100],
        ['node', nodeId, 100],
      ]);
      await refused(
        engine,
        () =>
          engine.recordUsage({
            runId,
            nodeId: 'cw_x',
            model: 'm',
            inputTokens: 1,
            outputTokens: 1,
          }),
        { code: 'NOT_FOUND', entity: 'CausalNode' },
      );
      await refused(
        engine,
        () => engine.recordUsage({ runId, model: 'm', inputTokens: -1, outputTokens: 1 }),
        { code: 'VALIDATION_FAILED' },
      );
      await expectConsistent(engine, threadId);
    });

    it('importWorkflowState adds a run; a corrupted or duplicate state is refused', async () => {
      await open();
      const { threadId, runId } = await threadWithRun();
      const state = must(await engine.getState(threadId)).runs.get(runId)!;
      const other = must(await engine.createThread({}));
      const imported = must(
        await engine.importWorkflowState({
          threadId: other.threadId,
          state: { ...state, run_id: 'imported-1' },
        }),
      );
      expect(imported).toMatchObject({ runId: 'imported-1', status: 'running' });
      await refused(engine, () => engine.importWorkflowState({ threadId: other.threadId, state }), {
        code: 'VALIDATION_FAILED',
      });
      await refused(
        engine,
        () =>
          engine.importWorkflowState({
            threadId: other.threadId,
            state: { ...state, run_id: 'r-new', state_schema_version: 99 },
          }),
        { code: 'SCHEMA_VERSION_UNSUPPORTED' },
      );
      await refused(
        engine,
        () =>
          engine.importWorkflowState({
            threadId: other.threadId,
            state: { ...state, run_id: 'r-new', status: 'sleeping' },
          }),
        { code: 'VALIDATION_FAILED' },
      );
      await expectConsistent(engine, other.threadId);
    });
  });

  describe('forkThread', () => {
    it('copies the prefix, records the fork and rebuilds the read models', async () => {
      await open();
      const { threadId, runId } = await threadWithRun();
      must(await engine.remember({ threadId, type: 'memory', key: 'k', content: 1 }));
      const fork = must(await engine.forkThread({ threadId, upToIndex: 3 }));
      expect(fork).toMatchObject({ forkedFrom: { threadId, upToIndex: 3 }, logLength: 4 });
      const source = await engine.store.readEntries(threadId, 0, 3);
      const copied = await engine.store.readEntries(fork.threadId, 0, 3);
      expect(copied).toEqual(source);
      const { thread } = await engine.store.dumpReadModels([fork.threadId]);
      expect(thread[0]).toMatchObject({ forkedFromId: threadId, forkedUpToIndex: 3 });
      await expectConsistent(engine, fork.threadId);
      // The run id is in both threads: without threadId a command goes to the original.
      const onOriginal = must(
        await engine.dispatch({
          runId,
          action: { type: 'set_status', payload: { status: 'completed' } },
        }),
      );
      expect(onOriginal.threadId).toBe(threadId);
      const onFork = must(
        await engine.dispatch({
          runId,
          threadId: fork.threadId,
          action: { type: 'set_status', payload: { status: 'failed' } },
        }),
      );
      expect(onFork.threadId).toBe(fork.threadId);
      await expectConsistent(engine, threadId);
      await expectConsistent(engine, fork.threadId);
    });

    it('refuses an unknown thread and an index outside [1, length]', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      await refused(engine, () => engine.forkThread({ threadId: 'nope' }), { code: 'NOT_FOUND' });
      await refused(engine, () => engine.forkThread({ threadId, upToIndex: 0 }), {
        code: 'VALIDATION_FAILED',
      });
      await refused(engine, () => engine.forkThread({ threadId, upToIndex: 2 }), {
        code: 'VALIDATION_FAILED',
      });
      await refused(engine, () => engine.forkThread({ threadId, newThreadId: threadId }), {
        code: 'CONFLICT',
      });
    });
  });

  describe('verify and stateAt', () => {
    it('travels in time and detects a tampered entry', async () => {
      await open();
      const { threadId } = must(await engine.createThread({}));
      for (let i = 0; i < 3; i++) {
        must(
          await engine.appendNodes({ threadId, nodes: [{ kind: 'inference', payload: { i } }] }),
        );
      }
      const at2 = must(await engine.stateAt(threadId, 2));
      expect(at2.agentState.nodes.map((n) => n.payload)).toEqual([{ i: 0 }]);
      expect(must(await engine.stateAt(threadId, 0)).agentState.nodes).toEqual([]);
      expect(failure(await engine.stateAt(threadId, 5))).toMatchObject({
        code: 'VALIDATION_FAILED',
      });
      expect(failure(await engine.stateAt('nope'))).toMatchObject({ code: 'NOT_FOUND' });
      expect(failure(await engine.verify('nope'))).toMatchObject({ code: 'NOT_FOUND' });
      await tamper(engine, threadId, 2);
      expect(must(await engine.verify(threadId))).toMatchObject({
        ok: false,
        firstBadIndex: 2,
        checkedEntries: 2,
      });
    });
  });
}

/** Rewrites a stored entry's first node payload in place, as someone with database access could. */
async function tamper(engine: TestEngine, threadId: string, index: number) {
  const entries = await engine.store.readEntries(threadId);
  const entry = structuredClone(entries[index]!) as unknown as {
    event: { nodes: Array<{ payload: unknown }> };
  };
  entry.event.nodes[0]!.payload = { i: 99 };
  const { prisma } = createPrisma(engine.url);
  try {
    await (prisma as unknown as RawClient).$executeRawUnsafe(
      `UPDATE "log_entry" SET "entry" = ${engine.url.startsWith('file:') ? '?' : '$1'} WHERE "thread_id" = ${engine.url.startsWith('file:') ? '?' : '$2'} AND "log_index" = ${index}`,
      canonicalJson(entry),
      threadId,
    );
  } finally {
    await prisma.$disconnect();
  }
}

interface RawClient {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

describe('engine commands [sqlite]', () => {
  commandSuite(useBackend(sqliteBackend()));
});

describeWithPostgres('engine commands', () => {
  commandSuite(useBackend(postgresBackend()));
});
