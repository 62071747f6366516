/**
 * The hot write, five ways: one transaction writing a 1,000-node append's rows (log_entry, node,
 * node_parent) into a thread of its own per variant.
 */
import { performance } from 'node:perf_hooks';
import type { CompiledQuery, Insertable, Kysely } from 'kysely';
import { insertEntries, insertNodeParents, insertNodes } from '../../src/store/read-model/sql.js';
import {
  prismaScriptRunner,
  type RawClient,
  type RecordedStatement,
  recordScript,
  type ScriptRunner,
  StatementTexts,
} from '../../src/store/read-model/write-script.js';
import type { NodeRow, Provider, StoredEntryRow } from '../../src/store/tables/index.js';
import {
  type BenchPrisma,
  compilerFor,
  type PostgresDB,
  type PrismaWithKysely,
  SET_INSERTS,
  type SqliteDB,
  typedSql,
} from './clients.js';
import type { AppendRows } from './fixture.js';

export interface WriteVariant {
  name: string;
  threadId: string;
  write(rows: AppendRows): Promise<void>;
}

/** Today's store path: sql.ts's multi-row statements, recorded, run whole by the store's runner. */
export function todayWrite(provider: Provider, runner: ScriptRunner) {
  const texts = new StatementTexts(provider);
  return (a: AppendRows) =>
    runner.runAll(
      recordScript(texts, (s) => {
        insertEntries(s, [a.entry]);
        insertNodes(s, a.nodes);
        insertNodeParents(s, a.parents);
      }),
    );
}

/** SQLite DateTime text as the store writes it, the last one remembered (a batch shares one). */
function sqliteDates(): (d: Date) => string {
  let time = Number.NaN;
  let text = '';
  return (d) => {
    if (d.getTime() !== time) {
      time = d.getTime();
      text = d.toISOString().replace('Z', '+00:00');
    }
    return text;
  };
}

const buffer = (bytes: Uint8Array | null) =>
  bytes === null || Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * Every column named: Kysely's `Insertable` makes a nullable column optional, so a write that
 * left one out would compile and store NULL; the store's row types require every column.
 */
type Complete<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

type Query = { execute(): Promise<unknown>; compile(): CompiledQuery };

/** The append's rows as the generated SQLite tables type them. */
function sqliteValues(a: AppendRows) {
  const date = sqliteDates();
  const e: StoredEntryRow = a.entry;
  const entry: Complete<Insertable<SqliteDB['log_entry']>> = {
    thread_id: e.threadId,
    log_index: e.index,
    entry_id: e.entryId,
    type: e.type,
    recorded_at: date(e.recordedAt),
    entry: e.entry,
    packed: buffer(e.packed ?? null),
    verbatim: e.verbatim ?? null,
  };
  const nodes = a.nodes.map(
    (n: NodeRow): Complete<Insertable<SqliteDB['node']>> => ({
      thread_id: n.threadId,
      id: n.id,
      sequence: n.sequence,
      kind: n.kind,
      payload: n.payload,
      created_at: date(n.createdAt),
      resource_key: n.resourceKey,
      log_index: n.logIndex,
      run_id: n.runId,
      taint: n.taint,
      usage: n.usage,
      is_frontier: n.isFrontier ? 1 : 0,
      is_current: n.isCurrent ? 1 : 0,
    }),
  );
  const parents = a.parents.map(
    (p): Complete<Insertable<SqliteDB['node_parent']>> => ({
      thread_id: p.threadId,
      child_seq: p.childSeq,
      parent_seq: p.parentSeq,
      position: p.position,
    }),
  );
  return { entry, nodes, parents };
}

/** The append's rows as the generated Postgres tables type them. */
function postgresValues(a: AppendRows) {
  const e = a.entry;
  const nodes = a.nodes.map(
    (n): Complete<Insertable<PostgresDB['node']>> => ({
      thread_id: n.threadId,
      id: n.id,
      sequence: n.sequence,
      kind: n.kind,
      payload: n.payload,
      created_at: n.createdAt,
      resource_key: n.resourceKey,
      log_index: n.logIndex,
      run_id: n.runId,
      taint: n.taint,
      usage: n.usage,
      is_frontier: n.isFrontier,
      is_current: n.isCurrent,
    }),
  );
  const parents = a.parents.map(
    (p): Complete<Insertable<PostgresDB['node_parent']>> => ({
      thread_id: p.threadId,
      child_seq: p.childSeq,
      parent_seq: p.parentSeq,
      position: p.position,
    }),
  );
  const entry: Complete<Insertable<PostgresDB['log_entry']>> = {
    thread_id: e.threadId,
    log_index: e.index,
    entry_id: e.entryId,
    type: e.type,
    recorded_at: e.recordedAt,
    entry: e.entry,
    packed: buffer(e.packed ?? null),
    verbatim: e.verbatim ?? null,
  };
  return { entry, nodes, parents };
}

/** The append as Kysely inserts (the builder: one value node per bound value). */
function sqliteInserts(db: Kysely<SqliteDB>, a: AppendRows): Query[] {
  const v = sqliteValues(a);
  return [
    db.insertInto('log_entry').values(v.entry),
    db.insertInto('node').values(v.nodes),
    db.insertInto('node_parent').values(v.parents),
  ];
}

function postgresInserts(db: Kysely<PostgresDB>, a: AppendRows): Query[] {
  const v = postgresValues(a);
  return [
    db.insertInto('log_entry').values(v.entry),
    db.insertInto('node').values(v.nodes),
    db.insertInto('node_parent').values(v.parents),
  ];
}

export function insertsFor(provider: Provider) {
  return provider === 'sqlite'
    ? (db: Kysely<SqliteDB> | Kysely<PostgresDB>, a: AppendRows) =>
        sqliteInserts(db as Kysely<SqliteDB>, a)
    : (db: Kysely<SqliteDB> | Kysely<PostgresDB>, a: AppendRows) =>
        postgresInserts(db as Kysely<PostgresDB>, a);
}

/**
 * A multi-row INSERT into `table` of rows typed by its generated type (`Insertable<DB[table]>`:
 * a wrong column or value type does not compile), the text built as sql.ts builds it (cached per
 * row count) instead of by Kysely's builder.
 */
const typedInsert =
  <DB>(texts: StatementTexts) =>
  <T extends keyof DB & string>(
    table: T,
    rows: ReadonlyArray<Complete<Insertable<DB[T]>>>,
  ): RecordedStatement => {
    const columns = Object.keys(rows[0]!) as Array<keyof Insertable<DB[T]> & string>;
    const head = `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')})`;
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    const values: unknown[] = [];
    for (const row of rows) for (const c of columns) values.push(row[c]);
    return { text: texts.forProvider(texts.multiRow(head, tuple, rows.length, '')), values };
  };

/**
 * Kysely's generated types without its builder: the rows typed by the generated tables, the
 * statements built by a typed multi-row helper, run by today's runner.
 */
export function kyselyTypedRowsWrite(provider: Provider, runner: ScriptRunner) {
  const texts = new StatementTexts(provider);
  if (provider === 'sqlite') {
    const insert = typedInsert<SqliteDB>(texts);
    return (a: AppendRows) => {
      const v = sqliteValues(a);
      return runner.runAll([
        insert('log_entry', [v.entry]),
        insert('node', v.nodes),
        insert('node_parent', v.parents),
      ]);
    };
  }
  const insert = typedInsert<PostgresDB>(texts);
  return (a: AppendRows) => {
    const v = postgresValues(a);
    return runner.runAll([
      insert('log_entry', [v.entry]),
      insert('node', v.nodes),
      insert('node_parent', v.parents),
    ]);
  };
}

/** Kysely on its own driver: one Kysely transaction. */
export function kyselyDriverWrite(provider: Provider, db: Kysely<SqliteDB> | Kysely<PostgresDB>) {
  const inserts = insertsFor(provider);
  return (a: AppendRows) =>
    (db as Kysely<SqliteDB>).transaction().execute(async (trx) => {
      for (const q of inserts(trx, a)) await q.execute();
    });
}

/** Kysely compiling the statements, today's runner running them (writer thread / Prisma tx). */
export function kyselyCompiledWrite(provider: Provider, runner: ScriptRunner) {
  const inserts = insertsFor(provider);
  const compiler = compilerFor<SqliteDB>(provider);
  return (a: AppendRows) => {
    const statements: RecordedStatement[] = inserts(compiler, a).map((q) => {
      const c = q.compile();
      return { text: c.sql, values: [...c.parameters] };
    });
    return runner.runAll(statements);
  };
}

/** Kysely through Prisma's connection: the inserts inside `prisma.$transaction`. */
export function prismaKyselyWrite(
  provider: Provider,
  prisma: PrismaWithKysely<SqliteDB> | PrismaWithKysely<PostgresDB>,
) {
  const inserts = insertsFor(provider);
  return (a: AppendRows) =>
    (prisma as PrismaWithKysely<SqliteDB>).$transaction(async (tx) => {
      for (const q of inserts(tx.$kysely, a)) await q.execute();
    });
}

type TypedTx = Pick<BenchPrisma, '$queryRawTyped'>;

/** Nodes and edges as one JSON array of row arrays each (SQLite's set-valued parameter). */
function sqliteSetParams(a: AppendRows) {
  const date = sqliteDates();
  const nodes = JSON.stringify(
    a.nodes.map((n) => [
      n.threadId,
      n.id,
      n.sequence,
      n.kind,
      n.payload,
      date(n.createdAt),
      n.resourceKey,
      n.logIndex,
      n.runId,
      n.taint,
      n.usage,
      n.isFrontier ? 1 : 0,
      n.isCurrent ? 1 : 0,
    ]),
  );
  const parents = JSON.stringify(
    a.parents.map((p) => [p.threadId, p.childSeq, p.parentSeq, p.position]),
  );
  return { date, nodes: [nodes] as [string], parents: [parents] as [string] };
}

/** Nodes and edges as one array per column (Postgres's unnest). */
function postgresSetParams(a: AppendRows) {
  const ns = a.nodes;
  const ps = a.parents;
  const nodes: Parameters<typeof typedSql.postgres.insertNodes> = [
    ns.map((n) => n.threadId),
    ns.map((n) => n.id),
    ns.map((n) => n.sequence),
    ns.map((n) => n.kind),
    ns.map((n) => n.payload),
    ns.map((n) => n.createdAt.toISOString()),
    ns.map((n) => n.resourceKey),
    ns.map((n) => n.logIndex),
    ns.map((n) => n.runId),
    ns.map((n) => n.taint),
    ns.map((n) => n.usage),
    ns.map((n) => n.isFrontier),
    ns.map((n) => n.isCurrent),
  ];
  const parents: Parameters<typeof typedSql.postgres.insertParents> = [
    ps.map((p) => p.threadId),
    ps.map((p) => p.childSeq),
    ps.map((p) => p.parentSeq),
    ps.map((p) => p.position),
  ];
  return { nodes, parents };
}

/** Prisma TypedSQL: three typed statements (one per table) inside `prisma.$transaction`. */
export function typedSqlWrite(provider: Provider, prisma: BenchPrisma) {
  const run = (work: (tx: TypedTx) => Promise<void>) =>
    prisma.$transaction((tx) => work(tx as unknown as TypedTx));
  if (provider === 'sqlite') {
    const q = typedSql.sqlite;
    return (a: AppendRows) => {
      const { date, nodes, parents } = sqliteSetParams(a);
      const e = a.entry;
      return run(async (tx) => {
        await tx.$queryRawTyped(
          q.insertEntry(
            e.threadId,
            e.index,
            e.entryId,
            e.type,
            date(e.recordedAt),
            e.entry,
            e.packed ?? null,
            e.verbatim ?? null,
          ),
        );
        await tx.$queryRawTyped(q.insertNodes(...nodes));
        await tx.$queryRawTyped(q.insertParents(...parents));
      });
    };
  }
  const q = typedSql.postgres;
  return (a: AppendRows) => {
    const e = a.entry;
    const { nodes, parents } = postgresSetParams(a);
    return run(async (tx) => {
      await tx.$queryRawTyped(
        q.insertEntry(
          e.threadId,
          e.index,
          e.entryId,
          e.type,
          e.recordedAt,
          e.entry,
          e.packed ?? null,
          e.verbatim ?? null,
        ),
      );
      await tx.$queryRawTyped(q.insertNodes(...nodes));
      await tx.$queryRawTyped(q.insertParents(...parents));
    });
  };
}

/**
 * TypedSQL's statement shape without TypedSQL: the entry by sql.ts, nodes and edges by one
 * set-valued parameter per column (json_each / unnest), run by today's runner — to tell what the
 * statement shape is worth from what the layer is.
 */
export function setValuedWrite(provider: Provider, runner: ScriptRunner) {
  const texts = new StatementTexts(provider);
  const sets = SET_INSERTS[provider];
  return (a: AppendRows) => {
    const p = provider === 'sqlite' ? sqliteSetParams(a) : postgresSetParams(a);
    const statements = recordScript(texts, (s) => insertEntries(s, [a.entry]));
    statements.push(
      { text: sets.nodes, values: p.nodes },
      { text: sets.parents, values: p.parents },
    );
    return runner.runAll(statements);
  };
}

/** Today's Postgres runner: Prisma interactive transactions, statements by $executeRawUnsafe. */
export const postgresRunner = (prisma: unknown): ScriptRunner =>
  prismaScriptRunner(prisma as RawClient, {});

/**
 * The main-thread cost of building one append's statements, each way (no database): today's
 * recording (sql.ts), Kysely's builder and compiler, the typed multi-row helper. Medians of
 * `rounds`, interleaved.
 */
export function statementBuildMs(provider: Provider, a: AppendRows, rounds = 41) {
  const texts = new StatementTexts(provider);
  const compiler = compilerFor<SqliteDB>(provider);
  const inserts = insertsFor(provider);
  const helper = kyselyTypedRowsWrite(provider, {
    runAll: async () => undefined,
    runAllInSlices: async () => undefined,
    runEach: async () => [],
    close: async () => undefined,
  });
  const ways: Record<string, () => unknown> = {
    'today: sql.ts recording': () =>
      recordScript(texts, (s) => {
        insertEntries(s, [a.entry]);
        insertNodes(s, a.nodes);
        insertNodeParents(s, a.parents);
      }),
    'Kysely builder + compile': () => inserts(compiler, a).map((q) => q.compile()),
    'Kysely types, typed multi-row helper': () => helper(a),
  };
  const ms: Record<string, number[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, build] of Object.entries(ways)) {
      const start = performance.now();
      build();
      const took = performance.now() - start;
      ms[name] = [...(ms[name] ?? []), took];
    }
  }
  return Object.entries(ms).map(([name, times]) => {
    times.sort((x, y) => x - y);
    return { name, ms: times[times.length >> 1]! };
  });
}
