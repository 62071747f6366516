/**
 * `npm run bench -- forks [--turns=100,1000,5000] [--backends=sqlite,postgres]`: forks share
 * their source's history, so forking costs the same at any length. Per backend and size, a thread
 * of the peers bench's seeded conversation (bench/peers/workload.ts, one `appendNodes` per turn
 * plus `remember` on memory turns) is written into a fresh database, then, on the engine holding
 * it (as a writer would):
 *
 * - fork at the middle turn (median of 5 forks): the 5,000-turn fork must be within 2× of the
 *   100-turn one;
 * - read latest — the API's read models: the thread row, its newest 50 nodes with their parents,
 *   its node count and its last 50 log entries (read-model/queries.ts) — of the fork against the
 *   same of its source; and the fork's `state(atIndex)` at an index of the shared history against
 *   the source's at the same index (medians of 15): each within 1.5×.
 *
 * The log is planned and signed in memory with the core (what the engine's commands do) and
 * stored in one commit with the snapshots the engine would have written along the way, so the
 * 5,000-turn thread takes seconds to write instead of minutes; the forks and reads go through
 * the engine and the store as served.
 */
import { performance } from 'node:perf_hooks';
import type { LogEntry } from '../src/core/log/index.js';
import { createSequentialIds, createSimulatedClock } from '../src/core/ports.js';
import {
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  planCreateThread,
  planRemember,
} from '../src/core/thread/index.js';
import { openEngine, projectLog } from '../src/engine/index.js';
import { DEFAULT_SNAPSHOT_POLICY } from '../src/engine/snapshots.js';
import { createPrisma } from '../src/store/prisma/index.js';
import { createReadQueries, type ReadQueries } from '../src/store/read-model/queries.js';
import {
  postgresUnavailable,
  type Scratch,
  scratchPostgres,
  scratchSqlite,
} from './peers/databases.js';
import { formatMs } from './peers/report.js';
import { turnNodes } from './peers/weft.js';
import { generateWorkload } from './peers/workload.js';

const SOURCE = 'bench-source';
const FORKS = 5;
const READS = 15;
const FORK_TARGET = 2;
const READ_TARGET = 1.5;

const log = (message: string) => console.log(`  [forks] ${message}`);

/** The signed log of `turns` turns and the log length after each turn (index 0: after creation). */
function planLog(turns: number): { entries: LogEntry[]; lengthAfter: number[] } {
  const machine = createThreadMachine();
  const clock = createSimulatedClock('2026-03-01T00:00:00.000Z', 1000);
  const ids = createSequentialIds('e');
  let state = machine.initial;
  const entries: LogEntry[] = [];
  const lengthAfter: number[] = [];
  const commit = (event: Parameters<typeof commitEvent>[1] | undefined) => {
    if (event === undefined) throw new Error('planning failed');
    const now = clock.now();
    const committed = commitEvent(state, event, { id: ids.next(), recordedAt: now });
    if (!committed.ok) throw new Error(committed.error.message);
    state = committed.value.state;
    entries.push(committed.value.entry);
  };
  const value = <T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }) => {
    if (!r.ok) throw new Error(r.error.message);
    return r.value;
  };
  commit(value(planCreateThread(SOURCE, {})));
  lengthAfter.push(entries.length);
  for (const turn of generateWorkload(turns)) {
    commit(value(planAppendNodes(state, turnNodes(turn), clock.now())));
    if (turn.memory !== undefined) {
      const { key, content } = turn.memory;
      commit(value(planRemember(state, { type: 'memory', key, content }, clock.now())));
    }
    lengthAfter.push(entries.length);
  }
  return { entries, lengthAfter };
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** The API's read of a thread's newest state (read models only). */
async function readLatest(q: ReadQueries, threadId: string): Promise<void> {
  const [row] = await q.threads([threadId]);
  if (row === undefined) throw new Error(`no thread ${threadId}`);
  const nodes = await q.nodePage({ threadId, take: 50, descending: true });
  if (nodes.length !== 50) throw new Error(`expected 50 nodes of ${threadId}`);
  await q.countNodes({ threadId });
  const entries = await q.entries(threadId, row.logLength - 51, 50);
  if (entries.length !== Math.min(50, row.logLength)) {
    throw new Error(`expected the last 50 entries of ${threadId}`);
  }
}

interface SizeResult {
  backend: string;
  turns: number;
  forkMs: number;
  forkOfForkMs: number;
  latest: { source: number; fork: number };
  at: { source: number; fork: number };
}

async function measure(backend: 'sqlite' | 'postgres', turns: number): Promise<SizeResult> {
  const scratch: Scratch =
    backend === 'sqlite' ? scratchSqlite(`forks-${turns}`) : await scratchPostgres();
  const url = backend === 'sqlite' ? `file:${scratch.location}` : scratch.location;
  try {
    const { entries, lengthAfter } = planLog(turns);
    const engine = await openEngine(url);
    try {
      const projected = projectLog(SOURCE, entries, {}, DEFAULT_SNAPSHOT_POLICY);
      if (!projected.ok) throw new Error(projected.error.message);
      const written = await engine.store.commit(projected.value.changes!);
      if (!written.ok) throw new Error(written.error.message);
      const middle = lengthAfter[Math.floor(turns / 2)]!;
      // The writer's engine holds the source, as after writing it turn by turn.
      const loaded = await engine.getState(SOURCE);
      if (!loaded.ok) throw new Error(loaded.error.message);
      const forkTimes: number[] = [];
      for (let i = 0; i < FORKS; i++) {
        forkTimes.push(
          await timed(async () => {
            const r = await engine.forkThread({
              threadId: SOURCE,
              upToIndex: middle,
              newThreadId: `fork-${i}`,
            });
            if (!r.ok) throw new Error(r.error.message);
          }),
        );
      }
      const forkOfForkMs = await timed(async () => {
        const r = await engine.forkThread({ threadId: 'fork-0', newThreadId: 'fork-of-fork' });
        if (!r.ok) throw new Error(r.error.message);
      });
      const q = createReadQueries(createPrisma(url), true, engine.store.codec);
      try {
        // An index inside the shared history, between two snapshots.
        const index = middle - 7;
        const pairs = { latest: { source: [] as number[], fork: [] as number[] } };
        const at = { source: [] as number[], fork: [] as number[] };
        await readLatest(q, SOURCE);
        await readLatest(q, 'fork-1');
        for (let i = 0; i < READS; i++) {
          pairs.latest.source.push(await timed(() => readLatest(q, SOURCE)));
          pairs.latest.fork.push(await timed(() => readLatest(q, 'fork-1')));
          at.source.push(await timed(() => engine.stateAt(SOURCE, index)));
          at.fork.push(await timed(() => engine.stateAt('fork-1', index)));
        }
        return {
          backend,
          turns,
          forkMs: median(forkTimes),
          forkOfForkMs,
          latest: { source: median(pairs.latest.source), fork: median(pairs.latest.fork) },
          at: { source: median(at.source), fork: median(at.fork) },
        };
      } finally {
        await q.close();
      }
    } finally {
      await engine.close();
    }
  } finally {
    await scratch.drop();
  }
}

function option(name: string): string | undefined {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg?.slice(name.length + 3);
}

export async function runForksBench(): Promise<void> {
  const sizes = (option('turns') ?? '100,1000,5000').split(',').map((v) => Number(v));
  const backends = (option('backends') ?? 'sqlite,postgres').split(',') as Array<
    'sqlite' | 'postgres'
  >;
  console.log('\n## Forks: shared history (fork at the middle turn)\n');
  const results: SizeResult[] = [];
  for (const backend of backends) {
    if (backend === 'postgres') {
      const why = await postgresUnavailable();
      if (why !== undefined) {
        log(`postgres skipped: ${why}`);
        continue;
      }
    }
    for (const turns of sizes) {
      const r = await measure(backend, turns);
      log(
        `${backend} ${turns} turns: fork ${formatMs(r.forkMs)}, fork of fork ${formatMs(r.forkOfForkMs)}`,
      );
      results.push(r);
    }
  }
  const ok = (ratio: number, target: number) => (ratio <= target ? 'ok' : 'MISSED');
  console.log(
    '| backend | turns | fork at middle | vs smallest | read latest: source / fork | ratio | state(atIndex): source / fork | ratio |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    const base = results.find((b) => b.backend === r.backend && b.turns === Math.min(...sizes))!;
    const forkRatio = r.forkMs / base.forkMs;
    const latestRatio = r.latest.fork / r.latest.source;
    const atRatio = r.at.fork / r.at.source;
    console.log(
      `| ${r.backend} | ${r.turns.toLocaleString('en-US')} | ${formatMs(r.forkMs)} | ` +
        `${forkRatio.toFixed(2)}× ${ok(forkRatio, FORK_TARGET)} | ` +
        `${formatMs(r.latest.source)} / ${formatMs(r.latest.fork)} | ${latestRatio.toFixed(2)}× ${ok(latestRatio, READ_TARGET)} | ` +
        `${formatMs(r.at.source)} / ${formatMs(r.at.fork)} | ${atRatio.toFixed(2)}× ${ok(atRatio, READ_TARGET)} |`,
    );
  }
  console.log(
    `\nTargets: the fork within ${FORK_TARGET}× of the ${Math.min(...sizes)}-turn one; ` +
      `a fork's reads within ${READ_TARGET}× of its source's (medians of ${FORKS} forks, ${READS} reads).`,
  );
}
