'use strict';
/**
 * The SQLite writer thread (started by sqlite-writer.ts): the one write connection of a SQLite
 * file, in a worker thread of its own so that statements, WAL writes, fsync and checkpoints never
 * block the event loop. Each message is one whole transaction — `BEGIN IMMEDIATE`, the script's
 * statements, `COMMIT` — run synchronously: the thread never waits on the main thread while it
 * holds the write lock.
 *
 * Plain CommonJS (no build step), so that it loads the same under tsx, vitest and from dist/.
 *
 * Values arrive encoded for the driver by the table declarations (src/store/tables): strings,
 * numbers, null and byte arrays, which better-sqlite3 binds as they are.
 *
 * In:  { id, mode: 'all' | 'each', blocks: [[{ text, values }]] }   or   { close: true }
 *      or, for a large script, { id, part: [{ text, values }] } any number of times before its
 *      { id, mode: 'all', … } (the last statements), or { id, drop: true } to abandon it
 * Out: { id, outcomes: [{ ok: true } | { ok: false, statement, error: { message, code } }] }
 *      or { id, fatal: { message, code } } when the transaction as a whole failed.
 */
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);

/** Prepared statements kept (multi-row texts vary with the row count). */
const STATEMENT_CACHE = 128;

const db = new Database(workerData.path);
for (const pragma of workerData.pragmas) db.pragma(pragma);
const statements = new Map();

function prepared(text) {
  let statement = statements.get(text);
  if (statement === undefined) {
    statement = db.prepare(text);
    if (statements.size >= STATEMENT_CACHE) statements.delete(statements.keys().next().value);
    statements.set(text, statement);
  }
  return statement;
}

function describe(error) {
  return {
    message: error instanceof Error ? error.message : String(error),
    code: typeof error?.code === 'string' ? error.code : undefined,
  };
}

function runBlock(block) {
  for (let i = 0; i < block.length; i++) {
    try {
      prepared(block[i].text).run(block[i].values);
    } catch (error) {
      return { ok: false, statement: i, error: describe(error) };
    }
  }
  return { ok: true };
}

function transaction(message) {
  try {
    db.exec('BEGIN IMMEDIATE');
    const outcomes = [];
    if (message.mode === 'all') {
      const outcome = runBlock(message.blocks[0]);
      if (!outcome.ok) {
        db.exec('ROLLBACK');
        return { id: message.id, outcomes: [outcome] };
      }
      outcomes.push(outcome);
    } else {
      for (const block of message.blocks) {
        db.exec('SAVEPOINT weft_item');
        const outcome = runBlock(block);
        if (!outcome.ok) db.exec('ROLLBACK TO SAVEPOINT weft_item');
        db.exec('RELEASE SAVEPOINT weft_item');
        outcomes.push(outcome);
      }
    }
    db.exec('COMMIT');
    return { id: message.id, outcomes };
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    return { id: message.id, fatal: describe(error) };
  }
}

/**
 * The parts of large scripts still arriving, by id: kept, not run, so that no lock is held while
 * the main thread prepares the next part. The last part comes as an ordinary message of the same
 * id and runs them all, in order, as its one transaction.
 */
const parts = new Map();

parentPort.on('message', (message) => {
  if (message.close) {
    db.close();
    parentPort.close();
    return;
  }
  if (message.part !== undefined) {
    const kept = parts.get(message.id);
    if (kept === undefined) parts.set(message.id, message.part);
    else for (const statement of message.part) kept.push(statement);
    return;
  }
  if (message.drop) {
    parts.delete(message.id);
    return;
  }
  const kept = parts.get(message.id);
  if (kept !== undefined) {
    parts.delete(message.id);
    for (const statement of message.blocks[0]) kept.push(statement);
    message.blocks[0] = kept;
  }
  parentPort.postMessage(transaction(message));
});
