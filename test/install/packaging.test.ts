/**
 * What a production install and a fresh clone get: the dependency tree recorded in
 * package-lock.json, the Node versions package.json and the Dockerfile name, and the scripts that
 * make every README command work straight after `npm ci`. (The fresh clone itself — `npm ci`,
 * then `npm start` serving — is run by scripts/quickstart-smoke.mjs, the first step of CI.)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));

interface LockEntry {
  version?: string;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  engines?: { node?: string } | string[];
}
const entries = Object.entries(lock.packages as Record<string, LockEntry>).filter(([k]) => k);
const nameOf = (key: string) => key.replace(/^.*node_modules\//, '');
/**
 * What `npm ci --omit=dev --omit=optional` installs. Both flags: the prisma CLI is an optional
 * peer of @prisma/client (`devOptional` in the lockfile), which `--omit=dev` alone keeps.
 */
const production = entries.filter(([, e]) => !e.dev && !e.devOptional && !e.optional);
const nodeRange = (e: LockEntry) =>
  e.engines && !Array.isArray(e.engines) ? e.engines.node : undefined;
const rejecting = (list: [string, LockEntry][], version: string) =>
  list
    .filter(([, e]) => {
      const range = nodeRange(e);
      return range !== undefined && !semver.satisfies(version, range);
    })
    .map(([k, e]) => `${nameOf(k)}@${e.version}`);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'generated') return [];
    return statSync(path).isDirectory()
      ? sourceFiles(path)
      : /\.[cm]?[jt]s$/.test(name)
        ? [path]
        : [];
  });
}

describe('production dependencies', () => {
  it('leave out the prisma CLI and what only it pulls in (Studio, the dev server, TypeScript)', () => {
    expect(pkg.dependencies.prisma).toBeUndefined();
    expect(pkg.devDependencies.prisma).toBe(pkg.dependencies['@prisma/client']);
    const inProduction = new Set(production.map(([k]) => nameOf(k)));
    for (const name of ['prisma', '@prisma/dev', '@prisma/studio-core', 'typescript', 'effect']) {
      expect(inProduction.has(name), `${name} is a production dependency`).toBe(false);
    }
    // Nothing the server runs loads the CLI: it applies its own SQL migrations.
    const loadsCli = sourceFiles(join(root, 'src')).filter((file) =>
      /from ['"]prisma(\/[^'"]*)?['"]|require\(['"]prisma/.test(readFileSync(file, 'utf8')),
    );
    expect(loadsCli).toEqual([]);
  });

  it('all accept the current Node LTS lines package.json declares (22.15+, 24)', () => {
    const engines: string = pkg.engines.node;
    for (const version of ['22.15.0', '24.0.0']) {
      expect(semver.satisfies(version, engines), `engines ${engines} rejects ${version}`).toBe(
        true,
      );
      expect(rejecting(production, version)).toEqual([]);
    }
    // Node 20 has reached end of life: still accepted from 20.19, not recommended (docs say so).
    expect(semver.satisfies('20.19.0', engines)).toBe(true);
    expect(semver.satisfies('20.18.0', engines)).toBe(false);
    expect(semver.satisfies('22.14.0', engines)).toBe(false);
  });
});

describe('the Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  it('builds on a current LTS Node that every dependency, dev ones included, accepts', () => {
    const arg = /^ARG NODE_VERSION=(\S+)$/m.exec(dockerfile)?.[1];
    expect(arg).toBeDefined();
    const major = semver.coerce(arg)?.major ?? 0;
    // Even majors are the LTS lines; 20 has reached end of life.
    expect(major % 2).toBe(0);
    expect(major).toBeGreaterThanOrEqual(22);
    expect(rejecting(entries, `${major}.0.0`)).toEqual([]);
    expect(semver.satisfies(`${major}.0.0`, pkg.engines.node)).toBe(true);
  });

  it('documents docker run lines that can start: a key is created before serving on 0.0.0.0', () => {
    const runLines = dockerfile.split('\n').filter((l) => /^#\s+docker run /.test(l));
    expect(runLines.length).toBeGreaterThan(0);
    // The image binds 0.0.0.0, where an open server refuses to start without WEFT_ALLOW_OPEN.
    expect(dockerfile).toMatch(/HOST=0\.0\.0\.0/);
    let keyed = false;
    for (const line of runLines) {
      if (/ keys create /.test(line)) keyed = true;
      else if (!/ keys /.test(line)) {
        expect(keyed || /WEFT_ALLOW_OPEN=true/.test(line), `cannot start: ${line}`).toBe(true);
      }
    }
    // `docker run … weft keys create` needs the CLI as entrypoint and `serve` as the default.
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "dist\/cli\/main\.js"\]$/m);
    expect(dockerfile).toMatch(/^CMD \["serve"\]$/m);
  });

  it('keeps only production dependencies in the image', () => {
    expect(dockerfile).toMatch(/^RUN npm prune --omit=dev --omit=optional /m);
  });
});

describe('scripts after npm ci', () => {
  it('generate the Prisma clients on install and before every command that needs them', () => {
    for (const script of [
      'postinstall',
      'prestart',
      'preweft',
      'prebuild',
      'pretypecheck',
      'pretest',
    ]) {
      expect(pkg.scripts[script], script).toMatch(/scripts\/prisma-generate\.mjs/);
    }
  });

  it('run the server as the npm process’s own child, so SIGTERM reaches it', () => {
    // `sh -c` without exec leaves a shell in between that dies on SIGTERM and orphans the server.
    expect(pkg.scripts.start).toMatch(/^exec node /);
    expect(pkg.scripts.weft).toMatch(/^exec node /);
  });
});
