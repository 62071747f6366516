/**
 * The layers of src point one way: core ← store ← engine ← events and auth ← graphql ← server ←
 * cli (and the package entry, src/index.ts, over all of them). A module may import its own folder
 * and any lower layer, never a higher one, and the folders' import graph has no cycle (events and
 * auth, side by side, import at most one way). Scans every import and re-export of src.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** A folder's layer; a folder may import from folders of its layer or below. */
const LAYER: Record<string, number> = {
  generated: 0,
  core: 0,
  store: 1,
  engine: 2,
  events: 3,
  auth: 3,
  graphql: 4,
  langgraph: 4,
  server: 5,
  cli: 6,
  '(entry)': 7,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourceFiles(path);
    return /\.(ts|cjs|mjs)$/.test(name) ? [path] : [];
  });
}

/** The top folder of src holding `file` ("(entry)" for files directly in src). */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  return parts.length === 1 ? '(entry)' : parts[0]!;
}

const SPECIFIER =
  /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/g;

function edges(): Array<{ file: string; from: string; to: string; specifier: string }> {
  const out: Array<{ file: string; from: string; to: string; specifier: string }> = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      if (!specifier.startsWith('.')) continue;
      const target = resolve(dirname(file), specifier);
      if (!target.startsWith(SRC + sep)) continue;
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to) out.push({ file: relative(SRC, file), from, to, specifier });
    }
  }
  return out;
}

describe('src layers', () => {
  const all = edges();

  it('finds the imports it checks', () => {
    // A scanner that matched nothing would pass everything below.
    expect(all.some((e) => e.from === 'graphql' && e.to === 'engine')).toBe(true);
    expect(all.some((e) => e.from === 'server' && e.to === 'graphql')).toBe(true);
  });

  it('every folder is assigned a layer', () => {
    const folders = new Set(all.flatMap((e) => [e.from, e.to]));
    expect([...folders].filter((f) => LAYER[f] === undefined)).toEqual([]);
  });

  it('no module imports from a higher layer', () => {
    const upward = all
      .filter((e) => LAYER[e.to]! > LAYER[e.from]!)
      .map((e) => `${e.file} imports ${e.specifier} (${e.from} → ${e.to})`);
    expect(upward).toEqual([]);
  });

  it('the folders import each other without a cycle', () => {
    const graph = new Map<string, Set<string>>();
    for (const e of all) {
      if (!graph.has(e.from)) graph.set(e.from, new Set());
      graph.get(e.from)!.add(e.to);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (node: string, path: string[]) => {
      if (state.get(node) === 'done') return;
      if (state.get(node) === 'open') {
        cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
        return;
      }
      state.set(node, 'open');
      for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
      state.set(node, 'done');
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });
});
