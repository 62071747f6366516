import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { printSchemaFile, SCHEMA_FILE } from '../../src/graphql/print.js';

const committed = readFileSync(join(import.meta.dirname, '../..', SCHEMA_FILE), 'utf8');

describe('schema/schema.graphql', () => {
  it('is the printed schema (run `npx tsx scripts/print-schema.ts` after a schema change)', () => {
    expect(committed).toBe(printSchemaFile());
  });

  it('is printed sorted: re-sorting the parsed SDL changes nothing', () => {
    const sdl = printSchema(buildSchema(committed));
    expect(printSchema(lexicographicSortSchema(buildSchema(committed)))).toBe(sdl);
  });
});
