/**
 * The store, the engine and the event hub keep no state at module level: caches, locks and memos
 * belong to the store, runtime or hub that opened them (a store's writer holds its statement
 * texts), so two of them in one process share nothing by accident and closing one forgets
 * everything it held. Scans the top-level declarations of src/store (every folder), src/engine
 * and src/events for a `let` or a mutable collection.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** Module-level state judged harmless, with why. */
const ALLOWED: Record<string, string> = {
  // A memo of a pure function keyed on the identity of the objects a hub hands out (a LogItem or
  // an effect): it holds nothing of any runtime's and is collected with those objects.
  'events/subscriptions.ts payloads': 'identity memo of a pure function',
};

/** A top-level `let`, or a collection not typed read-only (a `ReadonlySet` constant is no state). */
const TOP_LEVEL_STATE =
  /^(?:export\s+)?(?:let\s+(\w+)|(?:const|var)\s+(\w+)(?:\s*:(?!\s*Readonly)[^=]+)?\s*=\s*new\s+(?:Map|Set|WeakMap|WeakSet)\b)/gm;

function moduleState(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(join(SRC, folder))) {
    if (statSync(join(SRC, folder, name)).isDirectory()) {
      found.push(...moduleState(`${folder}/${name}`));
      continue;
    }
    if (!name.endsWith('.ts')) continue;
    const text = readFileSync(join(SRC, folder, name), 'utf8');
    for (const match of text.matchAll(TOP_LEVEL_STATE)) {
      found.push(`${folder}/${name} ${match[1] ?? match[2]}`);
    }
  }
  return found;
}

describe('module-level state', () => {
  it('src/store, src/engine and src/events declare no mutable state at module level', () => {
    const found = [...moduleState('store'), ...moduleState('engine'), ...moduleState('events')];
    expect(found.filter((f) => ALLOWED[f] === undefined)).toEqual([]);
  });

  it('the scan finds what it looks for', () => {
    const sample =
      'let counters: X | undefined;\nconst locks = new WeakMap<A, B>();\nconst CODES: ReadonlySet<string> = new Set([]);\n';
    expect([...sample.matchAll(TOP_LEVEL_STATE)].map((m) => m[1] ?? m[2])).toEqual([
      'counters',
      'locks',
    ]);
  });
});
