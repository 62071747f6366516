/**
 * WeftSaver loads what LangGraph's default serializer wrote without that serializer's loader
 * where nothing in the text needs it (revive.ts). Each value here goes through
 * `JsonPlusSerializer` both ways: the fast path must build exactly what its loader builds (same
 * classes, same fields), and hand back to it whatever it does not reproduce.
 */
import {
  AIMessage,
  AIMessageChunk,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { describe, expect, it } from 'vitest';
import { fastLoad, isDefaultSerializer, NEEDS_SERIALIZER } from '../../src/langgraph/revive.js';

const serde = new JsonPlusSerializer();

async function roundTrip(value: unknown): Promise<{ text: string; loaded: unknown }> {
  const [type, bytes] = await serde.dumpsTyped(value);
  expect(type).toBe('json');
  const text = typeof bytes === 'string' ? bytes : new TextDecoder().decode(bytes);
  return { text, loaded: await serde.loadsTyped('json', text) };
}

const plain: Array<[string, unknown]> = [
  ['a string', 'hello'],
  ['a number', 42.5],
  ['null', null],
  ['a list', [1, 'two', { three: [3] }]],
  ['a dict', { user: 'ada', prefs: { theme: 'dark', langs: ['en', 'fr'] }, empty: {} }],
  ['unicode', { text: 'naïve — 日本語 🧵' }],
];

const messages: Array<[string, unknown]> = [
  ['a human message', new HumanMessage({ id: 'h1', content: 'Book a flight', name: 'ada' })],
  [
    'a human message with parts',
    new HumanMessage({
      id: 'h2',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      ],
      additional_kwargs: { source: 'mobile' },
    }),
  ],
  [
    'an AI message with tool calls and usage',
    new AIMessage({
      id: 'a1',
      content: 'Let me look.',
      tool_calls: [{ id: 'c1', name: 'search', args: { q: 'flights', max: 3 }, type: 'tool_call' }],
      invalid_tool_calls: [
        { id: 'c2', name: 'bad', args: '{', error: 'unparsable', type: 'invalid_tool_call' },
      ],
      // Typed as undefined by this version's message types, though set and serialized.
      usage_metadata: { input_tokens: 12, output_tokens: 5, total_tokens: 17 } as never,
      response_metadata: { model: 'm-1', finish_reason: 'tool_calls' },
    }),
  ],
  [
    'an AI message chunk',
    new AIMessageChunk({
      id: 'a2',
      content: 'partial',
      usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 } as never,
    }),
  ],
  [
    'a tool message',
    new ToolMessage({
      id: 't1',
      tool_call_id: 'c1',
      content: '3 results',
      status: 'success',
      artifact: { rows: [1, 2, 3] },
      name: 'search',
    }),
  ],
  ['a system message', new SystemMessage({ id: 's1', content: 'Be brief.' })],
  ['a chat message', new ChatMessage({ id: 'ch1', content: 'hi', role: 'narrator' })],
  ['a function message', new FunctionMessage({ id: 'f1', content: '{}', name: 'fn' })],
  ['a remove message', new RemoveMessage({ id: 'r1' })],
];

/** Values whose text holds something only the serializer's loader handles. */
const handedBack: Array<[string, unknown]> = [
  ['a dict holding a message', { last: new HumanMessage({ id: 'h3', content: 'nested' }) }],
  ['a list of messages', [new HumanMessage({ id: 'h4', content: 'one' })]],
  ['a set', new Set([1, 2])],
  ['a map', new Map([['a', 1]])],
  ['a user dict with an lc key', { lc: 1, type: 'constructor', id: ['not', 'a', 'class'] }],
  [
    'a message whose fields hold a message',
    new AIMessage({
      id: 'a3',
      content: 'x',
      additional_kwargs: { quoted: new HumanMessage({ id: 'h5', content: 'inner' }) },
    }),
  ],
  ['an undefined member', { kept: 1, gone: undefined }],
  ['a chunk without usage (an undefined field)', new AIMessageChunk({ id: 'a4', content: 'p' })],
];

describe('revive: loading LangGraph serializer output without its loader', () => {
  it.each([...plain, ...messages])('%s: the same value as JsonPlusSerializer', async (_, value) => {
    const { text, loaded } = await roundTrip(value);
    const fast = fastLoad(text);
    expect(fast).not.toBe(NEEDS_SERIALIZER);
    expect(fast).toStrictEqual(loaded);
    if (typeof loaded === 'object' && loaded !== null) {
      expect(Object.getPrototypeOf(fast)).toBe(Object.getPrototypeOf(loaded));
      expect(Object.keys(fast as object)).toEqual(Object.keys(loaded));
    }
  });

  it.each(handedBack)('%s: handed back to the serializer', async (_, value) => {
    const { text } = await roundTrip(value);
    expect(fastLoad(text)).toBe(NEEDS_SERIALIZER);
  });

  it('hands deeply nested values back (the serializer keeps its own depth limit)', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 60; i++) deep = { d: deep };
    const { text } = await roundTrip(deep);
    expect(fastLoad(text)).toBe(NEEDS_SERIALIZER);
  });

  it('is taken only for the default serializer itself, not a subclass of it', () => {
    class Custom extends JsonPlusSerializer {}
    expect(isDefaultSerializer(serde)).toBe(true);
    expect(isDefaultSerializer(new Custom())).toBe(false);
  });
});
