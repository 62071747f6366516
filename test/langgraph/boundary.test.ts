/**
 * LangGraph stays optional: only src/langgraph imports `@langchain/*`, the package's main entry
 * does not reach it, and the `@langchain/*` packages are optional peers (dev dependencies for
 * the tests) with `weft/langgraph` as the subpath that exports the saver.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourceFiles(path);
    return /\.ts$/.test(name) ? [path] : [];
  });
}

describe('the LangGraph boundary', () => {
  it('only src/langgraph imports @langchain/*, and nothing outside it imports src/langgraph', () => {
    const offenders: string[] = [];
    let inside = 0;
    for (const file of sourceFiles(SRC)) {
      const rel = relative(SRC, file);
      const text = readFileSync(file, 'utf8');
      const langchain = /from\s+['"]@langchain\//.test(text);
      if (rel.startsWith('langgraph/')) {
        if (langchain) inside++;
      } else if (langchain || /from\s+['"][./]+langgraph\//.test(text)) {
        offenders.push(rel);
      }
    }
    expect(offenders).toEqual([]);
    expect(inside).toBeGreaterThan(0);
  });

  it('the @langchain packages are optional peers and dev dependencies; weft/langgraph is exported', () => {
    for (const name of [
      '@langchain/core',
      '@langchain/langgraph',
      '@langchain/langgraph-checkpoint',
    ]) {
      expect(pkg.dependencies[name], name).toBeUndefined();
      expect(pkg.peerDependencies[name], name).toBeDefined();
      expect(pkg.peerDependenciesMeta[name], name).toEqual({ optional: true });
      expect(pkg.devDependencies[name], name).toMatch(/^\d+\.\d+\.\d+$/);
    }
    expect(pkg.devDependencies['@langchain/langgraph-checkpoint-validation']).toBe('1.1.1');
    expect(pkg.exports['./langgraph']).toEqual({
      types: './dist/langgraph/index.d.ts',
      import: './dist/langgraph/index.js',
    });
  });
});
