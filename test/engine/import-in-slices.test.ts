/**
 * A large importState is stored in time slices but still as one transaction, on both backends:
 * its rows reach the writer in parts (several statements of node rows, search texts, parents),
 * and a statement failing after some of them ran leaves nothing of the thread behind. The
 * failure is the database's own: a trigger that refuses one node row in the middle of the
 * import. With the trigger gone, the same import under the same id succeeds, and the thread
 * reads back as the state it was given.
 */
import { createRequire } from 'node:module';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { sha256Hex } from '../../src/core/hash.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { parseDatabaseUrl } from '../../src/store/migrate/database-url.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { freshPostgresUrl, freshSqliteUrl } from '../api/support.js';
import { describeWithPostgres } from '../support/services.js';

const require = createRequire(import.meta.url);
const Sqlite = require('better-sqlite3') as new (
  path: string,
) => {
  exec(sql: string): void;
  prepare(sql: string): { get(): unknown };
  close(): void;
};

/** More nodes than one slice of rows (2,048), so that the rows go to the writer in parts. */
const NODES = 5_000;
/** The node row the trigger refuses: in the second slice of node rows. */
const REFUSED_SEQUENCE = 3_000;
const TABLES = ['thread', 'log_entry', 'node', 'node_parent', 'node_text'] as const;

interface Sql {
  run(sql: string): Promise<void>;
  count(table: string): Promise<number>;
  close(): Promise<void>;
}

function sqliteSql(url: string): Sql {
  const target = parseDatabaseUrl(url);
  if (target.provider !== 'sqlite') throw new Error('not SQLite');
  const db = new Sqlite(target.path);
  return {
    run: async (sql) => db.exec(sql),
    count: async (table) =>
      Number((db.prepare(`SELECT COUNT(*) AS n FROM "${table}"`).get() as { n: number }).n),
    close: async () => db.close(),
  };
}

async function postgresSql(url: string): Promise<Sql> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    run: async (sql) => void (await client.query(sql)),
    count: async (table) =>
      Number((await client.query(`SELECT COUNT(*) AS n FROM "${table}"`)).rows[0].n),
    close: () => client.end(),
  };
}

const REFUSE = {
  sqlite: `CREATE TRIGGER refuse_one BEFORE INSERT ON "node" WHEN NEW."sequence" = ${REFUSED_SEQUENCE}
    BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;`,
  postgres: `CREATE FUNCTION refuse_one() RETURNS trigger AS $$ BEGIN
      IF NEW."sequence" = ${REFUSED_SEQUENCE} THEN RAISE EXCEPTION 'disk on fire'; END IF;
      RETURN NEW; END $$ LANGUAGE plpgsql;
    CREATE TRIGGER refuse_one BEFORE INSERT ON "node" FOR EACH ROW EXECUTE FUNCTION refuse_one();`,
};
const ALLOW = {
  sqlite: 'DROP TRIGGER refuse_one;',
  postgres: 'DROP TRIGGER refuse_one ON "node"; DROP FUNCTION refuse_one();',
};

function describeBackend(backend: 'sqlite' | 'postgres', freshUrl: () => Promise<string>) {
  describe(`a large importState is one transaction: ${backend}`, () => {
    let engine: Engine | undefined;
    let sql: Sql | undefined;
    afterAll(async () => {
      await sql?.close();
      await engine?.close();
    });

    it('a node row refused mid-way leaves nothing written; the same import then succeeds', async () => {
      const url = await freshUrl();
      engine = createEngine({ store: openThreadStore(url) });
      sql = backend === 'sqlite' ? sqliteSql(url) : await postgresSql(url);
      expect((await engine.createThread({ threadId: 'source' })).ok).toBe(true);
      for (let from = 0; from < NODES; from += 1_000) {
        const nodes = Array.from({ length: 1_000 }, (_, k) => ({
          kind: 'answer' as const,
          payload: { i: from + k, text: `step ${from + k}` },
        }));
        expect((await engine.appendNodes({ threadId: 'source', nodes })).ok).toBe(true);
      }
      const source = await engine.stateAt('source');
      if (!source.ok) throw new Error(source.error.message);
      const state = JSON.parse(JSON.stringify(source.value.agentState));
      const counts = async () =>
        Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await sql!.count(t)])));
      const before = await counts();

      await sql.run(REFUSE[backend]);
      const refused = await engine
        .importState({ threadId: 'copy', state, idempotencyKey: 'import-1' })
        .then(
          (result) => (result.ok ? undefined : result.error.message),
          (error: Error) => error.message,
        );
      expect(refused).toContain('disk on fire');
      // Nothing of the thread: no row of it in any table, not even those written before.
      expect(await counts()).toEqual(before);
      expect((await engine.stateAt('copy')).ok).toBe(false);

      await sql.run(ALLOW[backend]);
      const imported = await engine.importState({
        threadId: 'copy',
        state,
        idempotencyKey: 'import-1',
      });
      expect(imported.ok && imported.value.nodeCount).toBe(NODES);
      const after = await counts();
      expect(after.node).toBe(before.node + NODES);
      expect(after.log_entry).toBe(before.log_entry + 1);
      // Read back from the database, not the cache: the state it was given, and it verifies.
      const reader = createEngine({ store: openThreadStore(url) });
      try {
        const copy = await reader.stateAt('copy');
        expect(copy.ok && copy.value.agentState).toEqual(state);
        const verified = await reader.verify('copy');
        expect(verified.ok && verified.value.ok).toBe(true);
      } finally {
        await reader.close();
      }
      // The request hash, computed in slices, is the one-call hash of the request.
      const record = await engine.store.findIdempotencyRecord('importState', 'import-1');
      expect(record?.requestHash).toBe(sha256Hex(canonicalJson({ threadId: 'copy', state })));
      // A retry under the same key answers from the record and writes nothing more.
      const retried = await engine.importState({
        threadId: 'copy',
        state,
        idempotencyKey: 'import-1',
      });
      expect(retried).toEqual(imported);
      expect(await counts()).toEqual(after);
    });
  });
}

describeBackend('sqlite', freshSqliteUrl);
describeWithPostgres('a large importState is one transaction', () => {
  describeBackend('postgres', freshPostgresUrl);
});
