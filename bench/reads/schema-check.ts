/** Whether the schema the server serves (schema/schema.graphql) has a field on Query. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const SCHEMA = fileURLToPath(new URL('../../schema/schema.graphql', import.meta.url));

/** The fields of `type Query { … }` in the printed schema. */
export function queryFields(): Set<string> {
  const text = readFileSync(SCHEMA, 'utf8');
  const block = /^type Query \{\n([\s\S]*?)^\}/m.exec(text)?.[1] ?? '';
  // A field starts a line (two spaces of indent) with its name, then its arguments or its type.
  return new Set([...block.matchAll(/^ {2}([A-Za-z_]\w*)\s*[(:]/gm)].map((m) => m[1]!));
}
