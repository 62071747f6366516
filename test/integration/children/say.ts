/**
 * One line of JSON to the parent over stdout, written synchronously (a crash test kills the child
 * right after an acknowledgement, which must already be out). Stdout is a pipe the parent drains
 * when it gets to it; a busy machine can fill it, and then a synchronous write to it fails with
 * EAGAIN or writes only part of the line — so the rest is written again after a short wait.
 */
import { writeSync } from 'node:fs';

const pause = new Int32Array(new SharedArrayBuffer(4));

export function say(message: object): void {
  const line = Buffer.from(`${JSON.stringify(message)}\n`);
  let written = 0;
  while (written < line.length) {
    try {
      written += writeSync(1, line, written);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(pause, 0, 0, 2);
    }
  }
}
