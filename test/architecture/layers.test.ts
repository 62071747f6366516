/**
 * The layers of src point one way: core ← store ← engine ← reads, events and auth ← graphql ←
 * server ← cli (and the package entry, src/index.ts, over all of them). The engine is the one
 * writer; reads, the read API, sits on it, and the engine imports nothing of it. A module may
 * import its own folder and any lower layer, never a higher one, and the folders' import graph
 * has no cycle (reads, events and auth, side by side, import at most one way). Below the top folders the same holds at every
 * depth: no two subfolders (store/prisma and store/migrate, core and core/log …) import each
 * other, and no file reaches itself through its imports, type-only imports included — a cycle of
 * files is a seam that was never cut. Scans every import and re-export of src.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** A folder's layer; a folder may import from folders of its layer or below. */
const LAYER: Record<string, number> = {
  generated: 0,
  core: 0,
  store: 1,
  engine: 2,
  reads: 3,
  events: 3,
  auth: 3,
  graphql: 4,
  langgraph: 4,
  otlp: 3,
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

/** The folder of src holding `file`, at full depth ("store/read-model"; "" for src itself). */
const subfolderOf = (file: string): string => relative(SRC, dirname(file)).split(sep).join('/');

/** The source file an import names: `./x.js` is x.ts, a folder is its index.ts. */
function sourceOf(target: string): string {
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, join(target, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return target;
}

/** Every relative import inside src, file to file. */
function fileGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const to = new Set<string>();
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      if (!specifier.startsWith('.')) continue;
      const target = sourceOf(resolve(dirname(file), specifier));
      if (target.startsWith(SRC + sep) && !target.includes(`${sep}generated${sep}`)) {
        to.add(relative(SRC, target));
      }
    }
    graph.set(relative(SRC, file), to);
  }
  return graph;
}

/** The strongly connected parts of a graph with more than one member: its cycles. */
function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const part: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        part.push(member);
      } while (member !== node);
      if (part.length > 1) found.push(part.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

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
    expect(all.some((e) => e.from === 'graphql' && e.to === 'reads')).toBe(true);
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

  it('graphql reads through src/reads and reaches the engine only by its entry', () => {
    // The engine's entry holds its commands, their answers and errors, not the read API.
    const intoEngine = all
      .filter((e) => e.from === 'graphql' && e.to === 'engine')
      .filter((e) => e.specifier !== '../engine/index.js')
      .map((e) => `${e.file} imports ${e.specifier}`);
    expect(intoEngine).toEqual([]);
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

  it('no two subfolders import each other, at any depth', () => {
    const files = fileGraph();
    const folders = new Map<string, Set<string>>();
    for (const [file, targets] of files) {
      const from = subfolderOf(join(SRC, file));
      for (const target of targets) {
        const to = subfolderOf(join(SRC, target));
        if (to === from) continue;
        if (!folders.has(from)) folders.set(from, new Set());
        folders.get(from)!.add(to);
      }
    }
    expect(folders.get('store/read-model')?.has('store/prisma')).toBe(true);
    expect(cyclesOf(folders)).toEqual([]);
  });

  it('no file reaches itself through its imports', () => {
    const files = fileGraph();
    // A scan that resolved nothing would find no cycle anywhere.
    expect(files.get('reads/reads.ts')?.has('reads/views.ts')).toBe(true);
    expect(cyclesOf(files)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c']]);
  });
});
