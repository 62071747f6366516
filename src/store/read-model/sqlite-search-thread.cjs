'use strict';
/**
 * The SQLite search thread (started by sqlite-searcher.ts): a read-only connection of its own to
 * the file, in a worker thread, so that a search's FTS5 match and the reading of its candidates'
 * texts never hold the event loop, and so that a search past its deadline can be ended by
 * terminating the thread. WAL mode lets it read beside the writer thread and the main thread's
 * reader.
 *
 * Plain CommonJS (no build step), so that it loads the same under tsx, vitest and from dist/.
 *
 * In:  { id, candidates: { text, values }, body, maxBytes }
 *      `candidates` selects the matches newest first, each with `cand` (its node_text id) and
 *      `bytes`; `body` selects one text by id. Texts are read newest first up to `maxBytes` in
 *      all (always at least one).
 * Out: { ready: true } once the connection is open;
 *      { id, rows: [{ row, body }] } or { id, error: { message, code } }.
 */
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);

const db = new Database(workerData.path, { fileMustExist: true });
db.pragma(`busy_timeout = ${workerData.busyTimeoutMs}`);
db.pragma('query_only = ON');

/** Prepared statements kept (candidate texts vary with the tenant's filters). */
const STATEMENT_CACHE = 128;
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

function search(message) {
  const rows = prepared(message.candidates.text).all(message.candidates.values);
  const body = prepared(message.body).pluck();
  const out = [];
  let total = 0;
  for (const row of rows) {
    const bytes = Number(row.bytes);
    if (out.length > 0 && total + bytes > message.maxBytes) break;
    total += bytes;
    out.push({ row, body: body.get(row.cand) ?? '' });
  }
  return out;
}

parentPort.on('message', (message) => {
  try {
    parentPort.postMessage({ id: message.id, rows: search(message) });
  } catch (error) {
    parentPort.postMessage({
      id: message.id,
      error: {
        message: error instanceof Error ? error.message : String(error),
        code: typeof error?.code === 'string' ? error.code : undefined,
      },
    });
  }
});
parentPort.postMessage({ ready: true });
