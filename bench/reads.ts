/**
 * `npm run bench -- reads`: the read paths at size, on SQLite and on Postgres (when
 * WEFT_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/test, answers; each section
 * gets a database of its own, dropped at the end), every figure against a baseline measured in
 * this run:
 *
 * 1. `thread(id) { logLength nodeCount nodes(first: 50) … }` never cached, threads of 1,000 and
 *    100,000 nodes, vs the same rows with the raw driver (≥ 25%; 100k p50 ≤ 2× the 1k p50);
 * 2. `threads(first: 50, orderBy: UPDATED_AT DESC) { totalCount … }` over 100,000 threads vs the
 *    raw ORDER BY/LIMIT + COUNT (≥ 25%);
 * 3. `{ __typename }` p99 while 16 subscribers replay a 100,000-entry log and 4 never read, vs the
 *    same probe with no replay (≤ 2×);
 * 4. RSS of a server process after reading the state of 200 threads of 10,000 nodes (≤
 *    WEFT_CACHE_BYTES + 200 MiB);
 * 5. `Query.approvals` and `Query.searchNodes`, when the schema has them.
 *
 * Options: `--quick` (or WEFT_BENCH_READS_QUICK=1) smaller sizes for a smoke check (the targets
 * are for the full sizes); `--sections=thread,threads,replay,rss,approvals,search` (or
 * WEFT_BENCH_READS_SECTIONS); `--backends=sqlite,postgres` (or WEFT_BENCH_READS_BACKENDS).
 *
 * When a run has more than one section, each (backend, section) runs in a child process of its
 * own: the replay section's server shares its process with the probe, and after the builds of
 * the sections before it that process held 800 MiB whose collection showed in the probe's p99.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { fmt, printTable, type Row } from './harness.js';
import { runApprovals } from './reads/approvals.js';
import {
  type BackendName,
  log,
  POSTGRES_URL,
  postgresProblem,
  type ReadsSizes,
  readsSizes,
  row,
  type SectionResult,
} from './reads/common.js';
import { runReplay } from './reads/replay.js';
import { runRss } from './reads/rss.js';
import { runSearch } from './reads/search.js';
import { runThreadList } from './reads/thread-list.js';
import { runThreadRead } from './reads/thread-read.js';

type Section = (backend: BackendName, root: string, sizes: ReadsSizes) => Promise<SectionResult>;

const SECTIONS: Record<string, Section> = {
  thread: runThreadRead,
  threads: runThreadList,
  replay: runReplay,
  rss: runRss,
  approvals: runApprovals,
  search: runSearch,
};

/** Where a child run writes its section's result (set by the parent; see runInChild). */
const CHILD_RESULT = 'WEFT_BENCH_READS_CHILD_RESULT';
const RUN = fileURLToPath(new URL('./run.ts', import.meta.url));

/** One section on one backend in a fresh process; its result as the child wrote it. */
async function runInChild(
  backend: BackendName,
  name: string,
  root: string,
  quick: boolean,
): Promise<SectionResult> {
  const out = join(root, `${backend}-${name}.json`);
  const args = ['--import', 'tsx', RUN, 'reads', `--sections=${name}`, `--backends=${backend}`];
  if (quick) args.push('--quick');
  const child = spawn(process.execPath, args, {
    env: { ...process.env, [CHILD_RESULT]: out },
    stdio: 'inherit',
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  let text: string;
  try {
    text = readFileSync(out, 'utf8');
  } catch {
    throw new Error(`the ${backend} ${name} child exited with ${code} and wrote no result`);
  }
  return JSON.parse(text) as SectionResult;
}

function option(argv: readonly string[], name: string, env: string): string | undefined {
  const arg = argv.find((a) => a.startsWith(`--${name}=`));
  return arg === undefined ? process.env[env] : arg.slice(name.length + 3);
}

const list = (value: string | undefined, all: string[], what: string): string[] => {
  if (value === undefined || value === '') return all;
  const picked = value.split(',').filter((v) => v !== '');
  const unknown = picked.filter((v) => !all.includes(v));
  if (unknown.length > 0) throw new Error(`${what}: unknown ${unknown.join(', ')}`);
  return picked;
};

export async function runReadsBench(
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const quick =
    argv.includes('--quick') || /^(1|true|yes)$/i.test(process.env.WEFT_BENCH_READS_QUICK ?? '');
  const sizes = readsSizes(quick);
  const sections = list(
    option(argv, 'sections', 'WEFT_BENCH_READS_SECTIONS'),
    Object.keys(SECTIONS),
    '--sections',
  );
  const backends = list(
    option(argv, 'backends', 'WEFT_BENCH_READS_BACKENDS'),
    ['sqlite', 'postgres'],
    '--backends',
  ) as BackendName[];
  const root = mkdtempSync(join(tmpdir(), 'weft-bench-reads-'));
  const started = performance.now();
  const timings: Row[] = [];
  // One section on one backend runs here; a run of more gives each its own process.
  const alone = sections.length === 1 && backends.length === 1;
  const resultFile = process.env[CHILD_RESULT];
  log(
    `${quick ? 'QUICK run (smaller sizes: a smoke check, not the figures the targets are for)' : 'full sizes'}; files under ${root}`,
  );
  try {
    for (const backend of backends) {
      if (backend === 'postgres') {
        const problem = await postgresProblem();
        if (problem !== undefined) {
          printTable(`Reads on postgres: SKIPPED (cannot reach ${POSTGRES_URL}: ${problem})`, []);
          continue;
        }
      }
      const rows: Row[] = [];
      const notes: string[] = [];
      for (const name of sections) {
        log(`${backend}: section ${name}`);
        const t0 = performance.now();
        try {
          const result = alone
            ? await SECTIONS[name]!(backend, root, sizes)
            : await runInChild(backend, name, root, quick);
          if (alone && resultFile !== undefined) {
            writeFileSync(resultFile, JSON.stringify(result));
            return;
          }
          rows.push(...result.rows);
          notes.push(...result.notes.map((n) => `${name}: ${n}`));
        } catch (error) {
          const why = error instanceof Error ? (error.stack ?? error.message) : String(error);
          console.error(`  [reads] ${backend} ${name} FAILED: ${why}`);
          rows.push(row(`${name}: FAILED`, why.split('\n')[0]!.slice(0, 160), '', 'MISSED'));
        }
        const seconds = (performance.now() - t0) / 1000;
        timings.push(row(`${backend} ${name}`, `${fmt(seconds, 1)} s`));
        log(`${backend}: section ${name} took ${fmt(seconds, 1)} s`);
      }
      printTable(`Reads on ${backend}${quick ? ' (QUICK sizes)' : ''}`, rows);
      for (const note of notes) console.log(`  ${note}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  timings.push(row('total', `${fmt((performance.now() - started) / 1000, 1)} s`));
  printTable('Reads: section timings', timings);
}
