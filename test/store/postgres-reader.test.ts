/**
 * The Postgres read pool (src/store/prisma/postgres-reader.ts) answers the store's raw SELECTs in
 * Prisma's place: for every table it must give rows that decode exactly as Prisma's do — UTC
 * timestamps read as UTC whatever the process's time zone, COUNT(*) as a bigint, bytes, booleans
 * and nulls alike — and bind Dates as Prisma's adapter does. A differential test on the real
 * Postgres, in a time zone far from UTC (where a local-time reading would be hours off).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createPrisma, type WeftPrisma } from '../../src/store/prisma/index.js';
import * as tables from '../../src/store/tables/index.js';
import { postgresText } from '../../src/store/tables/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

const TABLES = [
  tables.thread,
  tables.logEntry,
  tables.node,
  tables.nodeParent,
  tables.resourceHead,
  tables.run,
  tables.runSpend,
  tables.approval,
  tables.activity,
  tables.snapshot,
  tables.idempotencyRecord,
] as const;

describeWithPostgres('the Postgres read pool reads as Prisma does', () => {
  let database: TestDatabase;
  let weft: WeftPrisma;
  const zone = process.env.TZ;

  beforeAll(async () => {
    process.env.TZ = 'Pacific/Kiritimati'; // UTC+14
    database = await createTestDatabase();
    await migrate(database.url);
    const engine = createEngine({ databaseUrl: database.url });
    try {
      must(await engine.createThread({ threadId: 't', metadata: { team: 'a' } }));
      must(
        await engine.appendNodes({
          threadId: 't',
          idempotencyKey: 'k1',
          nodes: [
            { kind: 'goal', payload: { text: 'find it' } },
            {
              kind: 'inference',
              payload: { text: 'thinking' },
              usage: { model: 'm', inputTokens: 3, outputTokens: 2, costUsd: 0.5 },
            },
          ],
        }),
      );
      const { runId } = must(await engine.startRun({ threadId: 't', goal: 'ship it' }));
      must(
        await engine.dispatch({
          runId,
          action: {
            type: 'request_human_input',
            payload: { pending_approval: { question: 'ship?' }, timeout_ms: 60_000 },
          },
        }),
      );
    } finally {
      await engine.close();
    }
    weft = createPrisma(database.url);
  });

  afterAll(async () => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
    await weft?.prisma.$disconnect();
    await database?.drop();
  });

  const viaPrisma = (text: string, values: unknown[] = []) =>
    (
      weft.prisma as unknown as {
        $queryRawUnsafe(q: string, ...v: unknown[]): Promise<Array<Record<string, unknown>>>;
      }
    ).$queryRawUnsafe(postgresText(text), ...values);
  const viaReader = async (text: string, values: unknown[] = []) => {
    if (weft.provider !== 'postgres' || weft.reader === undefined) throw new Error('no reader');
    const rows = weft.reader.all(postgresText(text), values);
    if (rows === undefined) throw new Error('the reader refused the values');
    return rows;
  };

  it('gives every table the rows Prisma gives, decoded alike', async () => {
    let compared = 0;
    for (const table of TABLES) {
      const text = `SELECT * FROM ${table.sql} ORDER BY 1, 2`;
      const [mine, theirs] = await Promise.all([viaReader(text), viaPrisma(text)]);
      expect(mine.length, table.name).toBe(theirs.length);
      expect(
        mine.map((r) => table.decode(r, 'postgres')),
        table.name,
      ).toEqual(theirs.map((r) => table.decode(r, 'postgres')));
      compared += mine.length;
    }
    expect(compared).toBeGreaterThan(10);
  });

  it('reads timestamps as UTC and COUNT(*) as a bigint', async () => {
    const text = `SELECT ${tables.thread.c.createdAt} AS at, COUNT(*) OVER () AS n FROM ${tables.thread.sql}`;
    const [mine] = await viaReader(text);
    const [theirs] = await viaPrisma(text);
    if (mine === undefined || theirs === undefined) throw new Error('no thread row');
    const at = mine.at as Date;
    expect(at).toBeInstanceOf(Date);
    expect(at.toISOString()).toBe((theirs.at as Date).toISOString());
    // Written moments ago: a local-time reading would be 14 hours off.
    expect(Math.abs(at.getTime() - Date.now())).toBeLessThan(3_600_000);
    expect(mine.n).toBe(1n);
    expect(theirs.n).toBe(1n);
  });

  it('binds a Date as Prisma does: the same rows either side of an instant', async () => {
    const [row] = await viaReader(
      `SELECT ${tables.thread.c.createdAt} AS at FROM ${tables.thread.sql}`,
    );
    const at = row?.at as Date;
    for (const [offset, expected] of [
      [-1, 1],
      [1, 0],
    ] as const) {
      const when = new Date(at.getTime() + offset);
      const text = `SELECT ${tables.thread.c.id} FROM ${tables.thread.sql} WHERE ${tables.thread.c.createdAt} > ?`;
      expect((await viaReader(text, [when])).length).toBe(expected);
      expect((await viaPrisma(text, [when])).length).toBe(expected);
    }
  });
});
