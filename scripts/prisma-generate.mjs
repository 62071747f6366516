#!/usr/bin/env node
/**
 * `npm run prisma:generate [-- --force]`: generates the Prisma clients of both providers
 * (prisma/<provider>/schema.prisma → src/generated/prisma-<provider>, gitignored), offline.
 *
 * Every Prisma CLI command first tries to download the native schema engine, which fails without
 * internet; `generate` does not use it, and PRISMA_SCHEMA_ENGINE_BINARY pointing at any existing
 * file skips the download. No DATABASE_URL is needed: the schemas name no url.
 *
 * Skips a provider whose output is already generated from the same schema by the same Prisma
 * (a stamp file in the output directory), silently, so it runs after every `npm ci` (postinstall)
 * and before start, build, typecheck and test at ~no cost.
 *
 * The `prisma` CLI is a development dependency: a production install (`npm ci --omit=dev`) has
 * none and runs compiled code whose clients were generated at build time. There this script,
 * run as postinstall, says so and exits 0; run before anything else, it fails with what to do.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPrismaGenerate } from './prisma-generate-run.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const PROVIDERS = ['sqlite', 'postgres'];
const force = process.argv.includes('--force');

const postinstall = process.argv.includes('--postinstall');

let prismaCli;
try {
  prismaCli = require.resolve('prisma/build/index.js');
} catch {
  const generated = PROVIDERS.every((p) =>
    existsSync(join(root, 'src', 'generated', `prisma-${p}`, '.weft-stamp')),
  );
  if (postinstall || generated) {
    if (postinstall) {
      console.log('prisma:generate: no prisma CLI (production install); clients not generated');
    }
    process.exit(0);
  }
  console.error(
    'prisma:generate: the Prisma clients are not generated and the prisma CLI (a development ' +
      'dependency) is not installed: run `npm ci` without --omit=dev, or run the compiled dist/',
  );
  process.exit(2);
}
const versions = ['prisma/package.json', '@prisma/client/package.json']
  .map((p) => `${p}@${require(p).version}`)
  .join(',');

function stampOf(provider) {
  const schema = readFileSync(join(root, 'prisma', provider, 'schema.prisma'));
  return createHash('sha256').update(versions).update('\0').update(schema).digest('hex');
}

function generate(provider) {
  const schema = join('prisma', provider, 'schema.prisma');
  const out = join(root, 'src', 'generated', `prisma-${provider}`);
  const stampFile = join(out, '.weft-stamp');
  const stamp = stampOf(provider);
  if (!force && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
    return Promise.resolve();
  }
  return runPrismaGenerate(prismaCli, schema, root).then(({ code, output }) => {
    if (code !== 0) {
      throw new Error(`prisma generate --schema ${schema} exited with ${code}:\n${output}`);
    }
    writeFileSync(stampFile, stamp);
    console.log(`prisma:generate: ${provider} client generated into ${out}`);
  });
}

try {
  await Promise.all(PROVIDERS.map(generate));
} catch (error) {
  console.error(String(error instanceof Error ? error.message : error));
  process.exit(1);
}
