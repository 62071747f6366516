/**
 * `nodeAppended` from a cursor starts at the entry that logged node `afterSequence + 1`, read off
 * that node's row (not by folding the thread's log). On SQLite and Postgres, on a fork whose
 * first nodes are its source's: from every cursor, the nodes after it and their log indexes;
 * past the end, the next node appended; and the same after the source is deleted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { nodeAppended } from '../../src/events/index.js';
import { type Backend, postgresBackend, sqliteBackend, useBackend } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';
import { must, type Node, openNode, take } from './support.js';

function suite(backend: Backend) {
  let opened: Node[] = [];
  afterEach(async () => {
    await Promise.all(opened.map((n) => n.close()));
    opened = [];
  });

  it('starts from the entry of node afterSequence + 1, through a fork’s shared history', async () => {
    const node = await openNode(await backend.freshUrl());
    opened.push(node);
    const { engine, hub } = node;
    must(await engine.createThread({ threadId: 's' }));
    for (const size of [2, 3, 1]) {
      must(
        await engine.appendNodes({
          threadId: 's',
          nodes: Array.from({ length: size }, (_, i) => ({
            kind: 'inference' as const,
            payload: { size, i },
          })),
        }),
      );
    }
    // Entries 0–2 (nodes 1–5) are shared; the fork's own nodes follow its own entry.
    must(await engine.forkThread({ threadId: 's', upToIndex: 3, newThreadId: 'f' }));
    for (const n of [1, 2]) {
      must(
        await engine.appendNodes({ threadId: 'f', nodes: [{ kind: 'system', payload: { n } }] }),
      );
    }
    const everything = await take(nodeAppended(hub, { threadId: 'f', afterSequence: 0 }), 7);
    const logged = everything.map((e) => [e.node.sequence, e.logIndex]);
    expect(logged.map(([sequence]) => sequence)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Nodes 1–2 in entry 1, 3–5 in entry 2 (the source's), 6 and 7 in the fork's own.
    expect(logged.map(([, index]) => index)).toEqual([1, 1, 2, 2, 2, 4, 5]);
    for (const [sequence, index] of logged) {
      expect(await hub.store.findNodeLogIndex('f', sequence!)).toBe(index);
    }
    expect(await hub.store.findNodeLogIndex('f', 8)).toBeUndefined();
    expect(await hub.store.findNodeLogIndex('f', 0)).toBeUndefined();

    // -1, like 0, is before the first node.
    const fromStart = await take(nodeAppended(hub, { threadId: 'f', afterSequence: -1 }), 7);
    expect(fromStart.map((e) => [e.node.sequence, e.logIndex])).toEqual(logged);
    const fromEach = async () => {
      for (let after = 0; after < logged.length; after++) {
        const got = await take(
          nodeAppended(hub, { threadId: 'f', afterSequence: after }),
          logged.length - after,
        );
        expect(got.map((e) => [e.node.sequence, e.logIndex])).toEqual(logged.slice(after));
      }
    };
    await fromEach();
    // Past the end: the next node appended.
    const next = nodeAppended(hub, { threadId: 'f', afterSequence: 7 });
    const pending = take(next, 1);
    must(await engine.appendNodes({ threadId: 'f', nodes: [{ kind: 'system', payload: 'last' }] }));
    expect((await pending).map((e) => [e.node.sequence, e.logIndex])).toEqual([[8, 6]]);
    logged.push([8, 6]);
    // The source gone, the fork still reads the rows it shares.
    must(await engine.deleteThread({ threadId: 's' }));
    await fromEach();
  });
}

describe('nodeAppended from a cursor (SQLite)', () => suite(useBackend(sqliteBackend())));
describeWithPostgres('nodeAppended from a cursor (Postgres)', () =>
  suite(useBackend(postgresBackend())),
);
