'use strict';
/**
 * The SQLite search thread (started by sqlite-searcher.ts): a read-only connection of its own to
 * the file, in a worker thread, so that a search's FTS5 match and the reading of its candidates'
 * texts never hold the event loop, and so that a search past its deadline can be ended by
 * terminating the thread. WAL mode lets it read beside the writer thread and the main thread's
 * reader.
 *
 * On Linux the thread runs at the lowest CPU priority (nice 19): Linux keeps a nice value per
 * thread, so this one alone yields, and the event loop, which answers every other request, wins
 * the cores whenever both want them; a search then gets the CPU the rest of the server leaves,
 * and WEFT_QUERY_TIMEOUT_MS still ends one that gets too little. Elsewhere (macOS, Windows) the
 * same call would lower the whole process, so it is not made.
 *
 * Plain CommonJS (no build step), so that it loads the same under tsx, vitest and from dist/.
 *
 * A search is answered here whole but for its snippets, so that no text of it crosses to the
 * event loop but the page's heads: the candidates are read newest first, their texts up to
 * `maxBytes` in all (always at least one), each scored by its own text (scoreText), ranked, and
 * the page's texts cut to their first `head` characters.
 *
 * In:  { id, kind: 'rank', candidates: { text, values }, body, maxBytes, matcher, byThread,
 *        offset, take, head }
 *      `candidates` selects the matches newest first, each with `cand` (its node_text id),
 *      `bytes`, and `rank_thread` and `rank_seq` (ties go by these: by thread only when
 *      `byThread`); `body` selects one row's `body` and `payload` by id, from which its text is
 *      derived (search-text-of.cjs); `matcher` is { source, flags } of the regex finding the
 *      query's items (search-text.ts createMatcher), or null.
 *      { id, kind: 'bodies', text, ids }: the rows of whole texts (`text` selects `cand`, `body`
 *      and `payload`).
 * Out: { ready: true } once the connection is open;
 *      { id, rows: [{ row, score, head, cut }] } (the page, best first), { id, rows: [{ cand,
 *      body, payload }] } or { id, error: { message, code } }.
 */
const os = require('node:os');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const { textOfRow } = require('./search-text-of.cjs');

if (process.platform === 'linux') {
  try {
    // pid 0: the calling thread, on Linux.
    os.setPriority(0, os.constants.priority.PRIORITY_LOW);
  } catch {
    // A sandbox may refuse it; searches then run at the server's priority.
  }
}

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

/** Matches counted per text at most: past this many, a text ranks as high as it can. */
const MAX_COUNTED_MATCHES = 64;
/** BM25's term-frequency saturation and length normalisation, with a fixed reference length. */
const K1 = 1.2;
const B = 0.75;
/** The length (UTF-16 code units) a text is compared with; a fixed number, not an average. */
const REFERENCE_LENGTH = 256;

/**
 * The relevance of `text` to the query whose items `matcher` finds (each item its own capture
 * group): per item, its occurrences saturated as in BM25 and normalised by the text's length
 * against a fixed reference, summed. Depends on the text and the query only. Stops counting at
 * MAX_COUNTED_MATCHES, so a text of one repeated word costs no more than a few of its words.
 */
function scoreText(text, matcher) {
  const counts = new Map();
  matcher.lastIndex = 0;
  let found = 0;
  for (let m = matcher.exec(text); m !== null; m = matcher.exec(text)) {
    const item = m.findIndex((group, i) => i > 0 && group !== undefined);
    counts.set(item, (counts.get(item) ?? 0) + 1);
    if (++found >= MAX_COUNTED_MATCHES) break;
  }
  const norm = K1 * (1 - B + (B * text.length) / REFERENCE_LENGTH);
  let score = 0;
  for (const tf of counts.values()) score += (tf * (K1 + 1)) / (tf + norm);
  return score;
}

/** The first `n` UTF-16 code units of `text`, never ending inside a surrogate pair. */
function headOf(text, n) {
  if (text.length <= n) return text;
  const last = text.charCodeAt(n - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? n - 1 : n);
}

function rank(message) {
  const rows = prepared(message.candidates.text).all(message.candidates.values);
  const texts = prepared(message.body);
  const matcher =
    message.matcher === null
      ? undefined
      : new RegExp(message.matcher.source, message.matcher.flags);
  const scored = [];
  let total = 0;
  for (const row of rows) {
    const bytes = Number(row.bytes);
    if (scored.length > 0 && total + bytes > message.maxBytes) break;
    total += bytes;
    const found = texts.get(row.cand);
    const text = found === undefined ? '' : textOfRow(found.body, found.payload);
    scored.push({ row, text, score: matcher === undefined ? 0 : scoreText(text, matcher) });
  }
  scored.sort(
    (a, b) =>
      b.score - a.score ||
      (message.byThread && a.row.rank_thread !== b.row.rank_thread
        ? a.row.rank_thread < b.row.rank_thread
          ? -1
          : 1
        : 0) ||
      a.row.rank_seq - b.row.rank_seq,
  );
  return scored.slice(message.offset, message.offset + message.take).map(({ row, text, score }) => {
    const head = headOf(text, message.head);
    return { row, score, head, cut: head.length < text.length };
  });
}

function search(message) {
  if (message.kind === 'bodies') return prepared(message.text).all(message.ids);
  return rank(message);
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
