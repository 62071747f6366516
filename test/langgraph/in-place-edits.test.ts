/**
 * A checkpoint's list that goes on from its parent's with the same objects is taken as it is
 * (src/langgraph/items.ts), so the saver must learn from a step's writes that a node returned a
 * message it was handed, edited in place. These runs return such an edit beside a new message —
 * where the list grows, so only that signal can tell — and check that the writer, reading back,
 * and a fresh process both see what LangGraph's own state held: with checkpoints that lag the
 * steps (LangGraph's default durability chains them, so the next step's writes come first), with
 * a read of an older checkpoint in the middle of the editing node, and with the list returned
 * inside an `Overwrite`.
 */
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import {
  Annotation,
  END,
  MessagesAnnotation,
  Overwrite,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import { type Backend, sqliteBackend } from '../engine/support.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const contents = (messages: BaseMessage[]) => messages.map((m) => m.content);

/**
 * The engine, its checkpoints written `ms` later (a slow database round trip): the real engine
 * and database, only the call delayed, so LangGraph runs ahead of its checkpoints.
 */
function laggingCheckpoints(engine: Engine, ms: number): Engine {
  return new Proxy(engine, {
    get(target, prop) {
      if (prop === 'saveCheckpoint') {
        return async (...args: Parameters<Engine['saveCheckpoint']>) => {
          await sleep(ms);
          return target.saveCheckpoint(...args);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  note: Annotation<string>,
});

/**
 * agent (slow, as a model call is) → router (writes only `note`) → editor, which — asked to
 * "edit and answer" — edits the first answer in place and returns it with a new answer.
 */
function compile(saver: WeftSaver, duringEdit?: () => Promise<unknown>) {
  return new StateGraph(State)
    .addNode('agent', async (state) => {
      await sleep(100);
      const asked = state.messages.at(-1)!;
      return {
        messages: [new AIMessage({ id: `a-${asked.id}`, content: `re: ${asked.content}` })],
      };
    })
    .addNode('router', () => ({ note: 'routed' }))
    .addNode('editor', async (state) => {
      const asked = state.messages.findLast((m) => HumanMessage.isInstance(m))!;
      if (asked.content !== 'edit and answer') return { note: 'no edit' };
      const first = state.messages.find((m) => AIMessage.isInstance(m))!;
      first.content = 'edited in place';
      if (duringEdit !== undefined) await duringEdit();
      return { messages: [first, new AIMessage({ id: `e-${asked.id}`, content: 'and more' })] };
    })
    .addEdge(START, 'agent')
    .addEdge('agent', 'router')
    .addEdge('router', 'editor')
    .addEdge('editor', END)
    .compile({ checkpointer: saver });
}

describe('WeftSaver with an edit made in place and returned beside a new message [sqlite]', () => {
  const backend: Backend = sqliteBackend();
  let engine: Engine;
  let url: string;

  beforeAll(async () => {
    url = await backend.freshUrl();
    engine = await openEngine(url);
  });
  afterAll(async () => {
    await engine.close();
    await backend.cleanup();
  });

  /** What a fresh process reads as the latest state of `config`'s thread. */
  async function freshRead(
    config: { configurable: { thread_id: string } },
    build: (saver: WeftSaver) => { getState: (c: typeof config) => Promise<{ values: unknown }> },
  ) {
    const fresh = await openEngine(url);
    try {
      const state = await build(new WeftSaver({ engine: fresh })).getState(config);
      return contents((state.values as { messages: BaseMessage[] }).messages);
    } finally {
      await fresh.close();
    }
  }

  for (const durability of ['async', 'sync'] as const) {
    it(`stores it with checkpoints lagging the steps (durability ${durability})`, async () => {
      const graph = compile(new WeftSaver({ engine: laggingCheckpoints(engine, 25) }));
      const config = { configurable: { thread_id: `lagging-${durability}` }, durability };
      await graph.invoke({ messages: [new HumanMessage({ id: 'q1', content: 'one' })] }, config);
      const out = await graph.invoke(
        { messages: [new HumanMessage({ id: 'q2', content: 'edit and answer' })] },
        config,
      );
      const held = ['one', 'edited in place', 'edit and answer', 're: edit and answer', 'and more'];
      expect(contents(out.messages)).toEqual(held);
      expect(contents((await graph.getState(config)).values.messages)).toEqual(held);
      expect(await freshRead(config, compile)).toEqual(held);
    });
  }

  it('stores it when a read of an older checkpoint comes in the middle of the edit', async () => {
    const config = { configurable: { thread_id: 'read-meanwhile' }, durability: 'sync' as const };
    const first = new WeftSaver({ engine });
    await compile(first).invoke(
      { messages: [new HumanMessage({ id: 'q1', content: 'one' })] },
      config,
    );
    const older = (await compile(first).getState(config)).config;
    // Another saver carries the thread on: the messages it holds are ones it decoded.
    const saver = new WeftSaver({ engine });
    const graph = compile(saver, () => saver.getTuple(older));
    const out = await graph.invoke(
      { messages: [new HumanMessage({ id: 'q2', content: 'edit and answer' })] },
      config,
    );
    const held = ['one', 'edited in place', 'edit and answer', 're: edit and answer', 'and more'];
    expect(contents(out.messages)).toEqual(held);
    expect(contents((await graph.getState(config)).values.messages)).toEqual(held);
    expect(await freshRead(config, compile)).toEqual(held);
  });

  it('stores it when the node returns the grown list inside an Overwrite', async () => {
    const compileOverwrite = (saver: WeftSaver) =>
      new StateGraph(MessagesAnnotation)
        .addNode('agent', (state) => {
          const asked = state.messages.at(-1)!;
          if (asked.content !== 'overwrite') {
            return {
              messages: [new AIMessage({ id: `a-${asked.id}`, content: `re: ${asked.content}` })],
            };
          }
          const answer = state.messages.find((m) => AIMessage.isInstance(m))!;
          answer.content = 'edited in place';
          const grown = [
            ...state.messages,
            new AIMessage({ id: `a-${asked.id}`, content: 'more' }),
          ];
          return { messages: new Overwrite(grown) } as never;
        })
        .addEdge(START, 'agent')
        .addEdge('agent', END)
        .compile({ checkpointer: saver });
    const graph = compileOverwrite(new WeftSaver({ engine }));
    const config = { configurable: { thread_id: 'overwrite' }, durability: 'sync' as const };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q1', content: 'one' })] }, config);
    const out = await graph.invoke(
      { messages: [new HumanMessage({ id: 'q2', content: 'overwrite' })] },
      config,
    );
    const held = ['one', 'edited in place', 'overwrite', 'more'];
    expect(contents(out.messages)).toEqual(held);
    expect(contents((await graph.getState(config)).values.messages)).toEqual(held);
    expect(await freshRead(config, compileOverwrite)).toEqual(held);
  });
});
