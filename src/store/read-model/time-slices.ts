/**
 * Work that would hold the event loop for long (a large import's commit, its rows, its packing)
 * runs in time slices: core and store code written as `Steps` (a generator that yields between
 * chunks) is driven here, and gives other clients a turn of the event loop (setImmediate)
 * whenever the current slice has run for SLICE_MS — not at every yield, which would make a
 * large job wait a turn per chunk.
 */
import { performance } from 'node:perf_hooks';
import { CHUNK, type Steps } from '../../core/graph/index.js';

/** How long one slice may hold the event loop before a pause gives others a turn. */
export const SLICE_MS = 15;

/** Gives the event loop a turn when the current slice is used up; otherwise resolves at once. */
export type Pause = () => Promise<void>;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A pause for one job: its slices are measured from the job's start and from each turn given. */
export function timeSlices(sliceMs = SLICE_MS): Pause {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < sliceMs) return;
    await turn();
    since = performance.now();
  };
}

/** Never pauses: the same code run in one go. */
export const noPause: Pause = () => Promise.resolve();

/** Runs `steps` to their end, pausing (see `pause`) at each of their yields. */
export async function drive<T>(steps: Steps<T>, pause: Pause): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await pause();
  }
}

/** `rows` mapped by `map` a chunk of rows at a time (concatenated), pausing between chunks. */
export async function mapInSlices<R, T>(
  rows: readonly R[],
  map: (chunk: readonly R[]) => T[],
  pause: Pause,
  chunk = CHUNK,
): Promise<T[]> {
  if (rows.length <= chunk) return map(rows);
  const out: T[] = [];
  for (let at = 0; at < rows.length; at += chunk) {
    for (const value of map(rows.slice(at, at + chunk))) out.push(value);
    await pause();
  }
  return out;
}

/**
 * Rows recorded (and handed to the writer) per slice of a large commit: a slice's statements
 * cost a few milliseconds to build and to pass on.
 */
export const SLICE_ROWS = 2_048;
