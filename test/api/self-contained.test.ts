/**
 * The repository stands alone: the schema a GraphiQL user reads, the docs and the code explain
 * themselves instead of pointing at documents that are not in the repository, and the reference
 * docs a newcomer is sent to exist.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { GraphQLEnumType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.js';

const root = join(import.meta.dirname, '..', '..');
// Citations of design notes kept outside the repository: "DESIGN §6", "seed 004", "ENV-NOTES".
const EXTERNAL_CITATION =
  /\bDESIGN(?:\.md| §)|\bseed[ -]?0\d\d\b|\bseeds\/|ENV-NOTES|\bSTYLE(?:\.md| §)/;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'generated' || name.startsWith('.')) return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe('the schema', () => {
  it('describes every value of ActionType, RunStatus and NodeKind; actions name their payload', () => {
    for (const name of ['ActionType', 'RunStatus', 'NodeKind']) {
      const type = schema.getType(name);
      expect(type).toBeInstanceOf(GraphQLEnumType);
      for (const value of (type as GraphQLEnumType).getValues()) {
        expect(value.description, `${name}.${value.name}`).toMatch(/\S{3}/);
      }
    }
    for (const value of (schema.getType('ActionType') as GraphQLEnumType).getValues()) {
      expect(value.description, `ActionType.${value.name}`).toMatch(/Payload/);
      expect(value.description, `ActionType.${value.name}`).toMatch(/Example: \{/);
    }
  });
});

describe('the repository', () => {
  it('cites no document outside it in code, schema, docs or README', () => {
    const scanned = [
      ...['src', 'schema', 'docs', 'scripts', 'bin', 'prisma', 'examples', 'bench', 'test'].flatMap(
        (dir) => (existsSync(join(root, dir)) ? files(join(root, dir)) : []),
      ),
      join(root, 'README.md'),
      join(root, 'Dockerfile'),
    ].filter((file) => /\.(ts|mts|cts|js|mjs|cjs|md|graphql|prisma|sql)$|Dockerfile$/.test(file));
    const self = relative(root, import.meta.filename);
    const citing = scanned.flatMap((file) =>
      relative(root, file) === self
        ? []
        : readFileSync(file, 'utf8')
            .split('\n')
            .flatMap((line, i) =>
              EXTERNAL_CITATION.test(line)
                ? [`${relative(root, file)}:${i + 1}: ${line.trim()}`]
                : [],
            ),
    );
    expect(citing).toEqual([]);
  });

  it('has the architecture and API references the README points to', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    for (const doc of ['docs/architecture.md', 'docs/api.md', 'docs/deployment.md']) {
      expect(existsSync(join(root, doc)), doc).toBe(true);
      expect(readme).toContain(doc);
    }
  });
});
