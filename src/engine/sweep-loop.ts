/**
 * The loop behind the engine's background sweeps (deadlines, retention): one sweep after
 * another, never overlapping; `wake()` during a sweep starts the next right after it; a sweep
 * that says more is waiting is followed by the next once the event loop has run what waits,
 * otherwise by `intervalMs` of rest. The timer does not keep the process alive.
 */

export interface SweepLoop {
  /** Starts the next sweep now (after the current one, if one is running). */
  wake(): void;
  /** Stops; resolves when the sweep in progress (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `sweep` until stopped. `sweep` resolves true when more work is waiting; what it throws
 * goes to `onThrow`, and the loop goes on.
 */
export function startSweepLoop(
  sweep: () => Promise<boolean>,
  intervalMs: number,
  onThrow: (error: unknown) => void,
): SweepLoop {
  let stopped = false;
  let woken = false;
  let interrupt: (() => void) | undefined;

  const pause = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, intervalMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        interrupt = undefined;
        resolve();
      }
      interrupt = done;
    });

  const loop = (async () => {
    while (!stopped) {
      woken = false;
      let more = false;
      try {
        more = await sweep();
      } catch (error) {
        onThrow(error);
      }
      if (stopped) break;
      if (more && !woken) await new Promise<void>((resolve) => setImmediate(resolve));
      else if (!woken) await pause();
    }
  })();

  return {
    wake() {
      woken = true;
      interrupt?.();
    },
    async stop() {
      stopped = true;
      interrupt?.();
      await loop;
    },
  };
}
