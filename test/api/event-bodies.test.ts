/**
 * A list of `Thread.events` reads the entries' heads, and the bodies (`entry`) only of the entries
 * whose `entry` is asked for, together. On SQLite (with and without encryption at rest) and
 * Postgres: a page's bodies are those read one by one, in either direction, in two windows of
 * one query, and through a fork's shared history; a list without `entry` answers the same heads.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithPostgres } from '../support/services.js';
import { createTestApp, type TestApp } from './support.js';

interface Event {
  index: number;
  id: string;
  type: string;
  entry?: unknown;
}

function suite(backend: 'sqlite' | 'postgres', encrypted = false) {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({
      backend,
      ...(encrypted ? { encryptionKey: new Uint8Array(randomBytes(32)) } : {}),
    });
    await t.gql('mutation { createThread(input: { threadId: "b" }) { __typename } }');
    for (let i = 0; i < 12; i++) {
      const r = await t.gql(
        'mutation ($nodes: [NodeInput!]!) { appendNodes(input: { threadId: "b", nodes: $nodes }) { __typename } }',
        {
          nodes: Array.from({ length: 1 + (i % 3) }, (_, k) => ({
            kind: 'INFERENCE',
            payload: { role: 'ai', content: `entry ${i} node ${k}` },
          })),
        },
      );
      expect(r.data?.appendNodes.__typename).toBe('AppendNodesSuccess');
    }
    const fork = await t.gql(
      'mutation { forkThread(input: { threadId: "b", upToIndex: 7, newThreadId: "f" }) { __typename } }',
    );
    expect(fork.data?.forkThread.__typename).toBe('ForkThreadSuccess');
    await t.gql(
      'mutation { appendNodes(input: { threadId: "f", nodes: [{ kind: SYSTEM, payload: "the fork\'s own" }] }) { __typename } }',
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const list = async (thread: string, args: string, fields: string): Promise<Event[]> => {
    const r = await t.gql(
      `{ thread(id: "${thread}") { events(${args}) { edges { node { ${fields} } } } } }`,
    );
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    return r.data.thread.events.edges.map((e: { node: Event }) => e.node);
  };
  /** Each entry read on its own: a page of one, its body read with its head. */
  const oneByOne = async (thread: string, indices: number[]) => {
    const out: Event[] = [];
    for (const index of indices) {
      const [only] = await list(
        thread,
        `afterIndex: ${index - 1}, first: 1`,
        'index id type entry',
      );
      out.push(only!);
    }
    return out;
  };

  it('reads a page’s bodies as the entries read one by one, in either direction', async () => {
    const all = await list('b', 'first: 100', 'index id type entry');
    expect(all.map((e) => e.index)).toEqual(Array.from({ length: 13 }, (_, i) => i));
    expect(all).toEqual(
      await oneByOne(
        'b',
        all.map((e) => e.index),
      ),
    );
    expect(JSON.stringify(all[5]!.entry)).toContain('entry 4 node 0');
    const newest = await list('b', 'direction: DESC, first: 4', 'index id type entry');
    expect(newest).toEqual([...all].reverse().slice(0, 4));
  });

  it('answers the same heads without bodies', async () => {
    const heads = await list('b', 'first: 100', 'index id type');
    const all = await list('b', 'first: 100', 'index id type entry');
    expect(heads).toEqual(all.map(({ entry: _, ...head }) => head));
  });

  it('reads the bodies of two windows of one query', async () => {
    const r = await t.gql(`{ thread(id: "b") {
      early: events(afterIndex: 0, first: 2) { edges { node { index entry } } }
      late: events(afterIndex: 9, first: 2) { edges { node { index entry } } } } }`);
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    const got = [...r.data.thread.early.edges, ...r.data.thread.late.edges].map(
      (e: { node: Event }) => e.node,
    );
    const expected = (await oneByOne('b', [1, 2, 10, 11])).map(({ index, entry }) => ({
      index,
      entry,
    }));
    expect(got).toEqual(expected);
  });

  it('reads a fork’s bodies through its shared history', async () => {
    const fork = await list('f', 'first: 100', 'index id type entry');
    const source = await list('b', 'first: 7', 'index id type entry');
    expect(fork.slice(0, 7)).toEqual(source);
    // Then the fork's own: the entry that made it, and the append.
    expect(fork.map((e) => e.index)).toEqual(Array.from({ length: 9 }, (_, i) => i));
    expect(JSON.stringify(fork[8]!.entry)).toContain("the fork's own");
    expect(fork).toEqual(
      await oneByOne(
        'f',
        fork.map((e) => e.index),
      ),
    );
  });
}

describe('Thread.events bodies (SQLite)', () => suite('sqlite'));
describe('Thread.events bodies (SQLite, encrypted at rest)', () => suite('sqlite', true));
describeWithPostgres('Thread.events bodies (Postgres)', () => suite('postgres'));
