/**
 * Section 3: does a big replay cost everyone else? A probe sends `{ __typename }` over HTTP every
 * PROBE_EVERY_MS (open loop, as in the hostile bench) while 16 graphql-ws subscribers replay a
 * whole 100,000-entry log (`threadEvents(threadId, afterIndex: -1)`) and 4 more subscribe and
 * never read; its p99 is compared with the same probe with no replay, just before (and, as a
 * check on drift, just after). The server and the probe share this process; the subscribers run
 * in a child process (replay-clients.ts). The log is built in the core and written in one
 * transaction, with the snapshots the engine would have written (as the store bench does), by
 * another child process (replay-build.ts), so the server starts without the builder's heap.
 * Before the baseline, the subscribers replay the last WARM_UP_ENTRIES once (a new process's
 * first subscriptions compile queries and open database connections).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../../src/engine/index.js';
import { createEventHub } from '../../src/events/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { fmt } from '../harness.js';
import {
  type BackendName,
  log,
  ms,
  openBenchDb,
  p,
  type ReadsSizes,
  row,
  type SectionResult,
  startApp,
  verdict,
} from './common.js';

const PROBE_EVERY_MS = 10;
const PROBE_MAX_IN_FLIGHT = 64;
/** Entries each subscriber replays in the warm-up (the end of the log). */
const WARM_UP_ENTRIES = 1_000;
/** How long the replay phase is probed at most (the subscribers are then closed, done or not). */
const replayWindowMs = (quick: boolean) =>
  Number(process.env.WEFT_BENCH_REPLAY_WINDOW_MS ?? (quick ? 20_000 : 60_000));
const CLIENTS = fileURLToPath(new URL('./replay-clients.ts', import.meta.url));
const BUILDER = fileURLToPath(new URL('./replay-build.ts', import.meta.url));

interface Probe {
  latencies: number[];
  failures: number;
  skipped: number;
}

/** `{ __typename }` every PROBE_EVERY_MS until `until` resolves (or `maxMs` passed). */
async function probe(url: string, until: Promise<unknown>, maxMs: number): Promise<Probe> {
  const body = JSON.stringify({ query: '{ __typename }' });
  const out: Probe = { latencies: [], failures: 0, skipped: 0 };
  const pending = new Set<Promise<void>>();
  let stop = false;
  void until.then(() => {
    stop = true;
  });
  const started = performance.now();
  for (let i = 0; !stop && performance.now() - started < maxMs; i++) {
    const wait = started + i * PROBE_EVERY_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (pending.size >= PROBE_MAX_IN_FLIGHT) {
      out.skipped++;
      continue;
    }
    const t0 = performance.now();
    const one = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    })
      .then(async (response) => {
        const text = await response.text();
        out.latencies.push(performance.now() - t0);
        if (response.status !== 200 || !text.includes('"__typename"')) out.failures++;
      })
      .catch(() => {
        out.failures++;
      })
      .finally(() => pending.delete(one));
    pending.add(one);
  }
  await Promise.all(pending);
  return out;
}

const sleep = (t: number) => new Promise<void>((resolve) => setTimeout(resolve, t));

interface Tally {
  received: number;
  expected: number;
  ms: number;
  finishedMs: number[];
  errors: string[];
}

/** Starts the subscribers; resolves once all subscribed, with their tally to come. */
async function startClients(spec: object): Promise<{ done: Promise<Tally | undefined> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CLIENTS], {
    env: { ...process.env, WEFT_REPLAY_SPEC: JSON.stringify(spec) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes('started\n')) markStarted();
    const last = chunk.toString().trim().split('\n').at(-1) ?? '';
    if (last.startsWith('progress ')) log(`replay: ${fmt(Number(last.slice(9)))} events received`);
  });
  const guard = setTimeout(
    () => child.kill('SIGKILL'),
    (spec as { deadlineMs: number }).deadlineMs + 30_000,
  );
  const done = new Promise<Tally | undefined>((resolve) => {
    child.on('exit', () => {
      clearTimeout(guard);
      markStarted();
      const last = out
        .trim()
        .split('\n')
        .findLast((line) => line.startsWith('{'));
      try {
        resolve(last === undefined ? undefined : (JSON.parse(last) as Tally));
      } catch {
        resolve(undefined);
      }
    });
  });
  await started;
  return { done };
}

/**
 * Builds a `length`-entry log in the core and writes it in one transaction, in a child process
 * (replay-build.ts), so that this process — the server's — keeps none of the builder's heap.
 * Returns the log's length.
 */
async function writeLog(
  url: string,
  threadId: string,
  length: number,
  backend: BackendName,
): Promise<number> {
  log(`${backend}: building a ${fmt(length)}-entry log in a child process and writing it`);
  const child = spawn(process.execPath, ['--import', 'tsx', BUILDER], {
    env: { ...process.env, WEFT_REPLAY_BUILD: JSON.stringify({ url, threadId, length }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const last = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !last.startsWith('{')) {
    throw new Error(`the log builder exited with ${code}: ${out.slice(0, 300)}`);
  }
  return (JSON.parse(last) as { length: number }).length;
}

export async function runReplay(
  backend: BackendName,
  root: string,
  sizes: ReadsSizes,
): Promise<SectionResult> {
  const db = await openBenchDb(backend, root, 'replay');
  try {
    const t0 = performance.now();
    const threadId = 'bench-thread'; // the id buildLogForProfile's log names
    const logLength = await writeLog(db.url, threadId, sizes.replayEntries, backend);
    const store = openThreadStore(db.url);
    const buildMs = performance.now() - t0;
    const note = `built and wrote the ${fmt(logLength)}-entry log in ${fmt(buildMs / 1000, 1)} s`;
    log(`${backend}: ${note}`);
    const hub = createEventHub({ store });
    await hub.ready;
    const engine = createEngine({ store, publisher: hub });
    const { url, app } = await startApp(db.url, engine, () => ({ events: hub }));
    try {
      // Warm-up: the subscribers' path once (the first subscriptions compile queries, open
      // database connections and load modules, a one-time cost of a new process, not of a
      // replay), then the probe's.
      const warm = await startClients({
        url,
        threadId,
        readers: sizes.replaySubscribers,
        paused: 0,
        afterIndex: logLength - 1 - WARM_UP_ENTRIES,
        expected: WARM_UP_ENTRIES,
        deadlineMs: 30_000,
      });
      await warm.done;
      await probe(url, sleep(1000), 1000);
      const before = await probe(url, sleep(sizes.probeBaselineMs), sizes.probeBaselineMs);
      const rssBefore = process.memoryUsage().rss;
      let peakRss = rssBefore;
      const rssTimer = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }, 200);
      const windowMs = replayWindowMs(sizes.quick);
      const replayStarted = performance.now();
      const clients = await startClients({
        url,
        threadId,
        readers: sizes.replaySubscribers,
        paused: sizes.pausedSubscribers,
        expected: logLength,
        deadlineMs: windowMs,
      });
      const during = await probe(url, clients.done, windowMs + 10_000);
      const tally = await clients.done;
      const replayMs = performance.now() - replayStarted;
      clearInterval(rssTimer);
      // The paused sockets are closed with their process; give the server a moment to drop them.
      await sleep(1000);
      const after = await probe(url, sleep(sizes.probeBaselineMs), sizes.probeBaselineMs);
      const quiet = [...before.latencies, ...after.latencies];
      const ratio = p(during.latencies, 99) / p(quiet, 99);
      const complete = tally !== undefined && tally.received === tally.expected;
      const describe = (x: Probe) =>
        `p50 ${ms(p(x.latencies, 50))}, p99 ${ms(p(x.latencies, 99))} (n=${x.latencies.length}, failed ${x.failures}, skipped ${x.skipped})`;
      return {
        rows: [
          row('replay: { __typename } probe, no replay, before', describe(before)),
          row('replay: { __typename } probe, no replay, after', describe(after)),
          row(
            'replay: { __typename } probe, no replay, before and after pooled',
            `p50 ${ms(p(quiet, 50))}, p99 ${ms(p(quiet, 99))}`,
            'baseline',
          ),
          row(
            `replay: probe while ${sizes.replaySubscribers} subscribers replay ${fmt(logLength)} entries + ${sizes.pausedSubscribers} paused (≤ ${fmt(windowMs / 1000)} s)`,
            describe(during),
          ),
          row(
            'replay: probe p99 during / no replay',
            `${fmt(ratio, 2)}× (vs before alone: ${fmt(p(during.latencies, 99) / p(before.latencies, 99), 2)}×)`,
            '≤ 2×',
            verdict(ratio <= 2 && during.skipped === 0 && during.failures === 0),
          ),
          row(
            'replay: events delivered to the reading subscribers',
            tally === undefined
              ? 'no tally (the subscriber process failed)'
              : `${fmt(tally.received)} / ${fmt(tally.expected)} in ${fmt(tally.ms / 1000, 1)} s (${fmt((tally.received * 1000) / tally.ms)} events/s)` +
                  (tally.errors.length > 0 ? ` (errors: ${tally.errors.join('; ')})` : ''),
            '(context)',
          ),
          row(
            'replay: phase length (until every reader had the whole log, or the window ended)',
            `${fmt(replayMs / 1000, 1)} s${complete ? '' : ' (replays unfinished: subscribers closed)'}`,
          ),
          row(
            'replay: RSS of the server process (shared with the probe) before / peak',
            `${fmt(rssBefore / 2 ** 20)} / ${fmt(peakRss / 2 ** 20)} MiB`,
            '(context)',
          ),
        ],
        notes: [note],
      };
    } finally {
      await app.stop();
      await hub.close();
      await engine.close();
    }
  } finally {
    await db.drop();
  }
}
