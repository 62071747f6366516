/**
 * The only ways time and fresh ids enter the system. The core never reads a clock or a random
 * source: commands receive these values from the engine, and replay takes them from the log.
 */
export interface Clock {
  /** The current time as an RFC 3339 / ISO 8601 UTC string. */
  now(): string;
}

export interface IdSource {
  /** A fresh unique id (UUID v4 in production). */
  next(): string;
}

/** A deterministic clock for tests: starts at `start` and advances `stepMs` per call. */
export function createSimulatedClock(
  start = '2026-01-01T00:00:00.000Z',
  stepMs = 1,
): Clock & {
  advance(ms: number): void;
  set(iso: string): void;
} {
  let current = Date.parse(start);
  return {
    now() {
      const value = new Date(current).toISOString();
      current += stepMs;
      return value;
    },
    advance(ms) {
      current += ms;
    },
    set(iso) {
      current = Date.parse(iso);
    },
  };
}

/** A deterministic id source for tests: `${prefix}-1`, `${prefix}-2`, … */
export function createSequentialIds(prefix = 'id'): IdSource {
  let n = 0;
  return {
    next: () => `${prefix}-${++n}`,
  };
}
