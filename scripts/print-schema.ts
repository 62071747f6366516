/**
 * Writes schema/schema.graphql: the printed SDL of the API, types sorted by name. Run it after a
 * schema change (`npx tsx scripts/print-schema.ts`); test/api/schema-drift.test.ts fails until
 * the committed file matches. `--check` only compares (exit 1 on drift).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { printSchemaFile, SCHEMA_FILE } from '../src/graphql/print.js';

const path = join(import.meta.dirname, '..', SCHEMA_FILE);
const printed = printSchemaFile();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {}
  if (current !== printed) {
    console.error(`${SCHEMA_FILE} is out of date: run npx tsx scripts/print-schema.ts`);
    process.exit(1);
  }
  console.log(`${SCHEMA_FILE} is up to date`);
} else {
  writeFileSync(path, printed);
  console.log(`wrote ${SCHEMA_FILE}`);
}
