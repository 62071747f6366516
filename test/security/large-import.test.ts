/**
 * An import does not hold the event loop from start to end: it runs in time slices (checking the
 * state, committing its entry, deriving its rows, storing them), and other callbacks run between
 * them, so other clients are served while a large AgentState is imported. The engine here gives
 * a turn at every step (sliceMs 0), so the turns seen do not depend on the machine's speed. A
 * turn counter runs beside the import and is read when the import asks the clock for the entry's
 * time (after checking the state) and when it hands its changes to the store (the one
 * transaction). Nothing is written before that. The check itself runs in chunks of nodes, so a
 * larger state is checked over more turns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { freshSqliteUrl } from '../api/support.js';

const NODES = 2_000;

describe('a large importState yields between its steps', () => {
  let engine: Engine;
  let state: unknown;
  /** Turns of the event loop seen by the counter, at the clock read and at the commit. */
  const seen: { atClock?: number | undefined; atCommit?: number | undefined } = {};
  let turns = 0;
  let watching = false;

  beforeAll(async () => {
    const store = openThreadStore(await freshSqliteUrl());
    const commit = store.commit.bind(store);
    store.commit = (changes, options) => {
      if (watching) seen.atCommit ??= turns;
      return commit(changes, options);
    };
    const clock = createSimulatedClock('2026-03-01T00:00:00.000Z', 1);
    engine = createEngine({
      store,
      sliceMs: 0,
      clock: {
        now: () => {
          if (watching) seen.atClock ??= turns;
          return clock.now();
        },
      },
    });
    state = await exportedChain('source', NODES);
  });

  /** The AgentState of a new thread `threadId` of `count` nodes in a chain, as a client sends it. */
  async function exportedChain(threadId: string, count: number): Promise<unknown> {
    expect((await engine.createThread({ threadId })).ok).toBe(true);
    for (let from = 0; from < count; from += 1_000) {
      const nodes = Array.from({ length: 1_000 }, (_, k) => ({
        kind: 'answer' as const,
        payload: { i: from + k },
      }));
      expect((await engine.appendNodes({ threadId, nodes })).ok).toBe(true);
    }
    const exported = await engine.stateAt(threadId);
    if (!exported.ok) throw new Error(exported.error.message);
    return JSON.parse(JSON.stringify(exported.value.agentState));
  }
  afterAll(() => engine?.close());

  it('lets other callbacks run before it reads the clock and again before it commits', async () => {
    let importing = true;
    const tick = () => {
      turns++;
      if (importing) setImmediate(tick);
    };
    setImmediate(tick);
    watching = true;
    const imported = await engine.importState({ threadId: 'copy', state });
    importing = false;
    watching = false;
    expect(imported.ok).toBe(true);
    // Checking the state is a step of its own: the loop turned before and after it.
    expect(seen.atClock).toBeGreaterThanOrEqual(2);
    // Applying it and deriving its rows are steps of their own too.
    expect(seen.atCommit).toBeGreaterThanOrEqual(seen.atClock! + 2);
    const copy = await engine.stateAt('copy');
    expect(copy.ok && copy.value.agentState).toEqual(state);
  });

  it('checks a larger state in more turns: the check itself is cut into chunks of nodes', async () => {
    const big = await exportedChain('big', NODES * 4);
    /** Turns from the check's first read of the nodes to the clock read right after the check. */
    const turnsOfCheck = async (threadId: string, exported: unknown) => {
      const { nodes, ...rest } = exported as { nodes: unknown[] };
      const watched = { ...rest };
      let readAt: number | undefined;
      Object.defineProperty(watched, 'nodes', {
        enumerable: true,
        get: () => {
          if (watching && seen.atClock === undefined) readAt = turns;
          return nodes;
        },
      });
      seen.atClock = undefined;
      turns = 0;
      let importing = true;
      const tick = () => {
        turns++;
        if (importing) setImmediate(tick);
      };
      setImmediate(tick);
      watching = true;
      const result = await engine.importState({ threadId, state: watched });
      importing = false;
      watching = false;
      expect(result.ok).toBe(true);
      return seen.atClock! - readAt!;
    };
    const small = await turnsOfCheck('small-copy', state);
    const large = await turnsOfCheck('big-copy', big);
    // Checked whole, both would take the same turns: the check's own and the one after it.
    expect(large).toBeGreaterThan(small);
  });

  it('a state refused by a rule writes nothing, whichever step refuses it', async () => {
    const bad = structuredClone(state) as { nodes: Array<{ payload: unknown }> };
    // The last node's content no longer matches its id: found after every other node is checked.
    bad.nodes.at(-1)!.payload = { i: 'changed' };
    const refused = await engine.importState({ threadId: 'bad', state: bad });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error.code).toBe('NODE_ID_MISMATCH');
    const after = await engine.stateAt('bad');
    expect(after.ok).toBe(false);
    if (!after.ok) expect(after.error.code).toBe('NOT_FOUND');
  });
});
