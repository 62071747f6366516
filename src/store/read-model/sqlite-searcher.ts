/**
 * Where SQLite searches read: a worker thread with a read-only connection of its own
 * (sqlite-search-thread.cjs), so that the FTS5 match, the reading and scoring of up to
 * MAX_SCORED_BYTES of text and the ranking, synchronous, run beside the event loop instead of on
 * it (only the page comes back, each text cut to its head for the snippet), and so that
 * WEFT_QUERY_TIMEOUT_MS can end a search wherever it is: past the deadline the thread is
 * terminated (a fresh one serves the next search) and the search answers QUERY_TIMEOUT.
 *
 * The thread is started on the first search and its deadline counts from when its connection is
 * open, so a slow start never times a search out. One search runs at a time (the caller's lane,
 * search-queries.ts), so terminating the thread never ends anyone else's search.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SQLITE_BUSY_TIMEOUT_MS } from '../migrate/sqlite-pragmas.js';
import { queryTimeout } from '../prisma/errors.js';

const require = createRequire(import.meta.url);

/** One search, ranked in the thread (sqlite-search-thread.cjs): its page, with each text's head. */
export interface RankRequest {
  kind: 'rank';
  /**
   * Selects the matches newest first, each with `cand` (node_text id), `bytes`, and the ties'
   * `rank_thread` and `rank_seq`.
   */
  candidates: { text: string; values: unknown[] };
  /** Selects `body` and `payload` of one node_text row by id (its text is derived from them). */
  body: string;
  /** Text read and scored at most, in bytes (always at least one text). */
  maxBytes: number;
  /** The regex finding the query's items (createMatcher), or null: every score 0. */
  matcher: { source: string; flags: string } | null;
  /** Whether ties go by thread before sequence. */
  byThread: boolean;
  offset: number;
  take: number;
  /** The characters of each page text sent back. */
  head: number;
}

export interface RankedRow {
  row: Record<string, unknown>;
  score: number;
  /** The text's first `head` characters (fewer rather than half a surrogate pair). */
  head: string;
  /** Whether the text goes on past `head`. */
  cut: boolean;
}

/** Whole texts: `text` selects `cand`, `body` and `payload` of the node_text rows of `ids`. */
export interface BodiesRequest {
  kind: 'bodies';
  text: string;
  ids: unknown[];
}

export interface SqliteSearcher {
  /** The page of a search, best first, each with the head of its text. */
  rank(request: RankRequest): Promise<RankedRow[]>;
  bodies(
    request: BodiesRequest,
  ): Promise<Array<{ cand: unknown; body: unknown; payload: unknown }>>;
  close(): Promise<void>;
}

type SearchRequest = RankRequest | BodiesRequest;

interface WireError {
  message: string;
  code?: string;
}

type Reply = { ready: true } | { id: number; rows: unknown[] } | { id: number; error: WireError };

interface Thread {
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, { resolve(reply: Reply): void; reject(error: unknown): void }>;
}

const errorOf = (wire: WireError): Error =>
  Object.assign(new Error(wire.message), {
    name: 'SqliteError',
    ...(wire.code === undefined ? {} : { code: wire.code }),
  });

function startThread(path: string, onGone: (thread: Thread) => void): Thread {
  const worker = new Worker(new URL('./sqlite-search-thread.cjs', import.meta.url), {
    workerData: {
      path,
      driver: require.resolve('better-sqlite3'),
      busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS,
    },
    // Plain CommonJS: no loader (tsx) of the main thread is needed there.
    execArgv: [],
  });
  // An idle search thread does not keep the process alive.
  worker.unref();
  let opened: () => void = () => undefined;
  let failed: (error: unknown) => void = () => undefined;
  const thread: Thread = {
    worker,
    ready: new Promise<void>((resolve, reject) => {
      opened = resolve;
      failed = reject;
    }),
    pending: new Map(),
  };
  // Nobody may be waiting on `ready` when the thread fails to start.
  thread.ready.catch(() => undefined);
  const fail = (error: Error) => {
    onGone(thread);
    failed(error);
    for (const { reject } of thread.pending.values()) reject(error);
    thread.pending.clear();
  };
  worker.on('message', (reply: Reply) => {
    if ('ready' in reply) return opened();
    const waiting = thread.pending.get(reply.id);
    thread.pending.delete(reply.id);
    waiting?.resolve(reply);
  });
  worker.on('error', (error) =>
    fail(new Error(`SQLite search thread failed: ${error.message}`, { cause: error })),
  );
  worker.on('exit', (code) => fail(new Error(`SQLite search thread exited (code ${code})`)));
  return thread;
}

/** The search thread of the SQLite file at `path`, started on first use. */
export function openSqliteSearcher(path: string, timeoutMs: number | undefined): SqliteSearcher {
  let current: Thread | undefined;
  let nextId = 0;
  let closed = false;
  const gone = (thread: Thread) => {
    if (current === thread) current = undefined;
  };

  const ask = (thread: Thread, request: SearchRequest) =>
    new Promise<Reply>((resolve, reject) => {
      const id = nextId++;
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        clearTimeout(timer);
        thread.pending.delete(id);
        if (thread.pending.size === 0) thread.worker.unref();
      };
      thread.pending.set(id, {
        resolve: (reply) => {
          settle();
          resolve(reply);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      thread.worker.ref();
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          settle();
          gone(thread);
          void thread.worker.terminate();
          reject(queryTimeout(timeoutMs));
        }, timeoutMs);
      }
      thread.worker.postMessage({ id, ...request });
    });

  const send = async (request: SearchRequest): Promise<unknown[]> => {
    if (closed) throw new Error('SQLite searcher closed: open the store again to search');
    current ??= startThread(path, gone);
    const thread = current;
    await thread.ready;
    const reply = await ask(thread, request);
    if ('error' in reply) throw errorOf(reply.error);
    if ('ready' in reply) throw new Error('SQLite search thread answered out of turn');
    return reply.rows;
  };

  return {
    rank: async (request) => (await send(request)) as RankedRow[],
    bodies: async (request) =>
      (await send(request)) as Array<{ cand: unknown; body: unknown; payload: unknown }>,
    async close() {
      closed = true;
      const thread = current;
      current = undefined;
      if (thread !== undefined) await thread.worker.terminate();
    },
  };
}
