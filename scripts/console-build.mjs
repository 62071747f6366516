#!/usr/bin/env node
/**
 * `npm run console:build [-- --force]`: builds the Weft Console (console/ → console/dist,
 * gitignored) on this machine, offline: the console's operations are compiled by the project's
 * codegen (codegen.ts → console/src/generated), the schema is written as a minified
 * introspection for the normalised cache, then Vite bundles the app.
 *
 * Skips the build when console/dist holds a build of the same inputs (a stamp of the console
 * sources, the SDL, codegen.ts and the lockfile), so it runs after every `npm ci` (postinstall)
 * and before start, typecheck and test at ~no cost. With `--generate` it only writes the
 * generated files (what the type check needs).
 *
 * Vite and codegen are development dependencies: a production install (`npm ci --omit=dev`)
 * has none. There, as postinstall, this says so and exits 0 (the server answers /console with
 * what to do); a Docker image builds the console in its build stage.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const consoleDir = join(root, 'console');
const dist = join(consoleDir, 'dist');
const generated = join(consoleDir, 'src', 'generated');
const stampFile = join(dist, '.weft-stamp');
const genStampFile = join(generated, '.weft-stamp');
const require = createRequire(import.meta.url);
const force = process.argv.includes('--force');
const postinstall = process.argv.includes('--postinstall');
const generateOnly = process.argv.includes('--generate');

let vite;
try {
  require.resolve('vite/package.json');
  require.resolve('@graphql-codegen/cli/package.json');
  vite = true;
} catch {
  vite = false;
}
if (!vite) {
  if (postinstall || existsSync(stampFile)) {
    if (postinstall) console.log('weft: console not built (no dev dependencies: vite, codegen)');
    process.exit(0);
  }
  console.error('weft: cannot build the console: run `npm ci` (with dev dependencies) first');
  process.exit(1);
}

/** Files under dir, recursively, but for build output. */
function files(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (['dist', 'generated', 'node_modules'].includes(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path));
    else out.push(path);
  }
  return out.sort();
}

function stampOf(inputs) {
  const hash = createHash('sha256');
  for (const file of inputs) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const schemaFile = join(root, 'schema', 'schema.graphql');
const genInputs = [...files(join(consoleDir, 'operations')), schemaFile, join(root, 'codegen.ts')];
const genStamp = stampOf(genInputs);
const stamp = stampOf([
  ...files(consoleDir),
  ...genInputs.slice(-2),
  join(root, 'package-lock.json'),
]);

const current = (file, value) => existsSync(file) && readFileSync(file, 'utf8') === value;

function generate() {
  if (!force && current(genStampFile, genStamp)) return;
  const started = Date.now();
  const bin = join(root, 'node_modules', '.bin', 'graphql-codegen');
  const run = spawnSync(bin, ['--config', 'codegen.ts', '--silent'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (run.status !== 0) {
    console.error(`weft: console codegen failed\n${run.stdout}${run.stderr}`);
    process.exit(1);
  }
  const { buildSchema, getIntrospectionQuery, graphqlSync } = require('graphql');
  const { minifyIntrospectionQuery } = require('@urql/introspection');
  const result = graphqlSync({
    schema: buildSchema(readFileSync(schemaFile, 'utf8')),
    source: getIntrospectionQuery({ descriptions: false }),
  });
  mkdirSync(generated, { recursive: true });
  writeFileSync(
    join(generated, 'introspection.json'),
    JSON.stringify(minifyIntrospectionQuery(result.data)),
  );
  writeFileSync(genStampFile, genStamp);
  console.log(`weft: console operations compiled (${Date.now() - started} ms)`);
}

generate();
if (generateOnly) process.exit(0);
if (!force && current(stampFile, stamp)) process.exit(0);

const started = Date.now();
const { build } = await import('vite');
await build({ configFile: join(consoleDir, 'vite.config.ts'), logLevel: 'warn' });
writeFileSync(stampFile, stamp);
console.log(`weft: console built into console/dist (${Date.now() - started} ms)`);
