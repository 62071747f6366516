import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Queries and mutations executing now (HTTP and WebSocket), counted by `plugin`; `until(idle)`
 * waits for `idle()` to hold, checked whenever `settle()` is called.
 */
export function createDrainTracking() {
  let executing = 0;
  const drained = new Set<() => void>();
  const settle = () => {
    for (const check of drained) check();
  };
  const plugin: Plugin = {
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation === 'subscription') return;
      executing++;
      return {
        onExecuteDone() {
          executing--;
          settle();
        },
      };
    },
  };
  /** Resolves with true once `idle()` holds, with false after `graceMs`. */
  const until = async (idle: () => boolean, graceMs: number): Promise<boolean> => {
    if (idle()) return true;
    return new Promise<boolean>((resolve) => {
      const check = () => {
        if (!idle()) return;
        done(true);
      };
      const timer = setTimeout(() => done(false), graceMs);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        drained.delete(check);
        resolve(ok);
      };
      drained.add(check);
    });
  };
  return { plugin, settle, until, executing: () => executing };
}
