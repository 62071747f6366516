/**
 * One server per SQLite file. A server's subscribers are woken by commits made in its own process
 * (or fanned out through Redis), so a second server on the same file would take writes its
 * twin's subscribers never hear of. `weft serve` therefore holds an exclusive lock on a sidecar
 * database, `<file>-weft.lock`, for its whole life; a second one is refused at start.
 *
 * The lock is SQLite's own (POSIX advisory locks on the sidecar): the operating system drops it
 * when the process ends, however it ends (a SIGKILL, a crash), so there is no stale PID file to
 * clear. The database file itself is not locked: the CLI, a LangGraph WeftSaver and other
 * processes keep opening it while a server runs. On Postgres there is nothing to hold: any
 * number of servers share one database, with Redis carrying their wake-ups.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { parseDatabaseUrl } from './migrate/index.js';

export interface ServerLock {
  /** The sidecar file held, undefined on Postgres (nothing held). */
  readonly path: string | undefined;
  /** Lets the next server start; idempotent. */
  release(): void;
}

export type ServerLockResult =
  | { ok: true; lock: ServerLock }
  | { ok: false; code: 'SERVER_ALREADY_RUNNING'; path: string; message: string };

/** The sidecar file a server on the SQLite file `path` holds. */
export const serverLockPath = (path: string): string => `${path}-weft.lock`;

/**
 * Takes the server lock of `databaseUrl` without waiting: ok with the lock, or the reason it is
 * held (by another live process, or by another server of this one). Creates the file's
 * directory as migrate would; throws what SQLite throws for a path it cannot open.
 */
export function acquireServerLock(databaseUrl: string): ServerLockResult {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.provider !== 'sqlite') return { ok: true, lock: { path: undefined, release() {} } };
  const path = serverLockPath(target.path);
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { timeout: 0 });
  try {
    // Nothing is ever written; SQLite may leave an empty `-journal` beside it, which is harmless.
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
    return {
      ok: false,
      code: 'SERVER_ALREADY_RUNNING',
      path,
      message:
        `another weft serve is already running on ${target.path} (it holds ${path}): ` +
        'stop it first, or give this one another DATABASE_URL; for several servers on one ' +
        'database use Postgres (with REDIS_URL)',
    };
  }
  let held = true;
  return {
    ok: true,
    lock: {
      path,
      release() {
        if (!held) return;
        held = false;
        db.exec('ROLLBACK');
        db.close();
      },
    },
  };
}
