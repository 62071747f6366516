#!/usr/bin/env node
/**
 * `npm run prisma:generate [-- --force]`: generates the Prisma clients of both providers
 * (prisma/<provider>/schema.prisma → src/generated/prisma-<provider>, gitignored), offline.
 *
 * Every Prisma CLI command first tries to download the native schema engine, which fails without
 * internet; `generate` does not use it, and PRISMA_SCHEMA_ENGINE_BINARY pointing at any existing
 * file skips the download (ENV-NOTES.md). No DATABASE_URL is needed: the schemas name no url.
 *
 * Skips a provider whose output is already generated from the same schema by the same Prisma
 * (a stamp file in the output directory), so running it before every test run costs ~nothing.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const PROVIDERS = ['sqlite', 'postgres'];
const force = process.argv.includes('--force');

const prismaCli = require.resolve('prisma/build/index.js');
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
    console.log(`prisma:generate: ${provider} client is up to date`);
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [prismaCli, 'generate', '--schema', schema], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // Any existing file will do: generate never runs it.
        PRISMA_SCHEMA_ENGINE_BINARY: process.execPath,
        CHECKPOINT_DISABLE: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        PRISMA_DISABLE_WARNINGS: '1',
      },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`prisma generate --schema ${schema} exited with ${code}:\n${output}`));
        return;
      }
      writeFileSync(stampFile, stamp);
      console.log(`prisma:generate: ${provider} client generated into ${out}`);
      resolve();
    });
  });
}

try {
  await Promise.all(PROVIDERS.map(generate));
} catch (error) {
  console.error(String(error instanceof Error ? error.message : error));
  process.exit(1);
}
