/**
 * The README a newcomer reads first stays short and true: it fits in 250 lines, its quickstart is
 * what CI runs on a fresh clone, it lists every doc and every variable the server reads, and no
 * relative link in it or in docs/ points at a file or heading that is not there.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.js';
import { ENVIRONMENT_VARIABLES, loadConfig } from '../../src/server/config.js';

const root = join(import.meta.dirname, '..', '..');
const README = join(root, 'README.md');
const MAX_README_LINES = 250;

const read = (path: string) => readFileSync(path, 'utf8');
const docs = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => join(root, 'docs', name));

/** The text outside fenced code blocks (links in code are examples, not links). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a markdown file's headings make, with GitHub's -1, -2 … for repeats. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug(heading ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every relative link target in a markdown file: `[text](target)`, outside code blocks. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link of `file`, or undefined when it resolves. */
function brokenLink(file: string, target: string): string | undefined {
  const [path = '', anchor] = target.split('#', 2);
  const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
  if (!existsSync(resolved)) return `${target}: no such file`;
  if (anchor === undefined || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
    return undefined;
  }
  return anchorsOf(read(resolved)).has(anchor.toLowerCase())
    ? undefined
    : `${target}: no heading with that anchor`;
}

describe('the README', () => {
  const readme = read(README);

  it(`fits in ${MAX_README_LINES} lines`, () => {
    const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
    expect(lines, 'move detail into docs/ and link it').toBeLessThanOrEqual(MAX_README_LINES);
  });

  it('links every doc in docs/ (benchmarks and LangGraph included)', () => {
    const linked = new Set(relativeLinks(readme).map((t) => t.split('#')[0]));
    const missing = docs.map((doc) => relative(root, doc)).filter((doc) => !linked.has(doc));
    expect(missing).toEqual([]);
    expect(linked.has('docs/benchmarks.md')).toBe(true);
    expect(linked.has('docs/langgraph.md')).toBe(true);
  });

  it('names every environment variable the server reads', () => {
    const missing = ENVIRONMENT_VARIABLES.filter((name) => !readme.includes(`\`${name}\``));
    expect(missing, 'add a row to the configuration table').toEqual([]);
  });

  it("states each variable's default as the server applies it", () => {
    const rows = [...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| `([^`]*)` \|/gm)];
    expect(rows.length).toBeGreaterThan(20);
    const defaults = loadConfig({});
    const wrong = rows
      .filter(
        ([, name, value]) => !isDeepStrictEqual(loadConfig({ [name ?? '']: value }), defaults),
      )
      .map(([, name, value]) => `${name}: ${value}`);
    expect(wrong).toEqual([]);
  });

  it('gives the start and test commands CI runs on a fresh clone', () => {
    const quickstart = /## Quickstart\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = quickstart
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter((line) => line !== '');
    expect(commands).toEqual(['npm ci', 'npm start', 'npm test']);
    // CI: `npm ci`, the smoke test that runs `npm start`, then `npm test`.
    const ci = read(join(root, '.ci', 'run'));
    expect(ci).toMatch(/^npm ci\b/m);
    expect(ci).toMatch(/^node scripts\/quickstart-smoke\.mjs$/m);
    expect(ci).toMatch(/\bnpm test$/m);
    expect(read(join(root, 'scripts', 'quickstart-smoke.mjs'))).toContain("spawn('npm', ['start']");
  });
});

describe('links in README.md and docs/*.md', () => {
  it('resolve to a file that exists and, for a markdown anchor, to one of its headings', () => {
    const broken = [README, ...docs].flatMap((file) =>
      relativeLinks(read(file)).flatMap((target) => {
        const problem = brokenLink(file, target);
        return problem === undefined ? [] : [`${relative(root, file)}: ${problem}`];
      }),
    );
    expect(broken).toEqual([]);
  });

  it('check anchors the way GitHub makes them', () => {
    const anchors = anchorsOf('# A `code` title: with, punctuation\n## Twice\n## Twice\n');
    expect([...anchors]).toEqual(['a-code-title-with-punctuation', 'twice', 'twice-1']);
    expect(brokenLink(join(root, 'docs', 'api.md'), '#no-such-heading')).toMatch(/no heading/);
    expect(brokenLink(join(root, 'docs', 'api.md'), 'no-such-file.md')).toMatch(/no such file/);
  });
});

describe('docs/api.md', () => {
  it("shows every field of diffThreads' answer", () => {
    const api = read(join(root, 'docs', 'api.md'));
    const diff = schema.getType('ThreadDiff');
    expect(diff).toBeInstanceOf(GraphQLObjectType);
    const fields = Object.keys((diff as GraphQLObjectType).getFields());
    expect(fields.length).toBeGreaterThan(0);
    const query = /```graphql\n([^`]*diffThreads\([^`]*)```/.exec(api)?.[1] ?? '';
    expect(query, 'a graphql example of diffThreads').not.toBe('');
    expect(fields.filter((field) => !new RegExp(`\\b${field}\\b`).test(query))).toEqual([]);
  });
});
