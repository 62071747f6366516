/**
 * A thread's spend is kept on its row with each commit, so `thread { spend }` — on a page of
 * threads a dashboard lists — is a column read, not a fold of the whole log. On SQLite and
 * Postgres: the row's spend equals the folded state's after usage in runs and on nodes outside
 * any run; a fresh engine answers it without loading a state; a row that does not know it (last
 * written before the columns existed: null) is answered from the folded state, and the next
 * commit fills it in again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Result } from '../../src/core/errors.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createReads } from '../../src/reads/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';

const must = <T>(result: Result<T>): T => {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
};

const root = mkdtempSync(join(tmpdir(), 'weft-spend-'));
const databases: TestDatabase[] = [];
afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  for (const db of databases) await db.drop();
});

/** Sets the thread row's spend columns to NULL with the raw driver (a row from before them). */
async function forgetSpend(url: string, threadId: string): Promise<void> {
  const sql =
    'UPDATE "thread" SET "spend_input_tokens" = NULL, "spend_output_tokens" = NULL, "spend_cost_usd" = NULL, "spend_calls" = NULL WHERE "id" = ';
  if (url.startsWith('file:')) {
    const db = new Database(url.slice('file:'.length));
    db.prepare(`${sql}?`).run(threadId);
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`${sql}$1`, [threadId]);
  await client.end();
}

async function writeUsage(engine: Engine, threadId: string): Promise<void> {
  must(await engine.createThread({ threadId }));
  const run = must(
    await engine.startRun({ threadId, goal: 'spend', budgetUsd: 10, maxTokenBudget: 100_000 }),
  );
  const runId = run.runId;
  must(
    await engine.recordUsage({
      threadId,
      runId,
      model: 'm-large',
      inputTokens: 1200,
      outputTokens: 300,
      costUsd: 0.25,
    }),
  );
  must(
    await engine.recordUsage({
      threadId,
      runId,
      model: 'm-small',
      inputTokens: 40,
      outputTokens: 7,
    }),
  );
  // Usage on a node outside any run counts towards the thread too.
  must(
    await engine.appendNodes({
      threadId,
      nodes: [
        {
          kind: 'inference',
          payload: { text: 'outside a run' },
          usage: { model: 'm-small', inputTokens: 11, outputTokens: 5, costUsd: 0.01 },
        },
      ],
    }),
  );
}

function suite(open: () => Promise<string>) {
  it('keeps the spend on the thread row, read without a fold, and folds only for a row that does not know it', async () => {
    const url = await open();
    const writer = createEngine({ databaseUrl: url });
    await writeUsage(writer, 'spent');
    must(await writer.createThread({ threadId: 'idle' }));
    const folded = must(await writer.getState('spent')).spend;
    expect(folded.calls).toBeGreaterThanOrEqual(3);
    expect(folded.inputTokens).toBe(1251);
    await writer.close();

    // A fresh engine: its state cache starts empty, so a fold would show in its counters.
    const reader = createEngine({ databaseUrl: url });
    const reads = createReads(reader, { databaseUrl: url });
    try {
      expect(must(await reads.spend('spent'))).toEqual(folded);
      expect(must(await reads.spend('idle'))).toEqual({
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        calls: 0,
      });
      const [view] = await reads.threads(['spent']);
      expect(view?.spend).toEqual(folded);
      expect(reader.cacheStats().threads).toBe(0);
      expect(reader.cacheStats().misses).toBe(0);

      await forgetSpend(url, 'spent');
      const [unknown] = await reads.threads(['spent']);
      expect(unknown?.spend).toBeNull();
      expect(must(await reads.spend('spent'))).toEqual(folded);
      expect(reader.cacheStats().misses).toBe(1);

      // The next commit writes the spend again.
      must(
        await reader.appendNodes({ threadId: 'spent', nodes: [{ kind: 'answer', payload: {} }] }),
      );
      const [again] = await reads.threads(['spent']);
      expect(again?.spend).toEqual(folded);
    } finally {
      await reads.close();
      await reader.close();
    }
  });
}

describe('thread spend from the row: SQLite', () => {
  let n = 0;
  suite(async () => {
    const url = `file:${join(root, `spend-${++n}.db`)}`;
    await migrate(url);
    return url;
  });
});

describeWithPostgres('thread spend from the row: Postgres', () => {
  suite(async () => {
    const db = await createTestDatabase();
    databases.push(db);
    await migrate(db.url);
    return db.url;
  });
});
