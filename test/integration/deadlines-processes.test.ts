/**
 * Deadlines across OS processes: two processes (children/deadline-scheduler.ts),
 * each one engine running the deadline scheduler with a clock two days ahead, sweep one
 * database holding N overdue runs — waiting ones (approval timeout), running ones and resumed
 * ones (execution deadline) — next to finished runs. Every overdue run must be timed out by
 * exactly one `deadline_fired` entry, written by one of the processes; the finished runs stay
 * untouched; every log verifies strictly and the read models equal a rebuild from the logs.
 *
 * On Postgres this is the multi-process guarantee of the issue; the SQLite run checks the same
 * across processes sharing one database file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { rebuildInto } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type BackendName,
  engineOn,
  expectSoundLog,
  freshDatabase,
  type LineChild,
  must,
  spawnLineChild,
} from './support.js';

const CHILD = join(import.meta.dirname, 'children', 'deadline-scheduler.ts');
const PROCESSES = ['p', 'q'];
const THREADS = 4;
const RUNS_PER_THREAD = 6;
/** The children's clocks run this far ahead: past every default deadline (1 h, 24 h). */
const OFFSET_MS = 48 * 3_600_000;

const tmpRoot = mkdtempSync(join(tmpdir(), 'weft-deadlines-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

interface Line {
  tag: string;
  t: 'ready' | 'fired' | 'skipped' | 'failed' | 'error' | 'done';
  threadId?: string;
  runId?: string;
  deadline?: string;
  error?: { code: string };
  message?: string;
}

/** Overdue runs by id, with the deadline that must fire; and the runs that must stay as they are. */
async function seed(engine: Engine) {
  const due = new Map<string, { threadId: string; deadline: 'approval' | 'execution' }>();
  const finished: string[] = [];
  for (let t = 0; t < THREADS; t++) {
    const threadId = `thread-${t}`;
    must(await engine.createThread({ threadId }));
    for (let i = 0; i < RUNS_PER_THREAD; i++) {
      const { runId } = must(await engine.startRun({ threadId, goal: `goal ${t}.${i}` }));
      if (i % 3 !== 1) {
        const ask = { type: 'request_human_input', payload: { pending_approval: { i } } };
        must(await engine.dispatch({ runId, action: ask }));
      }
      if (i % 3 === 2) must(await engine.resolveApproval({ runId, decision: 'approve' }));
      due.set(runId, { threadId, deadline: i % 3 === 0 ? 'approval' : 'execution' });
    }
    const { runId: completed } = must(await engine.startRun({ threadId, goal: 'finished' }));
    must(
      await engine.dispatch({
        runId: completed,
        action: { type: 'set_status', payload: { status: 'completed' } },
      }),
    );
    const { runId: cancelled } = must(await engine.startRun({ threadId, goal: 'dropped' }));
    must(await engine.cancelRun({ runId: cancelled }));
    finished.push(completed, cancelled);
  }
  return { due, finished, threads: Array.from({ length: THREADS }, (_, t) => `thread-${t}`) };
}

async function sweepInProcesses(backend: BackendName) {
  const db = await freshDatabase(backend);
  const rebuiltDb = await freshDatabase(backend);
  const engine = engineOn(db.url);
  const children: LineChild[] = [];
  try {
    const { due, finished, threads } = await seed(engine);
    const finishedBefore = (await engine.store.dumpReadModels(threads)).run.filter((r) =>
      finished.includes(r.id as string),
    );

    const goFile = join(tmpRoot, `go-${backend}`);
    let firedCount = 0;
    let allFired!: () => void;
    const allDone = new Promise<void>((resolve) => {
      allFired = resolve;
    });
    for (const tag of PROCESSES) {
      children.push(
        spawnLineChild(CHILD, [db.url, tag, String(OFFSET_MS), goFile], (line) => {
          if ((JSON.parse(line) as Line).t === 'fired' && ++firedCount === due.size) allFired();
        }),
      );
    }
    await Promise.all(children.map((c) => c.waitForLine((l) => l.includes('"t":"ready"'))));
    writeFileSync(goFile, '');
    // Every overdue run fired (by one process or the other), or a child ended early.
    await Promise.race([
      allDone,
      ...children.map((c) =>
        c.exited.then((exit) => {
          throw new Error(`a child ended early (${JSON.stringify(exit)}): ${c.stderr()}`);
        }),
      ),
    ]);
    for (const child of children) child.process.stdin.end();
    const lines: Line[] = [];
    for (const child of children) {
      const exit = await child.exited;
      expect(exit, child.stderr()).toEqual({ code: 0, signal: null });
      lines.push(...child.lines.map((l) => JSON.parse(l) as Line));
    }

    // Nothing went wrong; a failure may only be a race lost on every attempt (retried later).
    expect(lines.filter((l) => l.t === 'error')).toEqual([]);
    const failed = lines.filter((l) => l.t === 'failed');
    expect(failed.filter((l) => l.error?.code !== 'CONFLICT')).toEqual([]);
    // Each overdue run fired exactly once, with the deadline its state called for.
    const fired = lines.filter((l) => l.t === 'fired');
    expect(fired.map((l) => l.runId).sort()).toEqual([...due.keys()].sort());
    for (const line of fired) {
      expect(line, `run ${line.runId}`).toMatchObject(due.get(line.runId!)!);
    }

    const byThread = new Map<string, number>();
    for (const threadId of threads) {
      const entries = await expectSoundLog(engine, threadId);
      const timeouts = entries.filter((e) => e.event.type === 'deadline_fired');
      byThread.set(threadId, timeouts.length);
      const runIds = timeouts.map((e) => e.event.runId as string);
      expect(new Set(runIds).size, `thread ${threadId}: one entry per run`).toBe(runIds.length);
    }
    expect([...byThread.values()].reduce((a, b) => a + b, 0)).toBe(due.size);

    const dump = await engine.store.dumpReadModels(threads);
    for (const [runId, { threadId }] of due) {
      expect(dump.run.find((r) => r.id === runId && r.threadId === threadId)?.status).toBe(
        'timeout',
      );
    }
    expect(dump.run.filter((r) => finished.includes(r.id as string))).toEqual(finishedBefore);

    const rebuilt = openThreadStore(rebuiltDb.url);
    try {
      await rebuildInto(engine.store, rebuilt, threads);
      expect(await rebuilt.dumpReadModels(threads)).toEqual(dump);
    } finally {
      await rebuilt.close();
    }

    const count = (tag: string, t: Line['t']) =>
      lines.filter((l) => l.tag === tag && l.t === t).length;
    console.info(
      `[deadlines ${backend}] ${due.size} overdue runs in ${THREADS} threads, ${PROCESSES.length} processes: ` +
        PROCESSES.map(
          (tag) =>
            `${tag} fired ${count(tag, 'fired')}, skipped ${count(tag, 'skipped')}, lost ${count(tag, 'failed')}`,
        ).join('; '),
    );
  } finally {
    for (const child of children) {
      if (child.process.exitCode === null && child.process.signalCode === null) {
        child.process.kill('SIGKILL');
      }
    }
    await Promise.all(children.map((c) => c.exited));
    await engine.close();
    await db.drop();
    await rebuiltDb.drop();
  }
}

describeWithPostgres('two processes running the deadline scheduler on one database', () => {
  it('time out every overdue run with exactly one entry each', async () => {
    await sweepInProcesses('postgres');
  }, 120_000);
});

describe('two processes running the deadline scheduler on one database [sqlite]', () => {
  it('time out every overdue run with exactly one entry each', async () => {
    await sweepInProcesses('sqlite');
  }, 120_000);
});
