/**
 * Invalidation by construction: the engine's thread-derived caches (thread states, payload
 * salts, tenants, snapshot bases) keep each value under the deletion epoch taken before it was
 * read. A read racing a deletion that stores its answer after the deletion committed leaves
 * nothing a thread made again under the same id could be served: here the read is held, with
 * what it read, until the deletion and the new thread are committed.
 */
import { describe, expect, it } from 'vitest';
import { getNodeBySequence } from '../../src/core/graph/index.js';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { openThreadStore, type ThreadStore } from '../../src/store/read-model/index.js';
import { openNode } from '../events/support.js';
import { must, sqliteBackend, useBackend } from './support.js';

const backend = useBackend(sqliteBackend());

/** `store`, whose next call of each armed method answers only once released. */
function heldStore(store: ThreadStore) {
  const holds = new Map<PropertyKey, { reached: () => void; released: Promise<void> }>();
  const gated = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const hold = holds.get(name);
        const result = value.apply(target, args);
        if (hold === undefined) return result;
        holds.delete(name);
        return (async () => {
          const read = await result;
          hold.reached();
          await hold.released;
          return read;
        })();
      };
    },
  });
  /** Holds the next call of each of `names`; `reached` once all of them have read. */
  function arm(names: ReadonlyArray<keyof ThreadStore>) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reached = names.map(
      (name) =>
        new Promise<void>((resolve) => {
          holds.set(name, { reached: resolve, released });
        }),
    );
    return { reached: Promise.all(reached), release };
  }
  return { store: gated, arm };
}

function engineOn(url: string, store: ThreadStore = openThreadStore(url)): Engine {
  return createEngine({
    store,
    clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
    ids: createSequentialIds(`id-${Math.random()}`),
  });
}

describe('caches racing a deletion', () => {
  it('a read held across a deletion leaves no state or salt for the thread made again under its id', async () => {
    const url = await backend.freshUrl();
    const other = engineOn(url);
    const held = heldStore(openThreadStore(url));
    const engine = engineOn(url, held.store);
    try {
      must(await other.createThread({ threadId: 't', saltPayloads: true }));
      must(
        await other.appendNodes({
          threadId: 't',
          nodes: [{ kind: 'goal', payload: { text: 'the deleted thread' } }],
        }),
      );

      // The engine reads the thread's log and salt, and answers only after the deletion.
      const gate = held.arm(['readEntryTexts', 'getPayloadSalt']);
      const racing = engine.getState('t');
      await gate.reached;
      must(await engine.deleteThread({ threadId: 't' }));
      // Made again by an engine that never saw the deleted thread.
      const third = engineOn(url);
      must(await third.createThread({ threadId: 't' }));
      await third.close();
      gate.release();
      await racing;

      const state = must(await engine.getState('t'));
      expect(state.length).toBe(1);
      expect(state.graph.count).toBe(0);

      // The new thread is not salted: a node appended through this engine gets no salt.
      must(
        await engine.appendNodes({
          threadId: 't',
          nodes: [{ kind: 'goal', payload: { text: 'the new thread' } }],
        }),
      );
      const fresh = engineOn(url);
      const after = must(await fresh.getState('t'));
      await fresh.close();
      expect(after.graph.count).toBe(1);
      expect(getNodeBySequence(after.graph, 1)?.payload).toEqual({ text: 'the new thread' });
    } finally {
      await engine.close();
      await other.close();
    }
  });

  it("the event hub answers a thread made again under a deleted one's id with its own pages and state", async () => {
    const url = await backend.freshUrl();
    const node = await openNode(url);
    try {
      const goal = (text: string) => [{ kind: 'goal' as const, payload: { text } }];
      must(await node.engine.createThread({ threadId: 't' }));
      must(await node.engine.appendNodes({ threadId: 't', nodes: goal('the deleted thread') }));
      // A full page and the derived state of the thread, as subscribers leave them.
      expect(await node.hub.read('t', 0, 2)).toHaveLength(2);
      expect((await node.hub.latestState('t')).graph.count).toBe(1);

      must(await node.engine.deleteThread({ threadId: 't' }));
      const other = engineOn(url);
      must(await other.createThread({ threadId: 't' }));
      must(await other.appendNodes({ threadId: 't', nodes: goal('the new thread') }));
      await other.close();

      const page = await node.hub.read('t', 0, 2);
      expect(JSON.stringify(page)).not.toContain('the deleted thread');
      expect(JSON.stringify(page)).toContain('the new thread');
      const state = await node.hub.latestState('t');
      expect(getNodeBySequence(state.graph, 1)?.payload).toEqual({ text: 'the new thread' });
    } finally {
      await node.close();
    }
  });
});
