import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/migrate/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { openSqliteWriteConnection } from '../../src/store/read-model/sqlite-writer.js';
import {
  type RecordedStatement,
  type ScriptRunner,
  StatementFailure,
} from '../../src/store/read-model/write-script.js';
import { defineTable } from '../../src/store/tables/index.js';

/**
 * The SQLite writer thread (sqlite-writer.ts): a script runs whole in one transaction, all or
 * nothing or block by block, values bound by the driver as the tables encoded them, failures named, and the thread
 * neither hangs callers when it cannot open the file nor keeps an idle process alive.
 */
const dirs: string[] = [];
const runners: ScriptRunner[] = [];
afterEach(async () => {
  await Promise.all(runners.splice(0).map((r) => r.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const freshFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-writer-'));
  dirs.push(dir);
  const path = join(dir, 'w.db');
  const db = new Database(path);
  db.exec('CREATE TABLE "t" ("k" TEXT PRIMARY KEY, "v")');
  db.close();
  return path;
};

const open = (path: string) => {
  const runner = openSqliteWriteConnection(path);
  runners.push(runner);
  return runner;
};

const insert = (k: string, v: unknown): RecordedStatement => ({
  text: 'INSERT INTO "t" ("k", "v") VALUES (?, ?)',
  values: [k, v],
});

const rows = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT "k", "v" FROM "t" ORDER BY "k"').all();
  } finally {
    db.close();
  }
};

describe('SQLite writer thread', () => {
  it('runAll commits every statement, or none and names the failing one', async () => {
    const path = freshFile();
    const runner = open(path);
    await runner.runAll([insert('a', 1), insert('b', 2)]);
    const failure = await runner.runAll([insert('c', 3), insert('a', 4)]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StatementFailure);
    expect((failure as StatementFailure).statement).toBe(1);
    expect((failure as StatementFailure).error).toMatchObject({
      code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
    });
    expect(rows(path)).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ]);
  });

  it('runEach rolls a failing block back alone and commits the others', async () => {
    const path = freshFile();
    const runner = open(path);
    const outcomes = await runner.runEach([
      [insert('a', 1)],
      [insert('b', 2), insert('a', 3)],
      [insert('c', 4)],
    ]);
    expect(outcomes[0]).toEqual({ ok: true });
    expect(outcomes[1]).toMatchObject({ ok: false, statement: 1 });
    expect(outcomes[2]).toEqual({ ok: true });
    expect(rows(path)).toEqual([
      { k: 'a', v: 1 },
      { k: 'c', v: 4 },
    ]);
  });

  it('binds encoded values as the driver does, and converts nothing itself', async () => {
    const path = freshFile();
    const runner = open(path);
    const table = defineTable(
      't',
      {
        k: { name: 'k', type: 'text' },
        v: { name: 'v', type: 'datetime', nullable: true },
      },
      ['k'],
    );
    await runner.runAll([
      {
        text: 'INSERT INTO "t" ("k", "v") VALUES (?, ?)',
        values: table.encode({ k: 'date', v: new Date('2026-03-01T12:00:00.000Z') }, 'sqlite'),
      },
      {
        text: 'INSERT INTO "t" ("k", "v") VALUES (?, ?)',
        values: table.encode({ k: 'none', v: null }, 'sqlite'),
      },
      insert('bytes', new Uint8Array([1, 2, 3])),
    ]);
    expect(rows(path)).toEqual([
      { k: 'bytes', v: Buffer.from([1, 2, 3]) },
      { k: 'date', v: '2026-03-01T12:00:00.000+00:00' },
      { k: 'none', v: null },
    ]);
    // A value no table encodes this way reaches the driver as it is, which refuses it.
    const failure = await runner.runAll([insert('bool', true)]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StatementFailure);
    expect(String((failure as StatementFailure).error)).toMatch(/can only bind/);
  });

  it('a value that cannot cross to the thread fails that call alone; nothing is written', async () => {
    const path = freshFile();
    const runner = open(path);
    await expect(runner.runAll([insert('a', 1), insert('b', () => 2)])).rejects.toThrow(
      /could not be cloned/,
    );
    await runner.runAll([insert('c', 3)]);
    expect(rows(path)).toEqual([{ k: 'c', v: 3 }]);
  });

  it('a file it cannot open fails every call with the reason, and close still resolves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-writer-'));
    dirs.push(dir);
    // A directory where the database file should be.
    const runner = open(dir);
    await expect(runner.runAll([insert('a', 1)])).rejects.toThrow(/SQLite writer thread/);
    await expect(runner.runAll([insert('a', 1)])).rejects.toThrow(/SQLite writer thread/);
    await runner.close();
  });

  it('an idle writer thread does not keep the process alive', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-writer-'));
    dirs.push(dir);
    const url = `file:${join(dir, 'child.db')}`;
    await migrate(url);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, 'sqlite-writer-child.ts'), url],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the child did not exit within 60 s (stdout: ${out}; stderr: ${err})`));
      }, 60_000);
      child.on('close', (exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out.trim()).toBe('written');
    // What it acknowledged is in the file.
    const store = openThreadStore(url);
    try {
      expect(await store.getLogLength('left-open')).toBe(1);
    } finally {
      await store.close();
    }
  }, 90_000);
});
