/**
 * Loading what LangGraph's default serializer (`JsonPlusSerializer`) wrote, without its loader
 * where the text holds nothing that loader would transform: plain JSON, or one LangChain message
 * whose fields are plain JSON. Its loader walks every value asynchronously, then serializes each
 * message again and walks it once more (LangChain's `load`), a promise per value, which made
 * reviving a long conversation most of what a fresh saver's read cost. The object built here is
 * the one that loader builds (same class, same constructor fields, same keys); anything else —
 * a nested LangChain object, an escaped value, a serializer of the user's own — goes to the
 * serializer as before.
 */
import * as messages from '@langchain/core/messages';
import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint';

/** What `fastLoad` answers when the text needs the serializer's own loader. */
export const NEEDS_SERIALIZER = Symbol('needs-serializer');

/**
 * Deeper values go to the serializer: LangChain's loader refuses nesting past 50 levels, and
 * leaving the deep ones to it keeps that refusal its own.
 */
const MAX_DEPTH = 40;

type MessageClass = new (fields: Record<string, unknown>) => object;

interface MessageBuilder {
  build: MessageClass;
  /** Serialized key → constructor field, from the class's `lc_aliases` up its prototype chain. */
  aliases: Readonly<Record<string, string>>;
}

/** The inverted `lc_aliases` of a class, as LangChain's loader collects them. */
function aliasesOf(builder: MessageClass): Record<string, string> {
  const collected: Record<string, string> = {};
  for (let c: unknown = builder; typeof c === 'function' && c.prototype; ) {
    Object.assign(collected, Reflect.get(c.prototype as object, 'lc_aliases'));
    c = Object.getPrototypeOf(c);
  }
  const aliases: Record<string, string> = {};
  for (const [key, value] of Object.entries(collected)) aliases[value] = key;
  return aliases;
}

/**
 * Message classes by their export name, which is how LangChain's loader finds the class of a
 * serialized id `langchain_core/messages/<name>`.
 */
const MESSAGE_BUILDERS: ReadonlyMap<string, MessageBuilder> = new Map(
  [
    'AIMessage',
    'AIMessageChunk',
    'ChatMessage',
    'ChatMessageChunk',
    'FunctionMessage',
    'FunctionMessageChunk',
    'HumanMessage',
    'HumanMessageChunk',
    'RemoveMessage',
    'SystemMessage',
    'SystemMessageChunk',
    'ToolMessage',
    'ToolMessageChunk',
  ].map((name) => {
    const build = (messages as unknown as Record<string, MessageClass>)[name]!;
    return [name, { build, aliases: aliasesOf(build) }];
  }),
);

/** True for LangGraph's default serializer itself (a subclass may load differently). */
export function isDefaultSerializer(serde: SerializerProtocol): boolean {
  return Object.getPrototypeOf(serde) === JsonPlusSerializer.prototype;
}

/** The value of `text` as `JsonPlusSerializer.loadsTyped('json', text)` gives it, or NEEDS_SERIALIZER. */
export function fastLoad(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (isPlain(value, 0)) return value;
  const record = value as Record<string, unknown>;
  if (
    record.lc !== 1 ||
    record.type !== 'constructor' ||
    !Array.isArray(record.id) ||
    record.id.length !== 3 ||
    record.id[0] !== 'langchain_core' ||
    record.id[1] !== 'messages' ||
    typeof record.kwargs !== 'object' ||
    record.kwargs === null ||
    Array.isArray(record.kwargs) ||
    !isPlain(record.kwargs, 2)
  ) {
    return NEEDS_SERIALIZER;
  }
  const name = record.id[2] as string;
  const builder = MESSAGE_BUILDERS.get(name);
  if (builder === undefined) return NEEDS_SERIALIZER;
  const instance = new builder.build(
    fieldsFromJson(record.kwargs as Record<string, unknown>, builder),
  );
  // As LangChain's loader does, so that a minified build still names the class.
  Object.defineProperty(instance.constructor, 'name', { value: name });
  return instance;
}

/** No key that either loader gives meaning to, at any depth up to MAX_DEPTH. */
function isPlain(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!isPlain(item, depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    if (key === 'lc' || key === '__lc_escaped__' || key === '__proto__') return false;
    if (!isPlain((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/**
 * The constructor fields LangChain's loader passes: each serialized key through the class's
 * aliases, else camel-cased as its `keyFromJson` does.
 */
function fieldsFromJson(
  kwargs: Record<string, unknown>,
  { aliases }: MessageBuilder,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in kwargs) {
    if (Object.hasOwn(kwargs, key)) out[aliases[key] || camelCase(key)] = kwargs[key];
  }
  return out;
}

function camelCase(key: string): string {
  const trimmed = key.trim();
  if (!/[-_\s]/.test(trimmed)) return trimmed;
  return trimmed
    .replace(/[-_\s]+/g, '_')
    .toLowerCase()
    .replace(/_+([a-z0-9])/g, (_, char: string) => char.toUpperCase());
}
