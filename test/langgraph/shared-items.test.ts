/**
 * WeftSaver hands the same decoded message objects to successive reads and knows the hash of
 * each object it read or wrote (see src/langgraph/items.ts). These tests change messages in place
 * — what LangGraph asks nodes not to do — and check that nothing stale is stored or read back:
 * a message edited in place and returned as an update is stored with its new content (a fresh
 * process reads it), the checkpoints before the edit still read the original, and an object
 * changed by a reader is not what the next read returns. A list that extends one held before
 * goes on from its arrays: branches that extend the same checkpoint each keep their own items.
 */
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { type Checkpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import { type Backend, sqliteBackend } from '../engine/support.js';

/**
 * A node that answers, or — asked to "edit" — rewrites the first answer in place and returns it
 * (to "edit and answer", together with a new answer).
 */
function compileEditor(saver: WeftSaver) {
  const node = (state: typeof MessagesAnnotation.State) => {
    const asked = state.messages.at(-1)!;
    if (asked.content !== 'edit' && asked.content !== 'edit and answer') {
      return {
        messages: [new AIMessage({ id: `a-${asked.id}`, content: `re: ${asked.content}` })],
      };
    }
    const first = state.messages.find((m) => AIMessage.isInstance(m))!;
    first.content = 'edited in place';
    if (asked.content === 'edit') return { messages: [first] };
    // The edited message and a new answer: the list grows as well.
    return { messages: [first, new AIMessage({ id: `a-${asked.id}`, content: 'and more' })] };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', node)
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer: saver });
}

const contents = (messages: BaseMessage[]) => messages.map((m) => m.content);

describe('WeftSaver with messages changed in place [sqlite]', () => {
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

  it('stores an edit made in place and keeps the checkpoints before it as they were', async () => {
    const saver = new WeftSaver({ engine });
    const graph = compileEditor(saver);
    const config = { configurable: { thread_id: 'edited' } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q1', content: 'one' })] }, config);
    const before = (await graph.getState(config)).config;
    await graph.invoke({ messages: [new HumanMessage({ id: 'q2', content: 'edit' })] }, config);

    const latest = ['one', 'edited in place', 'edit'];
    expect(contents((await graph.getState(config)).values.messages)).toEqual(latest);
    expect(contents((await graph.getState(before)).values.messages)).toEqual(['one', 're: one']);

    const fresh = await openEngine(url);
    try {
      const other = compileEditor(new WeftSaver({ engine: fresh }));
      expect(contents((await other.getState(config)).values.messages)).toEqual(latest);
      expect(contents((await other.getState(before)).values.messages)).toEqual(['one', 're: one']);
    } finally {
      await fresh.close();
    }
  });

  it('stores an edit made in place and returned beside a new message', async () => {
    const saver = new WeftSaver({ engine });
    const graph = compileEditor(saver);
    const config = { configurable: { thread_id: 'edited-and-grown' } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q1', content: 'one' })] }, config);
    const before = (await graph.getState(config)).config;
    await graph.invoke(
      { messages: [new HumanMessage({ id: 'q2', content: 'edit and answer' })] },
      config,
    );

    const latest = ['one', 'edited in place', 'edit and answer', 'and more'];
    expect(contents((await graph.getState(config)).values.messages)).toEqual(latest);
    expect(contents((await graph.getState(before)).values.messages)).toEqual(['one', 're: one']);
    const fresh = await openEngine(url);
    try {
      const other = compileEditor(new WeftSaver({ engine: fresh }));
      expect(contents((await other.getState(config)).values.messages)).toEqual(latest);
    } finally {
      await fresh.close();
    }
  });

  it('does not hand a reader the object another reader changed', async () => {
    const saver = new WeftSaver({ engine });
    const graph = compileEditor(saver);
    const config = { configurable: { thread_id: 'read-twice' } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q1', content: 'one' })] }, config);
    const first = await saver.getTuple(config);
    const messages = first!.checkpoint.channel_values.messages as BaseMessage[];
    messages[1]!.content = 'scribbled';
    const second = await saver.getTuple(config);
    expect(contents(second!.checkpoint.channel_values.messages as BaseMessage[])).toEqual([
      'one',
      're: one',
    ]);
    // An unchanged message is the very object read before: the sharing this guards.
    expect((second!.checkpoint.channel_values.messages as BaseMessage[])[0]).toBe(messages[0]);
  });

  it('keeps apart branches that extend the same checkpoint, in this process and a fresh one', async () => {
    const saver = new WeftSaver({ engine });
    const thread = { configurable: { thread_id: 'branches', checkpoint_ns: '' } };
    const metadata = { source: 'update' as const, step: 0, parents: {} };
    let version = saver.getNextVersion(undefined);
    const put = (config: RunnableConfig, messages: BaseMessage[]) => {
      version = saver.getNextVersion(version);
      const checkpoint: Checkpoint = {
        v: 4,
        id: uuid6(-1),
        ts: new Date().toISOString(),
        channel_values: { messages },
        channel_versions: { messages: version },
        versions_seen: {},
      };
      return saver.put(config, checkpoint, metadata, { messages: version });
    };
    const m = (content: string) => new HumanMessage({ id: content, content });
    const root = [m('one'), m('two')];
    const atRoot = await put(thread, root);
    const left = await put(atRoot, [...root, m('left')]);
    const right = await put(atRoot, [...root, m('right'), m('more')]);
    const leftAgain = await put(left, [...root, m('left'), m('again')]);
    const rightAgain = await put(right, [...root, m('right'), m('more'), m('last')]);
    const expected: Array<[RunnableConfig, string[]]> = [
      [atRoot, ['one', 'two']],
      [left, ['one', 'two', 'left']],
      [right, ['one', 'two', 'right', 'more']],
      [leftAgain, ['one', 'two', 'left', 'again']],
      [rightAgain, ['one', 'two', 'right', 'more', 'last']],
    ];
    const fresh = await openEngine(url);
    try {
      for (const reader of [saver, new WeftSaver({ engine: fresh })]) {
        for (const [config, want] of expected) {
          const tuple = await reader.getTuple(config);
          expect(contents(tuple!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(
            want,
          );
        }
      }
    } finally {
      await fresh.close();
    }
  });
});
