import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * src/core must stay pure: no I/O, no clock, no randomness, no Prisma, no GraphQL.
 * Hashing with node:crypto's createHash is the one allowed use of a node built-in.
 */
const CORE = join(import.meta.dirname, '../../src/core');

const ALLOWED_IMPORTS = new Set([
  'zod',
  'node:crypto',
  // Pure JS tokenizers, imported only by src/core/projection/gpt-tokenizer.ts.
  'gpt-tokenizer/encoding/o200k_base',
  'gpt-tokenizer/encoding/cl100k_base',
]);

const FORBIDDEN_CODE: Array<[RegExp, string]> = [
  [/\bDate\.now\s*\(/, 'Date.now() reads the clock: take time from a Clock port or the log entry'],
  [/\bnew\s+Date\s*\(\s*\)/, 'new Date() reads the clock: take time from a Clock port'],
  [/\bperformance\.now\s*\(/, 'performance.now() reads the clock'],
  [/\bprocess\.hrtime\b/, 'process.hrtime reads the clock'],
  [/\bMath\.random\s*\(/, 'Math.random() is randomness: take ids from an IdSource port'],
  [/\brandom(UUID|Bytes|Int|Fill)\b/, 'crypto randomness: take ids from an IdSource port'],
  [/\bgetRandomValues\b/, 'crypto randomness: take ids from an IdSource port'],
  [/\bprocess\.(env|argv|stdout|stderr|stdin|exit|cwd)\b/, 'process state is I/O'],
  [/\b(setTimeout|setInterval|setImmediate|queueMicrotask)\s*\(/, 'timers are effects'],
  [/\bfetch\s*\(/, 'fetch is I/O'],
  [/\bconsole\.\w+\s*\(/, 'console output is I/O'],
  [/\brequire\s*\(/, 'dynamic require escapes the import check'],
  [/\bimport\s*\(/, 'dynamic import escapes the import check'],
];

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? listFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importSpecifiers(source: string): string[] {
  const specs: string[] = [];
  const pattern =
    /\b(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]/g;
  for (const match of source.matchAll(pattern)) specs.push((match[1] ?? match[2])!);
  return specs;
}

/** Strips comments so prose about Date.now() in a doc comment is not flagged. */
function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

function findViolations(file: string, source: string): string[] {
  const violations: string[] = [];
  for (const spec of importSpecifiers(source)) {
    if (spec.startsWith('.')) continue;
    if (!ALLOWED_IMPORTS.has(spec)) violations.push(`${file}: imports '${spec}'`);
  }
  const code = stripComments(source);
  for (const [pattern, why] of FORBIDDEN_CODE) {
    if (pattern.test(code)) violations.push(`${file}: ${why}`);
  }
  return violations;
}

describe('src/core purity', () => {
  it('has files to scan', () => {
    expect(listFiles(CORE).length).toBeGreaterThan(3);
  });

  it('imports nothing but relative modules, zod and node:crypto, and uses no clock, randomness or I/O', () => {
    const violations = listFiles(CORE).flatMap((path) =>
      findViolations(relative(CORE, path), readFileSync(path, 'utf8')),
    );
    expect(violations).toEqual([]);
  });

  it('catches each kind of violation (the scanner itself can fail)', () => {
    const bad = [
      "import { readFileSync } from 'node:fs';",
      "import { PrismaClient } from '@prisma/client';",
      "import { GraphQLObjectType } from 'graphql';",
      "import pg from 'pg';",
      'const t = Date.now();',
      'const d = new Date();',
      'const r = Math.random();',
      "import { randomUUID } from 'node:crypto'; randomUUID();",
      'const e = process.env.X;',
      'setTimeout(() => {}, 1);',
      'console.log(1);',
      "const m = await import('node:fs');",
    ];
    for (const source of bad) {
      expect(findViolations('x.ts', source), source).not.toEqual([]);
    }
    expect(
      findViolations('x.ts', "import { createHash } from 'node:crypto';\n// Date.now()"),
    ).toEqual([]);
  });
});
