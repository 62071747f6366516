/** The committed SDL artifact: the schema printed sorted, with a header saying how to update it. */
import { printSchema } from 'graphql';
import { schema } from './schema.js';

export const SCHEMA_FILE = 'schema/schema.graphql';

export function printSchemaFile(): string {
  return (
    '# Weft GraphQL API. Generated from src/graphql: do not edit.\n' +
    '# Update with `npx tsx scripts/print-schema.ts`; test/api/schema-drift.test.ts checks it.\n\n' +
    `${printSchema(schema)}\n`
  );
}
