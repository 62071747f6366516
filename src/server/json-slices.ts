/**
 * JSON request bodies too long to parse in one go: JSON.parse of a 10 MB body (a large
 * importState) holds the event loop for over 100 ms. Such a text is parsed in steps instead (a
 * generator that yields between them; the caller pauses in time slices): its large objects and
 * arrays member by member, and every value whose text is short — almost all of them — with
 * JSON.parse itself, so the result is exactly JSON.parse's and the cost stays close to it.
 */
import type { Steps } from '../core/graph/index.js';

/** Values whose text is shorter than this are parsed by one JSON.parse of their text. */
const SHORT = 32 * 1024;

/** The value of JSON text `text`, as JSON.parse gives it; throws a SyntaxError as it does. */
export function* parseJsonSteps(text: string): Steps<unknown> {
  const start = skipSpace(text, 0);
  const [value, end] = yield* parseValue(text, start);
  if (skipSpace(text, end) !== text.length) throw invalid(end);
  return value;
}

const invalid = (at: number) => new SyntaxError(`Unexpected token in JSON at position ${at}`);

function skipSpace(text: string, at: number): number {
  let i = at;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
  }
  return i;
}

/** The value starting at `at` and where its text ends. */
function* parseValue(text: string, at: number): Steps<[unknown, number]> {
  const end = valueEnd(text, at, at + SHORT);
  if (end >= 0) return [JSON.parse(text.slice(at, end)), end];
  const open = text.charCodeAt(at);
  if (open === 0x7b /* { */) return yield* parseObject(text, at);
  if (open === 0x5b /* [ */) return yield* parseArray(text, at);
  // A long string or number: whole.
  const whole = valueEnd(text, at, Number.POSITIVE_INFINITY);
  if (whole < 0) throw invalid(at);
  return [JSON.parse(text.slice(at, whole)), whole];
}

function* parseObject(text: string, at: number): Steps<[unknown, number]> {
  const object: Record<string, unknown> = {};
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === 0x7d /* } */) return [object, i + 1];
  for (;;) {
    if (text.charCodeAt(i) !== 0x22 /* " */) throw invalid(i);
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) throw invalid(i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a /* : */) throw invalid(i);
    const [value, end] = yield* parseValue(text, skipSpace(text, i + 1));
    // As JSON.parse: an own property, even one named __proto__.
    if (key === '__proto__') {
      Object.defineProperty(object, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      object[key] = value;
    }
    yield;
    i = skipSpace(text, end);
    const next = text.charCodeAt(i);
    if (next === 0x7d /* } */) return [object, i + 1];
    if (next !== 0x2c /* , */) throw invalid(i);
    i = skipSpace(text, i + 1);
  }
}

function* parseArray(text: string, at: number): Steps<[unknown, number]> {
  const array: unknown[] = [];
  let i = skipSpace(text, at + 1);
  if (text.charCodeAt(i) === 0x5d /* ] */) return [array, i + 1];
  for (;;) {
    const [value, end] = yield* parseValue(text, i);
    array.push(value);
    yield;
    i = skipSpace(text, end);
    const next = text.charCodeAt(i);
    if (next === 0x5d /* ] */) return [array, i + 1];
    if (next !== 0x2c /* , */) throw invalid(i);
    i = skipSpace(text, i + 1);
  }
}

/** Where the string starting at `at` (its opening quote) ends (after its closing quote), or -1. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22 /* " */) return i + 1;
  }
  return -1;
}

/**
 * Where the value starting at `at` ends, if that is before `limit`; else -1. Brackets are only
 * counted, not matched: JSON.parse of the text found checks it.
 */
function valueEnd(text: string, at: number, limit: number): number {
  const first = text.charCodeAt(at);
  if (first === 0x22 /* " */) {
    const end = stringEnd(text, at);
    return end >= 0 && end <= limit ? end : -1;
  }
  if (first !== 0x7b && first !== 0x5b) {
    // A number, true, false or null: up to the next delimiter.
    let i = at;
    for (; i < text.length && i < limit; i++) {
      const c = text.charCodeAt(i);
      if (
        c === 0x2c ||
        c === 0x7d ||
        c === 0x5d ||
        c === 0x20 ||
        c === 0x0a ||
        c === 0x0d ||
        c === 0x09
      ) {
        return i;
      }
    }
    return i === text.length ? i : -1;
  }
  let depth = 0;
  const stop = Math.min(text.length, limit);
  for (let i = at; i < stop; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      if (end < 0) return -1;
      i = end - 1;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
