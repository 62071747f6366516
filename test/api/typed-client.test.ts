/**
 * The typed client end to end: codegen runs offline from the committed SDL and the operation
 * documents, the example program type-checks against what it generated, and it runs against a
 * live server on a real port.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support.js';

const ROOT = join(import.meta.dirname, '../..');
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);
/** Runs a child without blocking this process (the server under test lives here). */
function runAsync(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => {
    stdout += c;
  });
  child.stderr.on('data', (c) => {
    stderr += c;
  });
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (status) => resolve({ status, stdout, stderr })),
  );
}

const run = (command: string, args: string[], env: Record<string, string> = {}) =>
  spawnSync(command, args, { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('typed client', { timeout: 600_000 }, () => {
  it('codegen generates the client offline', () => {
    const codegen = run(bin('graphql-codegen'), ['--config', 'codegen.ts']);
    expect(codegen.status, codegen.stderr + codegen.stdout).toBe(0);
    expect(existsSync(join(ROOT, 'examples/generated/graphql.ts'))).toBe(true);
  });

  it('the example program type-checks against the generated client', () => {
    const tsc = run(bin('tsc'), ['-p', 'examples/tsconfig.json']);
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);
  });

  it('the example program runs against a live server', async () => {
    const url = await t.app.start();
    const example = await runAsync(bin('tsx'), ['examples/typed-client.ts'], { WEFT_URL: url });
    expect(example.status, example.stderr).toBe(0);
    expect(example.stdout).toContain('appended SYSTEM#1, TOOL_RESULT#2');
    expect(example.stdout).toContain('conflict: expected 0, log is at 2');
    expect(example.stdout).toMatch(/run \S+ is WAITING, waiting for human_approval/);
    expect(example.stdout).toMatch(
      /inbox: \d+ pending; \S+ waits for HUMAN_APPROVAL on \{"book":"train"\}/,
    );
    expect(example.stdout).toContain('typed client: ok');
  });
});
