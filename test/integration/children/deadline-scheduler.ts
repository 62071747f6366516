/**
 * Child process of the cross-process deadline test (run with `node --import tsx`):
 * `deadline-scheduler.ts <databaseUrl> <tag> <clockOffsetMs> <goFile>`.
 *
 * Opens one engine (as one server process would) whose clock runs <clockOffsetMs> ahead of the
 * system clock, prints `{"t":"ready"}`, waits until <goFile> exists, then runs the deadline
 * scheduler (every 10 ms, pages of 4) until its stdin ends. Every sweep page is reported:
 * - `{"t":"fired","threadId","runId","deadline","logIndex"}` per deadline it wrote;
 * - `{"t":"skipped","threadId","runId"}` per candidate that was no longer due on its thread;
 * - `{"t":"failed","threadId","runId","error"}` per deadline it could not write;
 * - `{"t":"error","message"}` for whatever the scheduler reported to onError.
 * Ends with `{"t":"done"}` and exit code 0 after stopping the scheduler and closing the engine.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine, startDeadlineScheduler } from '../../../src/engine/index.js';
import { say as sayLine } from './say.js';

const args = process.argv.slice(2);
if (args.length !== 4 || args.some((arg) => arg === '')) {
  throw new Error('usage: deadline-scheduler.ts <databaseUrl> <tag> <clockOffsetMs> <goFile>');
}
const [url, tag, offsetText, goFile] = args as [string, string, string, string];
const offsetMs = Number(offsetText);

const say = (message: object) => sayLine({ tag, ...message });

const engine = createEngine({
  databaseUrl: url,
  clock: { now: () => new Date(Date.now() + offsetMs).toISOString() },
});
const stdinEnded = new Promise<void>((resolve) => {
  process.stdin.on('end', resolve);
  process.stdin.resume();
});
say({ t: 'ready' });
while (!existsSync(goFile)) await sleep(2);

const scheduler = startDeadlineScheduler(engine, {
  intervalMs: 10,
  pageSize: 4,
  onSweep(sweep) {
    for (const f of sweep.fired) {
      say({
        t: 'fired',
        threadId: f.threadId,
        runId: f.runId,
        deadline: f.deadline,
        logIndex: f.logIndex,
      });
    }
    for (const s of sweep.skipped) say({ t: 'skipped', ...s });
    for (const f of sweep.failed) say({ t: 'failed', ...f });
  },
  onError(error) {
    say({ t: 'error', message: error instanceof Error ? error.message : JSON.stringify(error) });
  },
});
await stdinEnded;
await scheduler.stop();
await engine.close();
say({ t: 'done' });
