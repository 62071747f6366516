/**
 * One server per SQLite file. A server's subscribers are woken by commits made in its own process
 * (or fanned out through Redis), so a second server on the same file would take writes its
 * twin's subscribers never hear of. `weft serve` therefore holds an exclusive lock on a sidecar
 * database, `<file>-weft.lock`, for its whole life; a second one is refused at start.
 *
 * The lock is SQLite's own (POSIX advisory locks on the sidecar): the operating system drops it
 * when the process ends, however it ends (a SIGKILL, a crash), so there is no stale PID file to
 * clear. A server removes the file when it stops, and so does a start refused after taking the
 * lock; one a killed process left is simply locked again. The database file itself is not
 * locked: the CLI, a LangGraph WeftSaver and other processes keep opening it while a server runs.
 * On Postgres there is nothing to hold: any number of servers share one database, with Redis
 * carrying their wake-ups.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { parseDatabaseUrl } from './migrate/index.js';

export interface ServerLock {
  /** The sidecar file held, undefined on Postgres (nothing held). */
  readonly path: string | undefined;
  /** Removes the file and lets the next server start; idempotent. */
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
  // A server that stops removes the file while it still holds it; a start that opened the file
  // just before then locks a file no longer there, and must try again on the one that is (as
  // must a start that created the file, to see which file the path names).
  for (let attempt = 1; ; attempt++) {
    const taken = lockFile(path);
    if (taken === 'busy') {
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
    if (taken !== 'removed') return { ok: true, lock: taken };
    if (attempt === 10) throw new Error(`${path} keeps being removed while it is locked`);
  }
}

/** Locks the file at `path`: the lock, 'busy' when another holds it, 'removed' when it went. */
function lockFile(path: string): ServerLock | 'busy' | 'removed' {
  // The inode the path names before SQLite opens it and once it is locked: the same one both
  // times means SQLite locked the file at the path (an unlinked inode never comes back). No
  // descriptor of the file is opened here besides SQLite's: closing any descriptor of a file
  // drops every POSIX lock the process has on it, those of a server in this process included.
  const before = inodeAt(path);
  const db = new Database(path, { timeout: 0 });
  if (before === undefined) {
    // Created by this open: look again at what the path names now.
    db.close();
    return 'removed';
  }
  try {
    // Nothing is ever written; SQLite may create an empty `-journal`, removed with the file.
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
    return 'busy';
  }
  if (inodeAt(path) !== before) {
    db.close();
    return 'removed';
  }
  let holding = true;
  return {
    path,
    release() {
      if (!holding) return;
      holding = false;
      // Removed before the lock goes, so no other server ever holds a file this one removes.
      rmSync(path, { force: true });
      rmSync(`${path}-journal`, { force: true });
      db.exec('ROLLBACK');
      db.close();
    },
  };
}

function inodeAt(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}
