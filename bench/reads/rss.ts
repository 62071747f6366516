/**
 * Section 4: the memory of a server process after it read the full state of many threads. The
 * threads are built through the engine here (appendNodes batches, a few threads at once), then
 * `weft serve` is started as a child process the way a deployment runs it, from the compiled
 * package (`npm run build`, then `node bin/weft.js serve`; see docs/deployment.md), with
 * WEFT_CACHE_BYTES passed on (and WEFT_HEAP_GROWTH_PERCENT, when set), and `thread(id) { state }`
 * (the AgentState export: every node) is read for each thread once, one after another. RSS is read from /proc/<pid>/status of that
 * process: VmRSS after the reads, VmHWM (its peak) as context.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../../src/engine/index.js';
import { fmt } from '../harness.js';
import {
  type BackendName,
  buildCapMs,
  buildThreadsCapped,
  gql,
  log,
  openBenchDb,
  type ReadsSizes,
  row,
  type SectionResult,
  verdict,
} from './common.js';

const STATE = 'query ($id: ID!) { thread(id: $id) { state } }';
const BIN = fileURLToPath(new URL('../../bin/weft.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIB = 2 ** 20;
/** Seconds of building at most (see buildCapMs). */
const BUILD_CAP_S = 200;
/** How long the server is left idle before its RSS is read again. */
const IDLE_MS = 15_000;

/** A port free right now on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** VmRSS and VmHWM of a process, in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') * 1024, peak: kib('VmHWM') * 1024 };
}

/** `weft serve` in a child process on `databaseUrl`; resolves once it listens. */
async function startServerProcess(
  databaseUrl: string,
  cacheBytes: number,
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      WEFT_REQUEST_LOG: 'off',
      WEFT_CACHE_BYTES: String(cacheBytes),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`weft serve did not start: ${out}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('weft: database')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`weft serve exited with ${code}: ${out}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    child,
    stop: async () => {
      child.kill('SIGTERM');
      const guard = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(guard);
    },
  };
}

/** The state cache's gauges and counters from the server's /metrics. */
async function cacheMetrics(
  graphqlUrl: string,
): Promise<{ bytes: number; threads: number; evictions: number } | undefined> {
  try {
    const text = await (await fetch(graphqlUrl.replace(/\/graphql$/, '/metrics'))).text();
    const value = (name: string) =>
      Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    return {
      bytes: value('weft_thread_cache_bytes'),
      threads: value('weft_thread_cache_threads'),
      evictions: value('weft_thread_cache_evictions_total'),
    };
  } catch {
    return undefined;
  }
}

export async function runRss(
  backend: BackendName,
  root: string,
  sizes: ReadsSizes,
): Promise<SectionResult> {
  const db = await openBenchDb(backend, root, 'rss');
  try {
    const asked = Array.from({ length: sizes.rssThreads }, (_, i) => `s-${i}`);
    const builder = createEngine({ databaseUrl: db.url });
    const capMs = buildCapMs(BUILD_CAP_S);
    const { ms: buildMs, built } = await buildThreadsCapped(
      builder,
      asked,
      sizes.rssThreadNodes,
      4,
      'rss threads',
      capMs,
    );
    await builder.close();
    const ids = asked.slice(0, built);
    const total = ids.length * sizes.rssThreadNodes;
    const capped =
      built < asked.length
        ? ` — CAPPED: only ${fmt(built)} of ${fmt(asked.length)} threads were built within the ${fmt(capMs / 1000)} s build cap, the server reads ${fmt(built)} threads`
        : '';
    const note = `built ${fmt(ids.length)} × ${fmt(sizes.rssThreadNodes)} nodes in ${fmt(buildMs / 1000, 1)} s (${fmt((total * 1000) / buildMs)} nodes/s, 4 threads at once)${capped}`;
    log(`${backend}: ${note}`);
    log(`${backend}: npm run build (the server runs from dist/, as deployed)`);
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`npm run build failed: ${build.stderr}${build.stdout}`);
    const server = await startServerProcess(db.url, sizes.cacheBytes);
    const pid = server.child.pid!;
    try {
      await gql(server.url, '{ __typename }');
      const start = memoryOf(pid);
      const t0 = performance.now();
      let bytes = 0;
      let highest = start.rss;
      for (const [i, id] of ids.entries()) {
        const answer = await gql(server.url, STATE, { id });
        bytes += answer.bytes;
        highest = Math.max(highest, memoryOf(pid).rss);
        if ((i + 1) % 25 === 0) {
          log(
            `${backend}: read the state of ${i + 1}/${ids.length} threads (${fmt((performance.now() - t0) / 1000, 1)} s), server RSS ${fmt(memoryOf(pid).rss / MIB)} MiB`,
          );
        }
      }
      const readMs = performance.now() - t0;
      const end = memoryOf(pid);
      // V8 returns freed pages once a process is idle (its memory reducer); what it keeps then
      // is what holding the cache costs, without the garbage of the last reads.
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      const idle = memoryOf(pid);
      const cached = await cacheMetrics(server.url);
      const limit = sizes.cacheBytes + 200 * MIB;
      return {
        rows: [
          row(
            `rss: server RSS after reading the state of ${ids.length} threads × ${fmt(sizes.rssThreadNodes)} nodes${capped === '' ? '' : ` (build CAPPED: ${asked.length} asked)`}`,
            `${fmt(end.rss / MIB)} MiB (at start ${fmt(start.rss / MIB)} MiB)`,
            `≤ WEFT_CACHE_BYTES + 200 MiB = ${fmt(limit / MIB)} MiB`,
            verdict(end.rss <= limit),
          ),
          row(
            `rss: server RSS ${fmt(IDLE_MS / 1000)} s after the last read (idle)`,
            `${fmt(idle.rss / MIB)} MiB`,
            '(context)',
          ),
          row(
            'rss: what the state cache holds then (its own estimate, weft_thread_cache_*)',
            cached === undefined
              ? 'not reported (/metrics did not answer)'
              : `${fmt(cached.bytes / MIB)} MiB in ${fmt(cached.threads)} threads, ${fmt(cached.evictions)} evictions`,
            '(context)',
          ),
          row(
            'rss: highest RSS seen between reads / VmHWM (peak)',
            `${fmt(highest / MIB)} / ${fmt(end.peak / MIB)} MiB`,
            '(context)',
          ),
          row(
            'rss: state reads',
            `${fmt(readMs / 1000, 1)} s for ${fmt(bytes / MIB)} MiB of answers (${fmt(readMs / ids.length)} ms per thread)`,
          ),
          row(`rss: build (${fmt(total)} nodes)`, `${fmt(buildMs / 1000, 1)} s`),
        ],
        notes: [
          note,
          `server (node bin/weft.js serve) started with WEFT_CACHE_BYTES=${sizes.cacheBytes}` +
            (process.env.WEFT_HEAP_GROWTH_PERCENT === undefined
              ? ''
              : `, WEFT_HEAP_GROWTH_PERCENT=${process.env.WEFT_HEAP_GROWTH_PERCENT}`),
        ],
      };
    } finally {
      await server.stop();
    }
  } finally {
    await db.drop();
  }
}
