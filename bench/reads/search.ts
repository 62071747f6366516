/**
 * Section 5b: `searchNodes(query: "…", first: 20)` over 1,000,000 nodes with text payloads, p50
 * against the raw full-text query in this run. Until Query.searchNodes is in
 * schema/schema.graphql this section measures nothing and says so.
 */
import { type BackendName, type ReadsSizes, row, type SectionResult } from './common.js';
import { queryFields } from './schema-check.js';

export async function runSearch(
  _backend: BackendName,
  _root: string,
  _sizes: ReadsSizes,
): Promise<SectionResult> {
  if (!queryFields().has('searchNodes')) {
    console.log('searchNodes: not measured (Query.searchNodes not in schema)');
    return {
      rows: [row('searchNodes', 'not measured (Query.searchNodes not in schema)')],
      notes: [],
    };
  }
  // To fill in once Query.searchNodes exists: sizes.searchNodes nodes with text payloads built
  // through appendNodes batches, searchNodes(query, first: 20) p50 over HTTP against the raw
  // FTS query (SQLite FTS5 MATCH / Postgres tsvector @@) on the same database.
  console.log(
    'searchNodes: not measured (Query.searchNodes is in the schema, the bench is not written yet)',
  );
  return {
    rows: [row('searchNodes', 'not measured (bench not written for Query.searchNodes yet)')],
    notes: [],
  };
}
