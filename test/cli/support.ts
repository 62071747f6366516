/**
 * Runs a `weft` command in this process (`runCli`, what bin/weft runs) with `env` set, capturing
 * its output (console and stdout): as exact as the binary for everything but process start-up.
 */
import { vi } from 'vitest';
import { runCli } from '../../src/cli/run.js';

export async function weftIn(args: string[], env: Record<string, string> = {}) {
  const saved = new Map(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let out = '';
  let err = '';
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => {
    out += `${a.join(' ')}\n`;
  });
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => {
    err += `${a.join(' ')}\n`;
  });
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => {
    out += String(chunk);
    return true;
  });
  try {
    const code = await runCli(args);
    return { code, out, err };
  } finally {
    log.mockRestore();
    error.mockRestore();
    write.mockRestore();
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
