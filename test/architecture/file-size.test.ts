/**
 * No source file of src is over 500 lines: a file that grows past it holds more than one idea
 * and is split by responsibility. Generated clients are not ours to split.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const LIMIT = 500;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourceFiles(path);
    return /\.(ts|cjs|mjs)$/.test(name) ? [path] : [];
  });
}

const lines = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

describe('file size', () => {
  it(`no file in src is over ${LIMIT} lines`, () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const over = files
      .map((file) => ({ file: relative(SRC, file), lines: lines(readFileSync(file, 'utf8')) }))
      .filter((f) => f.lines > LIMIT);
    expect(over).toEqual([]);
  });
});
