/**
 * The length of a value's JSON text, counted without writing it, in steps: a generator that
 * yields every `every` values visited, so a caller can pause between steps (see `Steps`). The
 * count stops as soon as it passes `limit`, so it costs at most about `limit` characters of work
 * whatever the value's size. Pure.
 */
import type { Steps } from './steps.js';

/**
 * The length (UTF-16 units, as JSON.stringify writes it; escapes counted as one) of `value`'s
 * JSON text, or the first count past `limit` once it is passed.
 */
export function* jsonLengthSteps(value: unknown, limit: number, every = 4_096): Steps<number> {
  let length = 0;
  let visited = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (++visited % every === 0) {
      if (length > limit) return length;
      yield;
    }
    switch (typeof item) {
      case 'string':
        length += item.length + 2;
        break;
      case 'number':
      case 'boolean':
        length += String(item).length;
        break;
      case 'object': {
        if (item === null) {
          length += 4;
          break;
        }
        if (Array.isArray(item)) {
          length += 2 + Math.max(0, item.length - 1);
          for (let i = item.length - 1; i >= 0; i--) stack.push(item[i]);
          break;
        }
        const keys = Object.keys(item);
        length += 2 + Math.max(0, keys.length - 1);
        for (const key of keys) {
          length += key.length + 3;
          stack.push((item as Record<string, unknown>)[key]);
        }
        break;
      }
      default:
        length += 4;
    }
  }
  return length;
}
