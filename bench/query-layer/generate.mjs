#!/usr/bin/env node
/**
 * What `npm run bench -- query-layer` needs generated, from prisma/<provider>/schema.prisma (the
 * one table definition), offline; run by the bench itself before it starts, by `npm run
 * typecheck` (the bench is typechecked), and by hand as `node bench/query-layer/generate.mjs
 * [--force]`:
 *
 * - Kysely's table types, by the `prisma-kysely` generator: bench/query-layer/generated/
 *   kysely-<provider>.ts (gitignored: generated code is never committed);
 * - a Prisma client with the `typedSql` preview feature (which `$queryRawTyped` requires of the
 *   generated client): bench/query-layer/.generated/prisma-<provider> (gitignored).
 *
 * Each provider's schema is copied with its generator blocks replaced by these two and generated
 * once with `prisma generate`, which needs no engine (PRISMA_SCHEMA_ENGINE_BINARY skips the
 * download, as in scripts/prisma-generate.mjs). A stamp skips a provider whose schema and tool
 * versions have not changed.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPrismaGenerate } from '../../scripts/prisma-generate-run.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const require = createRequire(import.meta.url);
const PROVIDERS = ['sqlite', 'postgres'];
const force = process.argv.includes('--force');

const prismaCli = require.resolve('prisma/build/index.js');
// Named by path: the package exports neither its bin nor its package.json.
const kyselyPackage = join(root, 'node_modules', 'prisma-kysely');
const kyselyGenerator = join(kyselyPackage, 'dist', 'bin.js');
const versions = [
  `prisma@${require('prisma/package.json').version}`,
  `@prisma/client@${require('@prisma/client/package.json').version}`,
  `prisma-kysely@${JSON.parse(readFileSync(join(kyselyPackage, 'package.json'), 'utf8')).version}`,
].join(',');

/** The schema without its generator blocks, then the bench's two generators. */
function benchSchema(provider, clientOut) {
  const source = readFileSync(join(root, 'prisma', provider, 'schema.prisma'), 'utf8');
  const models = source.replace(/^generator \w+ \{[\s\S]*?^\}\n/gm, '');
  return `${models}
generator client {
  provider               = "prisma-client"
  output                 = ${JSON.stringify(clientOut)}
  runtime                = "nodejs"
  moduleFormat           = "esm"
  importFileExtension    = "js"
  generatedFileExtension = "ts"
  previewFeatures        = ["partialIndexes", "typedSql"]
}

generator kysely {
  provider = ${JSON.stringify(`node ${kyselyGenerator}`)}
  output   = ${JSON.stringify(join(here, 'generated'))}
  fileName = "kysely-${provider}.ts"
}
`;
}

function generate(provider) {
  const work = join(here, '.generated');
  const clientOut = join(work, `prisma-${provider}`);
  const schema = benchSchema(provider, clientOut);
  const stamp = createHash('sha256').update(versions).update('\0').update(schema).digest('hex');
  const stampFile = join(clientOut, '.bench-stamp');
  const typesFile = join(here, 'generated', `kysely-${provider}.ts`);
  if (
    !force &&
    existsSync(typesFile) &&
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8') === stamp
  ) {
    return Promise.resolve();
  }
  mkdirSync(work, { recursive: true });
  const schemaFile = join(work, `${provider}.prisma`);
  writeFileSync(schemaFile, schema);
  return runPrismaGenerate(prismaCli, schemaFile, root).then(({ code, output }) => {
    if (code !== 0 || !existsSync(typesFile)) {
      throw new Error(`prisma generate (${provider}, bench) exited with ${code}:\n${output}`);
    }
    writeFileSync(stampFile, stamp);
    console.log(`  [query-layer] ${provider}: Kysely types and typedSql client generated`);
  });
}

// One at a time: the two generations share the kysely output folder.
for (const provider of PROVIDERS) await generate(provider);
