/**
 * A fresh WeftSaver (a new process) reads a thread without its nodes' payloads: the checkpoint
 * entries name the node each message became, so the fold needs none of them. Proved by deleting
 * the node rows behind the saver's back: the state read is unchanged, while a read with payloads
 * fails. A fresh saver that goes on writing makes the same nodes
 * the first one would have, also on a thread written before the entries named them. On SQLite
 * and Postgres.
 */

import { randomBytes } from 'node:crypto';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import { type Backend, postgresBackend, sqliteBackend } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';

type State = typeof MessagesAnnotation.State;

/** Long enough that each entry's node payloads are stored apart from it (packed). */
const filler = (n: number) => `${'a long enough sentence about the weather. '.repeat(3)}#${n}`;

/** One turn: a tool call, its result and the answer, with ids that depend on the turn only. */
function turnOf(state: State): Partial<State> {
  const turn = state.messages.filter((m) => HumanMessage.isInstance(m)).length;
  return {
    messages: [
      new AIMessage({
        id: `t${turn}-call`,
        content: filler(turn),
        tool_calls: [{ id: `call-${turn}`, name: 'lookup', args: { q: turn }, type: 'tool_call' }],
      }),
      new ToolMessage({
        id: `t${turn}-result`,
        tool_call_id: `call-${turn}`,
        content: filler(-turn),
      }),
      new AIMessage({ id: `t${turn}-answer`, content: `answer ${turn}: ${filler(turn)}` }),
    ],
  };
}

const compile = (saver: WeftSaver) =>
  new StateGraph(MessagesAnnotation).addNode('agent', turnOf).addEdge(START, 'agent').compile({
    checkpointer: saver,
  });

const ask = (n: number) => ({
  messages: [new HumanMessage({ id: `t${n}-goal`, content: filler(n) })],
});

const config = (threadId: string) => ({ configurable: { thread_id: threadId } });

/** The ids of the nodes the thread's checkpoints created, in log order. */
async function checkpointNodeIds(engine: Engine, weftId: string): Promise<string[]> {
  const read = await engine.readEntries(weftId);
  if (!read.ok) throw new Error(read.error.message);
  return read.value.flatMap((entry) => {
    const event = entry.event as unknown as { type: string; nodes?: Array<{ id: string }> };
    return event.type === 'checkpoint_saved' ? (event.nodes ?? []).map((n) => n.id) : [];
  });
}

/** An engine whose checkpoint entries do not name their nodes: how savers wrote them before. */
function withoutNodeRefs(engine: Engine): Engine {
  return new Proxy(engine, {
    get(target, property, receiver) {
      if (property === 'saveCheckpoint') {
        return (input: Parameters<Engine['saveCheckpoint']>[0]) => {
          const { n: _refs, ...data } = input.data as Record<string, unknown>;
          return target.saveCheckpoint({ ...input, data: data as never });
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** An engine that counts the log reads made with the nodes' payloads. */
function countingPayloadReads(engine: Engine): { engine: Engine; payloadReads: () => number } {
  let count = 0;
  const counting = new Proxy(engine, {
    get(target, property, receiver) {
      if (property === 'readEntries') {
        return (...args: Parameters<Engine['readEntries']>) => {
          if (args[2]?.nodePayloads !== false) count += 1;
          return target.readEntries(...args);
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { engine: counting, payloadReads: () => count };
}

const view = (messages: BaseMessage[]) =>
  messages.map((m) => ({ type: m.getType(), id: m.id, content: m.content }));

/** `encrypted`: entries and payloads sealed at rest, every engine of the suite with the one key. */
function suite(name: 'sqlite' | 'postgres', encrypted = false) {
  const backend: Backend = name === 'sqlite' ? sqliteBackend() : postgresBackend();
  const engines: Engine[] = [];
  const key = randomBytes(32);
  const open = async (url: string) => {
    const engine = await openEngine(url, encrypted ? { storeOptions: { encryptionKey: key } } : {});
    engines.push(engine);
    return engine;
  };
  afterAll(async () => {
    for (const engine of engines) await engine.close();
    await backend.cleanup();
  });

  /** Deletes every node row of the database behind Weft's back (their payloads with them). */
  async function dropNodeRows(url: string): Promise<number> {
    if (name === 'sqlite') {
      const db = new Database(url.slice('file:'.length));
      try {
        db.pragma('foreign_keys = OFF');
        return db.prepare('DELETE FROM node').run().changes;
      } finally {
        db.close();
      }
    }
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Without the foreign keys' and triggers' checks, as a damaged database would be.
      await client.query("SET session_replication_role = 'replica'");
      return (await client.query('DELETE FROM node')).rowCount ?? 0;
    } finally {
      await client.end();
    }
  }

  it('reads the latest state without reading the nodes’ payloads', async () => {
    const url = await backend.freshUrl();
    const writer = new WeftSaver({ engine: await open(url) });
    const graph = compile(writer);
    for (let n = 1; n <= 3; n++) await graph.invoke(ask(n), config('chat'));
    const written = view((await graph.getState(config('chat'))).values.messages);
    expect(written).toHaveLength(12);

    expect(await dropNodeRows(url)).toBeGreaterThan(0);
    const engine = await open(url);
    const fresh = new WeftSaver({ engine });
    const read = view((await compile(fresh).getState(config('chat'))).values.messages);
    expect(read).toEqual(written);

    // A read with the payloads cannot be made any more: the fresh saver's read above made none.
    await expect(engine.readEntries(fresh.weftThreadId(config('chat')))).rejects.toThrow(
      /needs the payload of node \d+, which is missing/,
    );
  });

  it('goes on writing the nodes the first saver would have, on new and older threads', async () => {
    const url = await backend.freshUrl();
    const first = await open(url);
    const control = compile(new WeftSaver({ engine: first }));
    for (let n = 1; n <= 3; n++) await control.invoke(ask(n), config('control'));

    for (const [thread, writerEngine] of [
      ['named', first],
      ['older', withoutNodeRefs(first)],
    ] as const) {
      const before = compile(new WeftSaver({ engine: writerEngine }));
      for (let n = 1; n <= 2; n++) await before.invoke(ask(n), config(thread));
      // A new process: its own engine and saver, nothing folded yet.
      const counted = countingPayloadReads(await open(url));
      const fresh = new WeftSaver({ engine: counted.engine });
      const after = compile(fresh);
      expect(view((await after.getState(config(thread))).values.messages)).toHaveLength(8);
      await after.invoke(ask(3), config(thread));
      // Only the older thread's entries need their nodes' payloads, once, before the write.
      expect(counted.payloadReads(), thread).toBe(thread === 'older' ? 1 : 0);

      const expected = await checkpointNodeIds(first, fresh.weftThreadId(config('control')));
      const actual = await checkpointNodeIds(first, fresh.weftThreadId(config(thread)));
      expect(expected).toHaveLength(3 * 5);
      expect(actual, thread).toEqual(expected);
    }
  });
}

describe('WeftSaver fresh read [sqlite]', () => suite('sqlite'));
describe('WeftSaver fresh read [sqlite, encrypted]', () => suite('sqlite', true));
describeWithPostgres('WeftSaver fresh read', () => suite('postgres'));
describeWithPostgres('WeftSaver fresh read, encrypted', () => suite('postgres', true));
