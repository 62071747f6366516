/**
 * Two OS processes append to one thread at once, each reloading the length after every CONFLICT
 * (test/store/event-log-child.ts). On SQLite this checks that write transactions take the file
 * lock before reading (no SQLITE_BUSY between processes); on Postgres that the unique key
 * decides races between separate servers' connections. Either way: no gap, no duplicate, every
 * acknowledged entry present.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogStore } from '../../src/store/event-log/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import { newThreadId } from './event-log-fixtures.js';

const CHILD = join(import.meta.dirname, 'event-log-child.ts');
const PER_PROCESS = 40;
const tmpRoot = mkdtempSync(join(tmpdir(), 'weft-event-log-procs-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
let counter = 0;

interface ChildReport {
  appended: string[];
  conflicts: number;
}

/** Starts one child per tag, releases them together, returns their reports. */
async function appendFromProcesses(url: string, threadId: string, tags: string[]) {
  const goFile = join(tmpRoot, `go-${++counter}`);
  const children = tags.map((tag) => {
    const args = ['--import', 'tsx', CHILD, url, threadId, tag, String(PER_PROCESS), goFile];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const ready = new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.startsWith('ready\n')) resolve();
      });
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const done = new Promise<ChildReport>((resolve, reject) => {
      child.on('close', (code) => {
        if (code !== 0) reject(new Error(`event-log-child exited with ${code}: ${stderr}`));
        else resolve(JSON.parse(stdout.split('\n')[1]!) as ChildReport);
      });
    });
    return { ready, done };
  });
  await Promise.race([
    Promise.all(children.map((c) => c.ready)),
    Promise.all(children.map((c) => c.done)),
  ]);
  writeFileSync(goFile, '');
  return Promise.all(children.map((c) => c.done));
}

async function expectOneGapFreeLog(url: string, threadId: string, reports: ChildReport[]) {
  const threads = openThreadStore(url);
  try {
    const store = createLogStore(threads);
    const read = await store.read(threadId);
    const acknowledged = reports.flatMap((r) => r.appended);
    expect(read.map((e) => e.index)).toEqual(acknowledged.map((_, i) => i));
    expect(read.map((e) => e.id).sort()).toEqual([...acknowledged].sort());
    expect(await store.length(threadId)).toBe(acknowledged.length);
  } finally {
    await threads.close();
  }
}

describe('event-log store across processes [sqlite]', () => {
  it(`two processes × ${PER_PROCESS} appends on one file: one gap-free log`, async () => {
    const url = `file:${join(tmpRoot, `db-${++counter}`, 'weft.db')}`;
    await migrate(url);
    const threadId = newThreadId('procs');
    const reports = await appendFromProcesses(url, threadId, ['a', 'b']);
    expect(reports.map((r) => r.appended.length)).toEqual([PER_PROCESS, PER_PROCESS]);
    await expectOneGapFreeLog(url, threadId, reports);
  });
});

describeWithPostgres('event-log store across processes', () => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
    await migrate(database.url);
  });
  afterEach(async () => {
    await database.drop();
  });

  it(`two processes × ${PER_PROCESS} appends on one thread: one gap-free log`, async () => {
    const threadId = newThreadId('procs');
    const reports = await appendFromProcesses(database.url, threadId, ['a', 'b']);
    expect(reports.map((r) => r.appended.length)).toEqual([PER_PROCESS, PER_PROCESS]);
    await expectOneGapFreeLog(database.url, threadId, reports);
  });
});
