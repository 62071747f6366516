/**
 * No module of src keeps state at module level: caches, locks and memos belong to the store,
 * runtime, hub or server that opened them (a store's writer holds its statement texts), so two of
 * them in one process share nothing by accident and closing one forgets everything it held.
 * Scans the top-level declarations of every file of src for a `let` or a mutable collection;
 * the few that remain are listed below with why they are harmless.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** Module-level state judged harmless, with why. */
const ALLOWED: Record<string, string> = {
  // Memos of pure functions keyed on the identity of the objects they describe (a LogItem, a
  // graph value, a node, a hub, a request, a parsed document, a commit's event): they hold
  // nothing of any runtime's and are collected with those objects.
  'events/subscriptions.ts payloads': 'identity memo of a pure function',
  'core/projection/clusters.ts cache': 'identity memo of a pure function',
  'core/projection/graph-index.ts stores': 'identity memo of a pure function',
  'core/projection/graph-index.ts views': 'identity memo of a pure function',
  'server/logging.ts infos': 'per-request notes, gone with the request',
  'server/shared-execution.ts printed': 'identity memo of a pure function',
  'server/shared-execution.ts executions': 'per-commit results, gone with the commit event',
  'server/shared-execution.ts texts': 'per-commit serialisations, gone with the shared result',
  'server/shared-execution.ts settled': 'per-commit results, gone with their execution',
  'server/shared-execution.ts batches': 'per-commit direct deliveries, gone with their execution',
  // Key shapes of canonical JSON: a bounded memo of a pure function of key names, which are
  // the same for every caller (no payload value is kept).
  'core/canonical.ts shapes': 'bounded memo of a pure function of key names',
  // The built-in graph configuration, resolved once from constants.
  'core/graph/agent-state.ts builtIn': 'lazy constant',
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
  const folders = readdirSync(SRC).filter(
    (name) => name !== 'generated' && statSync(join(SRC, name)).isDirectory(),
  );

  it('no module of src declares mutable state at module level', () => {
    const found = folders.flatMap((folder) => moduleState(folder));
    expect(found.filter((f) => ALLOWED[f] === undefined)).toEqual([]);
  });

  it('every allowance still names a declaration (none outlives its code)', () => {
    const found = new Set(folders.flatMap((folder) => moduleState(folder)));
    expect(Object.keys(ALLOWED).filter((f) => !found.has(f))).toEqual([]);
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
