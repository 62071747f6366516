/**
 * A node's payload in one short line, for a label: what a person would read first. A message
 * (`{role, content}`), a goal, a tool call (`{name, args}`) or a result each have a field that
 * says what the node is about; identifiers (`id`, `messageId`, `toolCallId`, …) and type tags say
 * nothing to a reader and are left out. Pure.
 */
import type { JsonValue } from '../json.js';
import { redactionOf } from './tombstone.js';

export const DEFAULT_PREVIEW_LENGTH = 80;
export const MAX_PREVIEW_LENGTH = 500;

/** Fields read first, in this order, when a payload object has them. */
const TEXT_FIELDS = [
  'content',
  'text',
  'goal',
  'question',
  'prompt',
  'answer',
  'message',
  'summary',
  'output',
  'result',
  'query',
  'title',
  'description',
] as const;

/** Fields naming a call: `search(q: …)` reads better than the arguments alone. */
const NAME_FIELDS = ['name', 'tool', 'toolName'] as const;
const ARGUMENT_FIELDS = ['args', 'arguments', 'input', 'parameters'] as const;

const isIdentifierKey = (key: string) =>
  key === 'id' ||
  key === 'type' ||
  key === 'role' ||
  key === 'channel' ||
  key.endsWith('Id') ||
  key.endsWith('_id');

/**
 * The preview of `payload`: at most `maxLength` characters (an ellipsis marks a cut, never inside
 * a surrogate pair), whitespace collapsed; null when the payload has no text to show (a number,
 * an empty object) or was redacted. Reads only as much of a large payload as the preview needs.
 */
export function payloadPreview(
  payload: JsonValue | undefined,
  maxLength = DEFAULT_PREVIEW_LENGTH,
): string | null {
  if (payload === undefined || payload === null || redactionOf(payload) !== undefined) return null;
  const budget = Math.max(1, Math.min(maxLength, MAX_PREVIEW_LENGTH));
  const text = collapse(mainText(payload, budget + 1));
  if (text === '') return null;
  return cut(text, budget);
}

function mainText(payload: JsonValue, budget: number): string {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return textOf(payload, budget);
  }
  for (const field of TEXT_FIELDS) {
    const value = payload[field];
    if (value === undefined) continue;
    const text = textOf(value, budget);
    if (text.trim() !== '') return text;
  }
  const name = NAME_FIELDS.map((f) => payload[f]).find((v) => typeof v === 'string');
  const args = ARGUMENT_FIELDS.map((f) => payload[f]).find((v) => v !== undefined);
  if (typeof name === 'string' && args !== undefined) {
    return `${name}(${textOf(args, budget, true)})`;
  }
  return textOf(payload, budget);
}

/**
 * The strings (and, beside a key, numbers and booleans) of a value in document order, until
 * `budget` characters are collected. With `labelled`, object values read `key: value`.
 */
function textOf(value: JsonValue, budget: number, labelled = false): string {
  const parts: string[] = [];
  let length = 0;
  // Iterative, so a deeply nested payload cannot overflow the stack.
  const stack: Array<{ value: JsonValue; key?: string }> = [{ value }];
  while (stack.length > 0 && length < budget) {
    const { value: v, key } = stack.pop()!;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
      const s = String(v);
      if (s.trim() === '') continue;
      const part = labelled && key !== undefined ? `${key}: ${s}` : s;
      parts.push(part);
      length += part.length + 1;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i]! });
    } else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v).filter(([k]) => !isIdentifierKey(k));
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i]!;
        stack.push({ value: child, key: k });
      }
    }
  }
  return parts.join(labelled ? ', ' : ' ');
}

const collapse = (text: string) => text.replace(/\s+/g, ' ').trim();

function cut(text: string, maxLength: number): string {
  if (text.length <= maxLength) return text;
  let end = maxLength - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end).trimEnd()}…`;
}
