/**
 * How a table is declared once (tables.ts) and what follows from the declaration: the row type,
 * the quoted identifiers that SQL text is written with, the column list and placeholder texts of
 * inserts and upserts, and the values bound for a row on each provider. The declarations mirror
 * the Prisma schema, which stays the source of truth of the tables and their migrations; a test
 * compares both against the migrated databases.
 *
 * Values are encoded here, per column type, into what the driver binds natively (better-sqlite3:
 * strings, numbers, null and Buffers; pg through Prisma: Dates, booleans, bytes), so the SQLite
 * writer thread binds them as they are.
 */

export type Provider = 'sqlite' | 'postgres';

export type ColumnType = 'text' | 'integer' | 'real' | 'boolean' | 'datetime' | 'bytes';

interface ValueOf {
  text: string;
  integer: number;
  real: number;
  boolean: boolean;
  datetime: Date;
  bytes: Uint8Array;
}

export interface ColumnSpec {
  /** The SQL name (snake_case). */
  name: string;
  type: ColumnType;
  nullable?: true;
  /**
   * Written when the row leaves it undefined (and the field is optional in the row type). Only
   * for columns the database itself defaults the same way.
   */
  default?: unknown;
  /**
   * The value is not bound but computed by the database from another field of the row: `sql`
   * is an expression with one `?`, bound to that field (e.g. a run's tenant, read from its
   * thread row written earlier in the same transaction).
   */
  computed?: { sql: string; from: string };
}

type Value<C extends ColumnSpec> =
  | ValueOf[C['type']]
  | (C extends { nullable: true } ? null : never);

/** The row type of a table: required fields, except those with a default (optional). */
export type RowOf<Columns extends Record<string, ColumnSpec>> = {
  -readonly [K in keyof Columns as Columns[K] extends { default: unknown } ? never : K]: Value<
    Columns[K]
  >;
} & {
  -readonly [K in keyof Columns as Columns[K] extends { default: unknown } ? K : never]?: Value<
    Columns[K]
  >;
};

/** A `?`-placeholder text of one statement, with the values to bind. */
export interface Statement {
  text: string;
  values: unknown[];
}

export interface Table<Row, Columns extends Record<string, ColumnSpec>> {
  /** The quoted table name, for SQL text. */
  readonly sql: string;
  readonly name: string;
  readonly columns: Columns;
  /** Quoted column identifiers by field: `node.c.threadId` is `"thread_id"`. */
  readonly c: { readonly [K in keyof Columns]: string };
  /** Fields in declaration order: the order of inserts' column lists and values. */
  readonly fields: readonly (keyof Columns & string)[];
  /** The primary key's fields. */
  readonly key: readonly (keyof Columns & string)[];
  /** `INSERT INTO "t" (…every column…)`. */
  readonly insertHead: string;
  /** One row's `(?, ?, …)` tuple (computed columns carry their expression). */
  readonly tuple: string;
  /** `ON CONFLICT (key) DO UPDATE SET` the given fields from the new row. */
  upsertTail(fields: readonly (keyof Columns & string)[]): string;
  /** The row's values in `fields` order, encoded for `provider`. */
  encode(row: Row, provider: Provider): unknown[];
  /** `encode` for many rows in a row (one statement's): repeated instants are formatted once. */
  encoder(provider: Provider): (row: Row) => unknown[];
  /** One field's value, encoded for `provider`. */
  encodeField(field: keyof Columns & string, value: unknown, provider: Provider): unknown;
  /** A row read back by `SELECT` of this table's columns (any subset) into field names. */
  decode(raw: Record<string, unknown>, provider: Provider): Row;
  /** `SELECT` list of the given fields (default: all), each aliased to its column name. */
  select(fields?: readonly (keyof Columns & string)[]): string;
}

/** `?` placeholders as `$1`, `$2`, …; the texts hold no `?` elsewhere (no literals). */
export function postgresText(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

const quote = (name: string) => `"${name}"`;

/** SQLite DateTime text as Prisma's SQLite adapter writes and reads it. */
const sqliteDate = (d: Date) => d.toISOString().replace('Z', '+00:00');

/**
 * `sqliteDate` remembering its last answer: the rows of one statement mostly share one instant
 * (a commit's nodes' createdAt), and formatting a Date is otherwise the costliest part of
 * encoding a 1,000-node batch.
 */
function lastDateText(): (d: Date) => string {
  let lastTime = Number.NaN;
  let lastText = '';
  return (d) => {
    const time = d.getTime();
    if (time !== lastTime) {
      lastTime = time;
      lastText = sqliteDate(d);
    }
    return lastText;
  };
}

function encodeValue(
  type: ColumnType,
  value: unknown,
  provider: Provider,
  dateText: (d: Date) => string = sqliteDate,
): unknown {
  if (value === null || value === undefined) return null;
  if (provider === 'postgres') return value;
  switch (type) {
    case 'boolean':
      return value ? 1 : 0;
    case 'datetime':
      return dateText(value as Date);
    case 'bytes': {
      const bytes = value as Uint8Array;
      return Buffer.isBuffer(bytes)
        ? bytes
        : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    default:
      return value;
  }
}

function decodeValue(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
    case 'real':
      return typeof value === 'bigint' ? Number(value) : value;
    case 'boolean':
      return value === true || value === 1 || value === 1n;
    case 'datetime':
      if (value instanceof Date) return value;
      if (typeof value === 'number') return new Date(value);
      return new Date((value as string).includes('T') ? (value as string) : `${value as string}Z`);
    case 'bytes': {
      // A plain Uint8Array whichever driver read it (pg and better-sqlite3 give Buffers, Prisma
      // Uint8Arrays), so rows read either way are equal; a view, not a copy.
      const bytes = value instanceof Uint8Array ? value : Buffer.from(value as string);
      return Buffer.isBuffer(bytes)
        ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        : bytes;
    }
    default:
      return value;
  }
}

/**
 * Declares a table. `Columns` maps each field of the row to its column; the row type follows
 * (`RowOf`), so a field without a column, or a write that leaves a required field out, does not
 * compile.
 */
export function defineTable<const Columns extends Record<string, ColumnSpec>>(
  name: string,
  columns: Columns,
  key: readonly (keyof Columns & string)[],
): Table<RowOf<Columns>, Columns> {
  type Field = keyof Columns & string;
  const fields = Object.keys(columns) as Field[];
  const specs = fields.map((f) => columns[f]!);
  const c = Object.fromEntries(fields.map((f) => [f, quote(columns[f]!.name)])) as {
    [K in keyof Columns]: string;
  };
  const list = (of: readonly Field[]) => of.map((f) => c[f]).join(', ');
  const tuple = `(${specs.map((s) => s.computed?.sql ?? '?').join(', ')})`;
  const allColumns = list(fields);
  const byColumn = new Map(fields.map((f) => [columns[f]!.name, f]));
  const encodeRow = (
    row: RowOf<Columns>,
    provider: Provider,
    dateText: (d: Date) => string,
  ): unknown[] => {
    const values: unknown[] = new Array(fields.length);
    const source = row as Record<string, unknown>;
    for (let i = 0; i < fields.length; i++) {
      const spec = specs[i]!;
      const value = spec.computed !== undefined ? source[spec.computed.from] : source[fields[i]!];
      values[i] = encodeValue(spec.type, value ?? spec.default, provider, dateText);
    }
    return values;
  };
  return {
    sql: quote(name),
    name,
    columns,
    c,
    fields,
    key,
    insertHead: `INSERT INTO ${quote(name)} (${list(fields)})`,
    tuple,
    upsertTail: (updated) =>
      ` ON CONFLICT (${list(key)}) DO UPDATE SET ${updated.map((f) => `${c[f]} = excluded.${c[f]}`).join(', ')}`,
    encode: (row, provider) => encodeRow(row, provider, sqliteDate),
    encoder(provider) {
      const dateText = lastDateText();
      return (row) => encodeRow(row, provider, dateText);
    },
    encodeField: (field, value, provider) => encodeValue(columns[field]!.type, value, provider),
    decode(raw) {
      const row: Record<string, unknown> = {};
      for (const [column, value] of Object.entries(raw)) {
        const field = byColumn.get(column);
        if (field === undefined) continue;
        row[field] = decodeValue(columns[field]!.type, value);
      }
      return row as RowOf<Columns>;
    },
    select: (of) => (of === undefined ? allColumns : list(of)),
  };
}
