/**
 * The write connection of a SQLite file: better-sqlite3 itself, not a Prisma client, in a worker
 * thread of its own (sqlite-writer-thread.cjs): not through Prisma, whose query interpreter,
 * argument mapping and per-call `prepare` cost more than the statements themselves, and not on
 * the main thread, where the statements, the WAL writes of COMMIT and its fsync would take the
 * event loop's time under concurrent appends. A commit's recorded script (write-script.ts) goes
 * to the writer thread as one message and runs there whole, as one transaction, with statements
 * prepared once per text, while the event loop serves other requests.
 *
 * The values of a script are already encoded for the driver (src/store/tables: booleans as 1/0,
 * dates as the ISO-8601 text Prisma's SQLite adapter reads back, bytes as blobs), so the thread
 * binds them as they arrive.
 *
 * The thread never waits on the main thread while it holds the write lock, so another connection
 * of this process that busy-waits for the lock (synchronously, on the main thread) cannot
 * deadlock it. A result is delivered only after COMMIT returned, so only committed writes are
 * acknowledged.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { SQLITE_PRAGMAS } from '../migrate/sqlite-pragmas.js';
import type { Pause } from './time-slices.js';
import {
  type BlockOutcome,
  type RecordedStatement,
  type ScriptRunner,
  StatementFailure,
} from './write-script.js';

const require = createRequire(import.meta.url);

/** Values (of statements) per part of a large script sent to the thread. */
const VALUES_PER_PART = 32_768;

interface WireError {
  message: string;
  code?: string;
}

type WireOutcome = { ok: true } | { ok: false; statement: number; error: WireError };

type Reply = { id: number; outcomes: WireOutcome[] } | { id: number; fatal: WireError };

/** An error of the writer thread as a local Error carrying the SQLite code (SQLITE_…). */
const errorOf = (wire: WireError): Error =>
  Object.assign(new Error(wire.message), {
    name: 'SqliteError',
    ...(wire.code === undefined ? {} : { code: wire.code }),
  });

/** What crosses to the thread: texts and values as recorded (the thread binds them). */
const wire = (statements: readonly RecordedStatement[]) =>
  statements.map((s) => ({ text: s.text, values: s.values }));

/** Opens the writer thread of the SQLite file at `path` (created with its folder if missing). */
export function openSqliteWriteConnection(path: string): ScriptRunner {
  mkdirSync(dirname(path), { recursive: true });
  const worker = new Worker(new URL('./sqlite-writer-thread.cjs', import.meta.url), {
    workerData: { path, driver: require.resolve('better-sqlite3'), pragmas: SQLITE_PRAGMAS },
    // The thread is plain CommonJS: no loader (tsx) of the main thread is needed there.
    execArgv: [],
  });
  const pending = new Map<number, { resolve(reply: Reply): void; reject(error: unknown): void }>();
  let nextId = 0;
  let stopped: Error | undefined;
  let closing: Promise<void> | undefined;
  // An idle writer thread does not keep the process alive; one with a transaction in flight does.
  worker.unref();

  const fail = (error: Error) => {
    stopped ??= error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  worker.on('message', (reply: Reply) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    waiting?.resolve(reply);
  });
  worker.on('error', (error) =>
    fail(new Error(`SQLite writer thread failed: ${error.message}`, { cause: error })),
  );
  worker.on('exit', (code) => {
    if (closing === undefined) fail(new Error(`SQLite writer thread exited (code ${code})`));
  });

  const send = (
    mode: 'all' | 'each',
    blocks: ReadonlyArray<readonly RecordedStatement[]>,
    given?: number,
  ) =>
    new Promise<Reply>((resolve, reject) => {
      if (stopped !== undefined) return reject(stopped);
      if (closing !== undefined) return reject(new Error('SQLite writer closed'));
      const id = given ?? nextId++;
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      try {
        worker.postMessage({ id, mode, blocks: blocks.map(wire) });
      } catch (error) {
        // A value the structured clone refuses: nothing was sent, nothing was written.
        pending.delete(id);
        if (pending.size === 0) worker.unref();
        reject(error);
      }
    });

  /**
   * A large script in parts: every part but the last is kept by the thread under the script's id
   * (nothing runs, no lock is taken while the main thread prepares the next part); the last
   * runs them all as one transaction. A script abandoned on the way is dropped there.
   */
  const sendInParts = async (statements: readonly RecordedStatement[], pause: Pause) => {
    if (stopped !== undefined) throw stopped;
    const id = nextId++;
    let from = 0;
    try {
      while (from < statements.length) {
        let to = from;
        let values = 0;
        while (to < statements.length && values < VALUES_PER_PART) {
          values += statements[to]!.values.length + 1;
          to++;
        }
        if (to === statements.length) break;
        if (stopped !== undefined) throw stopped;
        worker.postMessage({ id, part: wire(statements.slice(from, to)) });
        from = to;
        await pause();
      }
    } catch (error) {
      if (stopped === undefined && closing === undefined) worker.postMessage({ id, drop: true });
      throw error;
    }
    return send('all', [statements.slice(from)], id);
  };

  const outcomesOf = (reply: Reply): WireOutcome[] => {
    if ('fatal' in reply) throw errorOf(reply.fatal);
    return reply.outcomes;
  };

  return {
    async runAll(statements) {
      const [outcome] = outcomesOf(await send('all', [statements]));
      if (outcome !== undefined && !outcome.ok) {
        throw new StatementFailure(outcome.statement, errorOf(outcome.error));
      }
    },
    async runAllInSlices(statements, pause) {
      const [outcome] = outcomesOf(await sendInParts(statements, pause));
      if (outcome !== undefined && !outcome.ok) {
        throw new StatementFailure(outcome.statement, errorOf(outcome.error));
      }
    },
    async runEach(blocks) {
      return outcomesOf(await send('each', blocks)).map(
        (o): BlockOutcome => (o.ok ? o : { ...o, error: errorOf(o.error) }),
      );
    },
    close() {
      closing ??= new Promise<void>((done) => {
        if (stopped !== undefined) return done();
        worker.once('exit', () => done());
        worker.ref();
        worker.postMessage({ close: true });
      });
      return closing;
    },
  };
}
