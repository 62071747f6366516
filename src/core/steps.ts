/**
 * Work done in steps: each `yield` marks a point where a caller may pause (between chunks of
 * CHUNK items); the return value is the result. `runSteps` runs it to the end in one go. Pure.
 */
export type Steps<T> = Generator<void, T, void>;
/** Items per step: a few milliseconds of the costliest rule (recomputing ids). */
export const CHUNK = 1_024;

/** Runs steps to their end without pausing: the single-call form. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
