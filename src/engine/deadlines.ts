/**
 * Deadlines: when a run's approval wait or execution time runs out, the engine
 * appends a `deadline_fired` entry that times the run out, so replay stays deterministic.
 *
 * `fireDueDeadlines` is one sweep: the run read model names the candidates (one indexed query,
 * src/store/read-model/deadlines.ts); for each, the thread is caught up and the core decides on
 * the thread's own state whether the deadline still applies (`dueDeadlines`); the entry goes
 * through the normal write path (load → plan → commit → publish after commit). Exactly once
 * across engines and processes: two sweeps that both plan a deadline write at the same log
 * index, the unique `(thread, index)` key lets one win, and the loser re-plans on the caught-up
 * state, sees the run timed out and writes nothing.
 *
 * `startDeadlineScheduler` runs sweeps on an interval.
 */
import { err, ok, type Result, type WeftError } from '../core/errors.js';
import { type DeadlineFiredEvent, dueDeadlines, type ThreadState } from '../core/thread/index.js';
import type { DueRun, RunKey } from '../store/read-model/deadlines.js';
import { checkId, checkThreadKey, firstFailure, invalid } from './checks.js';
import type { Runtime } from './engine.js';
import { startSweepLoop } from './sweep-loop.js';
import type { DeadlineSweep, DeadlineSweepInput, Engine, FiredDeadline } from './types.js';

/** Runs read per page of a sweep. */
export const DEFAULT_DEADLINE_PAGE = 100;
/** Largest `limit` of one sweep. */
export const MAX_DEADLINE_PAGE = 10_000;
/** Threads a sweep works on at once (each thread's deadlines go one after another). */
const THREAD_CONCURRENCY = 4;

/** The deadline command of an engine: due runs come from the thread store's run read model. */
export function createDeadlineCommands(rt: Runtime) {
  /** Times out one run if the core, on the caught-up thread, still finds its deadline due. */
  async function fireOne(
    due: DueRun,
  ): Promise<
    | { outcome: 'fired'; fired: FiredDeadline }
    | { outcome: 'skipped' }
    | { outcome: 'failed'; error: WeftError }
  > {
    let planned: DeadlineFiredEvent | undefined;
    // Whether the last plan found nothing due (a failed load never reaches the plan).
    let notDue = false;
    const written = await rt.onThread(due.threadId, undefined, undefined, {
      plan(state: ThreadState, now: string) {
        planned = dueDeadlines(state, now).find((e) => e.runId === due.runId);
        notDue = planned === undefined;
        if (planned !== undefined) return ok(planned);
        return err<WeftError>({
          code: 'INVALID_ACTION',
          message: `run ${due.runId} of thread ${due.threadId} has no deadline due at ${now}`,
          runId: due.runId,
        });
      },
      respond(committed): FiredDeadline {
        // Planned in the attempt that committed.
        const event = planned!;
        return {
          threadId: due.threadId,
          runId: due.runId,
          deadline: event.deadline,
          dueAt: event.dueAt,
          status: committed.state.runs.get(due.runId)?.status ?? 'timeout',
          logIndex: committed.entry.index,
          logLength: committed.state.length,
        };
      },
    });
    if (written.ok) return { outcome: 'fired', fired: written.value };
    // Not due on the caught-up state: resolved, ended or timed out by another sweep meanwhile.
    if (notDue) return { outcome: 'skipped' };
    return { outcome: 'failed', error: written.error };
  }

  async function sweepThread(threadId: string, runs: DueRun[], sweep: DeadlineSweep) {
    // Catch the cached state up first: the read model may know of a wait that this engine's
    // cache has not seen yet (another process wrote it), and "not due" must be judged on the
    // latest state. A later race is still settled by the (thread, index) key.
    const loaded = await rt.load(threadId, true);
    if (!loaded.ok) {
      for (const run of runs) sweep.failed.push({ ...key(run), error: loaded.error });
      return;
    }
    for (const run of runs) {
      const result = await fireOne(run);
      if (result.outcome === 'fired') sweep.fired.push(result.fired);
      else if (result.outcome === 'skipped') sweep.skipped.push(key(run));
      else sweep.failed.push({ ...key(run), error: result.error });
    }
  }

  async function fireDueDeadlines(input: DeadlineSweepInput = {}): Promise<Result<DeadlineSweep>> {
    const checked = checkSweepInput(input);
    if (!checked.ok) return checked;
    const now = rt.clock.now();
    const limit = input.limit ?? DEFAULT_DEADLINE_PAGE;
    const due = await rt.store.findDueRuns({ now: new Date(now), limit, after: input.after });
    const sweep: DeadlineSweep = { now, found: due.length, fired: [], skipped: [], failed: [] };
    const byThread = new Map<string, DueRun[]>();
    for (const run of due) {
      const list = byThread.get(run.threadId);
      if (list === undefined) byThread.set(run.threadId, [run]);
      else list.push(run);
    }
    const threads = [...byThread];
    let next = 0;
    const worker = async () => {
      while (next < threads.length) {
        const [threadId, runs] = threads[next++]!;
        await sweepThread(threadId, runs, sweep);
      }
    };
    await Promise.all(Array.from({ length: Math.min(THREAD_CONCURRENCY, threads.length) }, worker));
    if (due.length === limit) sweep.next = key(due[due.length - 1]!);
    return ok(sweep);
  }

  return { commands: { fireDueDeadlines } };
}

const key = (run: RunKey): RunKey => ({ threadId: run.threadId, runId: run.runId });

function checkSweepInput(input: DeadlineSweepInput): Result<void> {
  if (typeof input !== 'object' || input === null) {
    return err(invalid('$', 'must be an object'));
  }
  const { limit, after } = input;
  if (
    limit !== undefined &&
    (typeof limit !== 'number' ||
      !Number.isSafeInteger(limit) ||
      limit < 1 ||
      limit > MAX_DEADLINE_PAGE)
  ) {
    return err(invalid('$.limit', `must be an integer from 1 to ${MAX_DEADLINE_PAGE}`));
  }
  if (after === undefined) return ok(undefined);
  if (typeof after !== 'object' || after === null) {
    return err(invalid('$.after', 'must be a { threadId, runId } cursor'));
  }
  return firstFailure(
    // Sweeps are the system's: threads are named by storage key (see tenancy.ts).
    checkThreadKey(after.threadId, '$.after.threadId'),
    checkId(after.runId, '$.after.runId'),
  );
}

export interface DeadlineSchedulerOptions {
  /** Time between sweeps. Default 1,000 ms. */
  intervalMs?: number;
  /** Runs per page of a sweep; a sweep reads pages until none is full. Default 100. */
  pageSize?: number;
  /**
   * Called with what went wrong: a sweep that threw (e.g. the database is unreachable) or a
   * deadline that could not be written (`{ threadId, runId, error }` with the WeftError). A race
   * lost on every attempt (CONFLICT) is not reported: the next sweep retries it. Default:
   * console.error.
   */
  onError?: (error: unknown) => void;
  /** Called after each page of a sweep, with what it did. */
  onSweep?: (sweep: DeadlineSweep) => void;
}

export interface DeadlineScheduler {
  /** Starts the next sweep now (after the current one, if one is running). */
  wake(): void;
  /** Stops ticking; resolves when the sweep in progress (if any) has finished its page. */
  stop(): Promise<void>;
}

/**
 * Sweeps due deadlines now and then every `intervalMs` until stopped. Sweeps never overlap: one
 * loop runs them one after another, and a `wake()` during a sweep starts the next right after.
 * Several schedulers (in one process or many, on one database) may run at once: each deadline is
 * still written once. The timer does not keep the process alive.
 */
export function startDeadlineScheduler(
  engine: Pick<Engine, 'fireDueDeadlines'>,
  options: DeadlineSchedulerOptions = {},
): DeadlineScheduler {
  const intervalMs = options.intervalMs ?? 1000;
  const pageSize = options.pageSize ?? DEFAULT_DEADLINE_PAGE;
  if (!Number.isFinite(intervalMs) || intervalMs < 0) {
    throw new RangeError(`deadline scheduler: intervalMs must be a number >= 0, not ${intervalMs}`);
  }
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_DEADLINE_PAGE) {
    throw new RangeError(
      `deadline scheduler: pageSize must be an integer from 1 to ${MAX_DEADLINE_PAGE}, not ${pageSize}`,
    );
  }
  const onError =
    options.onError ?? ((error: unknown) => console.error('weft: deadline sweep failed', error));
  const report = (error: unknown) => {
    try {
      onError(error);
    } catch {
      // A failing error handler must not stop the scheduler.
    }
  };

  /** Every page of due deadlines; the loop then rests. */
  async function sweep(): Promise<boolean> {
    let after: RunKey | undefined;
    do {
      const result = await engine.fireDueDeadlines({ limit: pageSize, after });
      if (!result.ok) {
        report(result.error);
        return false;
      }
      for (const failure of result.value.failed) {
        if (failure.error.code !== 'CONFLICT') report(failure);
      }
      options.onSweep?.(result.value);
      after = result.value.next;
    } while (after !== undefined && !stopping);
    return false;
  }

  // A stop ends the sweep in progress after its current page.
  let stopping = false;
  const sweeps = startSweepLoop(sweep, intervalMs, report);
  return {
    wake: sweeps.wake,
    stop() {
      stopping = true;
      return sweeps.stop();
    },
  };
}
