/**
 * WeftSaver hands the same decoded message objects to successive reads and knows the hash of
 * each object it read or wrote (see src/langgraph/items.ts). These tests change messages in place
 * — what LangGraph asks nodes not to do — and check that nothing stale is stored or read back:
 * a message edited in place and returned as an update is stored with its new content (a fresh
 * process reads it), the checkpoints before the edit still read the original, and an object
 * changed by a reader is not what the next read returns.
 */
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import { type Backend, sqliteBackend } from '../engine/support.js';

/** A node that answers, or — asked to "edit" — rewrites the first answer in place. */
function compileEditor(saver: WeftSaver) {
  const node = (state: typeof MessagesAnnotation.State) => {
    const asked = state.messages.at(-1)!;
    if (asked.content !== 'edit') {
      return {
        messages: [new AIMessage({ id: `a-${asked.id}`, content: `re: ${asked.content}` })],
      };
    }
    const first = state.messages.find((m) => AIMessage.isInstance(m))!;
    first.content = 'edited in place';
    return { messages: [first] };
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
});
