/**
 * "One place per column": the table declarations (src/store/tables) are the only place in
 * src/store where a column name is written. SQL elsewhere takes identifiers from them
 * (`node.c.threadId`), so adding or renaming a column touches the declaration, the Prisma schema
 * and a migration — and this scan fails on any SQL text that names a column by hand. The
 * declarations themselves are checked against the migrated databases: same tables, same
 * columns, same nullability, on SQLite and on Postgres.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate/index.js';
import { migrationLedger, nodeSearch, TABLES } from '../../src/store/tables/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';

const STORE = resolve(import.meta.dirname, '../../src/store');
const TABLES_DIR = join(STORE, 'tables');

const declared = [...Object.values(TABLES), migrationLedger];
const columnNames = [
  ...new Set(declared.flatMap((t) => Object.values(t.columns).map((c) => c.name))),
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return path === TABLES_DIR ? [] : files(path);
    return /\.(ts|cjs|mjs)$/.test(name) ? [path] : [];
  });
}

/** The texts of every string and template literal of a source file (their SQL, if any). */
function literals(text: string): string[] {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      out.push(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * Column names written in the string literals of `text`: a snake_case column name as a word, or
 * any column name as a quoted SQL identifier (`"kind"`; a JSON key such as `"payload":` is not
 * one). Code (property names such as the run state's `run.started_at`) and comments do not count.
 */
function columnsNamedIn(text: string): string[] {
  const strings = literals(text);
  return columnNames.filter((name) => {
    const pattern = name.includes('_') ? new RegExp(`\\b${name}\\b`) : new RegExp(`"${name}"(?!:)`);
    return strings.some((s) => pattern.test(s));
  });
}

describe('column names live in the table declarations', () => {
  it('the scan recognises a hand-written column name', () => {
    expect(columnsNamedIn('const q = `SELECT "kind" FROM x WHERE thread_id = ?`;')).toEqual([
      'thread_id',
      'kind',
    ]);
    expect(
      columnsNamedIn('// "kind" and thread_id in a comment\nconst k = \'"payload":\';'),
    ).toEqual([]);
    expect(columnsNamedIn('const s = { started_at: run.started_at };')).toEqual([]);
    expect(columnsNamedIn("const label = 'node.resource_key';")).toEqual(['resource_key']);
    const template = ['const q = `SELECT p.log_index FROM $', '{t} p`;'].join('');
    expect(columnsNamedIn(template)).toEqual(['log_index']);
  });

  it('no file of src/store outside src/store/tables writes one', () => {
    const offenders = files(STORE)
      .map((file) => ({
        file: relative(STORE, file),
        columns: columnsNamedIn(readFileSync(file, 'utf8')),
      }))
      .filter((f) => f.columns.length > 0);
    expect(offenders).toEqual([]);
  });
});

interface DbColumn {
  table: string;
  column: string;
  nullable: boolean;
}

const byName = (a: DbColumn, b: DbColumn) =>
  a.table.localeCompare(b.table) || a.column.localeCompare(b.column);

const declaredColumns = (): DbColumn[] =>
  declared
    .flatMap((t) =>
      Object.values(t.columns).map((c) => ({
        table: t.name,
        column: c.name,
        nullable: 'nullable' in c && c.nullable === true,
      })),
    )
    .sort(byName);

describe('the declarations match the migrated SQLite database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-tables-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has exactly the declared tables and columns, with their nullability', async () => {
    const path = join(dir, 'weft.db');
    await migrate(`file:${path}`);
    const db = new Database(path, { readonly: true });
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .all() as Array<{ name: string }>;
      // The FTS5 index of migration 0010 is no table of the Prisma schema and has no declaration:
      // it and its shadow tables are the only tables left out.
      const search: string[] = [nodeSearch.name, ...nodeSearch.shadowTables];
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(search));
      const found = tables
        .filter(({ name }) => !search.includes(name))
        .flatMap(({ name }) =>
          (
            db.prepare(`PRAGMA table_info("${name}")`).all() as Array<{
              name: string;
              notnull: number;
              pk: number;
            }>
          ).map((c) => ({ table: name, column: c.name, nullable: c.notnull === 0 && c.pk === 0 })),
        )
        .sort(byName);
      expect(found).toEqual(declaredColumns());
    } finally {
      db.close();
    }
  });
});

describeWithPostgres('the declarations match the migrated Postgres database', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await migrate(database.url);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('has exactly the declared tables and columns, with their nullability', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{
        table_name: string;
        column_name: string;
        is_nullable: string;
      }>(
        "SELECT table_name, column_name, is_nullable FROM information_schema.columns WHERE table_schema = 'public'",
      );
      const found = rows
        .map((r) => ({
          table: r.table_name,
          column: r.column_name,
          nullable: r.is_nullable === 'YES',
        }))
        .sort(byName);
      expect(found).toEqual(declaredColumns());
    } finally {
      await client.end();
    }
  });
});
