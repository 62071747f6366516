/**
 * Whether WeftSaver's write time per turn stays flat as a conversation grows, measured so that the
 * machine's load cannot decide it. The turn-by-turn run times its early turns and its late turns
 * a minute apart, and on a shared machine the same turn's CPU time moves by half between two such
 * moments (seen here: the early turns of three runs took 10, 15 and 14 ms). So this probe writes
 * two conversations side by side: a short one through its turns 101–200 and a long one through
 * its turns 901–1,000 (of 1,000), one turn of each in every round, each just after the same turn
 * on a saver that stores nothing (reference-saver.ts: LangGraph's own work). Both ends are
 * measured in the same seconds, so load weighs on them alike.
 *
 * Each of the four graphs runs in a process of its own (flatness-child.ts): the CPU time of a
 * process includes its garbage collector's threads, which work on the whole heap, so graphs
 * sharing one would be charged for each other's memory. A turn's own cost is the WeftSaver
 * process's CPU time for it less the nothing-stored one's; a major collection lands, tens of ms
 * at once, in whichever turn triggers it, so each end is summarised by the median of its turns'
 * own costs (the mean is printed beside it).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { formatMs } from './report.js';
import type { Backend } from './side.js';

/** The bound on last/first of the median own CPU per turn. */
export const FLAT_WITHIN = 1.2;

export interface FlatnessResult {
  /** Turns compared at each end (turns span+1..2·span and total−span+1..total). */
  span: number;
  total: number;
  /** Per end: the median and mean of (WeftSaver turn CPU − nothing-stored turn CPU), ms. */
  first: { median: number; mean: number; totalCpu: number; floorCpu: number };
  last: { median: number; mean: number; totalCpu: number; floorCpu: number };
}

/** One graph of the probe, writing the seeded workload's turns in order. */
export interface TurnWriter {
  /** Writes every turn up to `n` (1-based) not written yet; untimed. */
  writeUpTo(n: number): Promise<void>;
  /** Writes turn `n` (the next one); its CPU ms, counted since the previous call returned. */
  writeTimed(n: number): Promise<number>;
  close(): Promise<void>;
}

export interface FlatnessWriters {
  shortSaver: TurnWriter;
  shortFloor: TurnWriter;
  longSaver: TurnWriter;
  longFloor: TurnWriter;
}

export async function measureFlatness(
  writers: FlatnessWriters,
  total: number,
  span: number,
): Promise<FlatnessResult> {
  if (total < 3 * span) throw new Error(`flatness needs at least ${3 * span} turns, got ${total}`);
  // Untimed, all at once: the short thread's warm-up tenth, the long thread up to its last tenth.
  await Promise.all([
    writers.shortSaver.writeUpTo(span),
    writers.shortFloor.writeUpTo(span),
    writers.longSaver.writeUpTo(total - span),
    writers.longFloor.writeUpTo(total - span),
  ]);
  const ends = {
    first: { own: [] as number[], saver: 0, floor: 0 },
    last: { own: [] as number[], saver: 0, floor: 0 },
  };
  const round = async (end: typeof ends.first, floor: TurnWriter, saver: TurnWriter, n: number) => {
    const floorCpu = await floor.writeTimed(n);
    const saverCpu = await saver.writeTimed(n);
    end.own.push(saverCpu - floorCpu);
    end.saver += saverCpu;
    end.floor += floorCpu;
  };
  for (let k = 1; k <= span; k++) {
    // Alternating which thread goes first, so neither always follows the other.
    const short = () => round(ends.first, writers.shortFloor, writers.shortSaver, span + k);
    const long = () => round(ends.last, writers.longFloor, writers.longSaver, total - span + k);
    if (k % 2 === 1) {
      await short();
      await long();
    } else {
      await long();
      await short();
    }
  }
  const summary = (end: typeof ends.first) => ({
    median: median(end.own),
    mean: end.own.reduce((a, b) => a + b, 0) / end.own.length,
    totalCpu: end.saver / span,
    floorCpu: end.floor / span,
  });
  return { span, total, first: summary(ends.first), last: summary(ends.last) };
}

/** What a child (flatness-child.ts) is told to do, and answers. */
type Request = { op: 'upTo' | 'timed'; n: number } | { op: 'close' };
export type ChildRequest = Request & { id: number };
export type ChildReply = { id: number; cpuMs?: number; error?: string };

/**
 * A graph in a child process: `saver` on WeftSaver over `location`, or `floor` (nothing stored).
 * The child generates the same seeded workload of `total` turns.
 */
export function childWriter(
  role: 'saver' | 'floor',
  backend: Backend,
  location: string,
  total: number,
): TurnWriter {
  const child: ChildProcess = fork(
    fileURLToPath(new URL('./flatness-child.ts', import.meta.url)),
    [role, backend, location, String(total)],
    { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  let next = 0;
  const pending = new Map<
    number,
    { resolve: (r: ChildReply) => void; reject: (e: Error) => void }
  >();
  child.on('message', (reply: ChildReply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error !== undefined) waiter?.reject(new Error(`${role} child: ${reply.error}`));
    else waiter?.resolve(reply);
  });
  child.on('exit', (code) => {
    for (const waiter of pending.values())
      waiter.reject(new Error(`${role} child exited (${code})`));
    pending.clear();
  });
  const ask = (request: Request): Promise<ChildReply> =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      child.send({ ...request, id });
    });
  return {
    writeUpTo: async (n) => void (await ask({ op: 'upTo', n })),
    writeTimed: async (n) => (await ask({ op: 'timed', n })).cpuMs!,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await ask({ op: 'close' }).catch(() => undefined);
      await exited;
    },
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One line: the verdict and the figures behind it. */
export function flatnessLine(backend: string, r: FlatnessResult): string {
  const ratio = (a: number, b: number) => (a > 0 ? `${(b / a).toFixed(2)}×` : '—');
  const own = r.first.median > 0 ? r.last.median / r.first.median : Number.NaN;
  const verdict = !(own > 0)
    ? 'not judged: the nothing-stored turn is not below the WeftSaver turn'
    : own <= FLAT_WITHIN
      ? `met (within ${FLAT_WITHIN}×)`
      : `MISSED (over ${FLAT_WITHIN}×)`;
  const turnsOf = (from: number) => `${from + 1}–${from + r.span}`;
  return (
    `${backend}, turns ${turnsOf(r.span)} beside turns ${turnsOf(r.total - r.span)}: ` +
    `WeftSaver's own CPU per turn (median) ${formatMs(r.first.median)} → ${formatMs(r.last.median)}, ` +
    `${ratio(r.first.median, r.last.median)} — ${verdict}; mean ${ratio(r.first.mean, r.last.mean)}; ` +
    `whole turn ${formatMs(r.first.totalCpu)} → ${formatMs(r.last.totalCpu)} (${ratio(r.first.totalCpu, r.last.totalCpu)}), ` +
    `LangGraph nothing stored ${formatMs(r.first.floorCpu)} → ${formatMs(r.last.floorCpu)} (${ratio(r.first.floorCpu, r.last.floorCpu)})`
  );
}
