/**
 * Shared pieces of the integration tests: fresh databases per backend, child processes that
 * speak a line protocol on stdout, seeded randomness, and the log checks every test ends with.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Result } from '../../src/core/errors.js';
import type { LogEntry } from '../../src/core/log/index.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { createTestDatabase, type TestDatabase } from '../support/services.js';

export type BackendName = 'sqlite' | 'postgres';

/** A fresh migrated database of a backend; `drop()` removes it. */
export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function freshDatabase(backend: BackendName): Promise<FreshDatabase> {
  if (backend === 'sqlite') {
    const root = mkdtempSync(join(tmpdir(), 'weft-integration-'));
    const url = `file:${join(root, 'weft.db')}`;
    await migrate(url);
    return { url, drop: async () => rmSync(root, { recursive: true, force: true }) };
  }
  const db: TestDatabase = await createTestDatabase();
  await migrate(db.url);
  return { url: db.url, drop: () => db.drop() };
}

/** An engine with the system clock and random ids, as a server would run it. */
export function engineOn(url: string): Engine {
  return createEngine({ databaseUrl: url });
}

export function must<T>(result: Result<T>): T {
  if (!result.ok) {
    throw new Error(`unexpected ${result.error.code}: ${result.error.message}`);
  }
  return result.value;
}

/**
 * mulberry32: a small seeded generator, so that a failing crash schedule can be replayed with
 * WEFT_CRASH_SEED=<seed>.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A child process started with `node --import tsx <script> ...args`, read line by line. */
export interface LineChild {
  process: ChildProcessWithoutNullStreams;
  /** Complete lines written so far (a line cut off by a kill is not included). */
  lines: string[];
  stderr(): string;
  /** Resolves with the first line for which `test` is true; rejects if the child ends first. */
  waitForLine(test: (line: string) => boolean): Promise<string>;
  /** Resolves when the process has ended and its stdout is fully read. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnLineChild(
  script: string,
  args: string[],
  onLine?: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): LineChild {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env,
  });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const waiters: Array<{
    test: (line: string) => boolean;
    resolve: (line: string) => void;
    reject: (error: Error) => void;
  }> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    let newline = partial.indexOf('\n');
    while (newline >= 0) {
      const line = partial.slice(0, newline);
      partial = partial.slice(newline + 1);
      lines.push(line);
      onLine?.(line);
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.test(line)) waiters.splice(i, 1)[0]!.resolve(line);
      }
      newline = partial.indexOf('\n');
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(
          new Error(
            `${script} ended (code ${code}, signal ${signal}) before the awaited line: ${stderr}`,
          ),
        );
      }
      resolve({ code, signal });
    });
  });
  return {
    process: child,
    lines,
    stderr: () => stderr,
    waitForLine(test) {
      const seen = lines.find(test);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => waiters.push({ test, resolve, reject }));
    },
    exited,
  };
}

/** A `weft serve` child process and the GraphQL URL it printed. */
export interface ServeChild extends LineChild {
  url: string;
}

/**
 * `weft serve` in its own process (`node --import tsx src/cli/main.ts serve`) on a free loopback
 * port, with `env` over this process's environment; resolves once it prints the URL it serves,
 * rejects if it ends first.
 */
export async function spawnServe(env: Record<string, string>): Promise<ServeChild> {
  const server = spawnLineChild('src/cli/main.ts', ['serve'], undefined, {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    ...env,
  });
  const line = await server.waitForLine((l) => l.startsWith('weft: serving '));
  return { ...server, url: /weft: serving (http:\/\/\S+)/.exec(line)![1]! };
}

/**
 * The log-level invariants on a stored thread: indices contiguous from 0
 * (no gap, no duplicate), entry ids unique, the thread row's length equal to the log's, and
 * strict verification passing. Returns the entries for further checks.
 */
export async function expectSoundLog(engine: Engine, threadId: string): Promise<LogEntry[]> {
  const entries = await engine.store.readEntries(threadId);
  expect(entries.length).toBeGreaterThan(0);
  const badIndex = entries.findIndex((entry, i) => entry.index !== i);
  expect(badIndex, `entry at position ${badIndex} has the wrong index`).toBe(-1);
  expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
  expect(await engine.store.getLogLength(threadId)).toBe(entries.length);
  const report = must(await engine.verify(threadId, { strict: true }));
  expect(report, `strict verification of ${threadId}`).toMatchObject({
    ok: true,
    checkedEntries: entries.length,
  });
  return entries;
}

/** A node as recorded inside a `nodes_appended` entry. */
export interface LoggedNode {
  id: string;
  payload: unknown;
}

/** The nodes a log's `nodes_appended` entries recorded, with the index of their entry. */
export function loggedNodes(entries: LogEntry[]): Array<LoggedNode & { index: number }> {
  return entries.flatMap((entry) =>
    entry.event.type === 'nodes_appended'
      ? (entry.event.nodes as unknown as LoggedNode[]).map((node) => ({
          id: node.id,
          payload: node.payload,
          index: entry.index,
        }))
      : [],
  );
}

/** One POST over a fresh connection (no keep-alive): status, headers and parsed body, or the network error. */
export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<
  | { ok: true; status: number; requestId: string | undefined; body: Record<string, unknown> }
  | { ok: false; error: string }
> {
  return new Promise((resolve) => {
    const text = JSON.stringify(body);
    const req = httpRequest(url, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'content-length': String(Buffer.byteLength(text)),
        ...headers,
      },
    });
    req.on('response', (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        data += c;
      });
      res.on('end', () => {
        let parsed: Record<string, unknown> = {};
        try {
          parsed = JSON.parse(data);
        } catch {
          resolve({ ok: false, error: `unparsable answer (${res.statusCode}): ${data}` });
          return;
        }
        const id = res.headers['x-request-id'];
        resolve({
          ok: true,
          status: res.statusCode ?? 0,
          requestId: typeof id === 'string' ? id : undefined,
          body: parsed,
        });
      });
      res.on('error', (error) => resolve({ ok: false, error: `cut off: ${error.message}` }));
    });
    req.on('error', (error) => resolve({ ok: false, error: (error as Error).message }));
    req.end(text);
  });
}
