/**
 * `npm run bench -- peers [--turns=100,1000,5000] [options]`: Weft's engine against
 * LangGraph's checkpointers (SqliteSaver, PostgresSaver) on the same seeded agent conversation
 * (see `peers/workload.ts`), on SQLite and on Postgres (fresh temp file / fresh database each;
 * Postgres rows skipped, with the reason, when no server answers). Measures, per size: total
 * write time, database bytes, reading the latest state (by the writing client, and by a freshly
 * opened one), reading the state as of the middle turn, and forking there; then checks that both
 * sides read back exactly the workload (sample turns compared one by one, then everything).
 *
 * LangGraph stores the whole message list in every checkpoint (three per turn by default), so its
 * bytes and write time grow with the square of the turns: beyond LANGGRAPH_TURN_LIMIT turns its
 * write time and bytes are extrapolated from the growth measured turn by turn (a quadratic
 * least-squares fit), marked ≈, and its reads and fork are measured on the same latest and
 * middle states written by two invokes (the first half of the turns, then the rest).
 * `--langgraph-full` writes every size turn by turn; `--langgraph-turns=N` moves the limit.
 * Beside them, "LangGraph on WeftSaver": the same LangGraph graph and calls with WeftSaver as its
 * checkpointer, written turn by turn up to `--weftsaver-turns=N` (default 1,000).
 * `--only=weftsaver` runs only that side (and the floor below), not Weft's engine nor
 * LangGraph's savers. Last, the store column (peers/store.ts): LangGraph's long-term memory
 * stores at `--store-items=N` (default 10,000) items; `--only=store` runs it alone. Each turn-by-turn run also reports its write time per turn (wall and
 * process CPU) over its second and its last tenth of the turns (at most 100 each; the first is
 * the warm-up); LangGraph's own share of it is measured on the same graph with a checkpointer
 * that stores nothing (peers/reference-saver.ts), the floor any saver's figure stands on.
 * Other options: `--postgres-turns=100,1000` (sizes also run on Postgres), `--langgraph-read-cap=ms`
 * (see READ_EXTRAPOLATE_MS), `--langgraph-durability=exit|sync|async` (default: LangGraph's own).
 */
import { performance } from 'node:perf_hooks';
import { compareViews, type Mismatch, sampleTurns, turnMessagesOf } from './peers/content.js';
import {
  postgresUnavailable,
  type Scratch,
  scratchPostgres,
  scratchSqlite,
} from './peers/databases.js';
import {
  childWriter,
  FLAT_WITHIN,
  type FlatnessResult,
  flatnessLine,
  measureFlatness,
} from './peers/flatness.js';
import { openLangGraph } from './peers/langgraph.js';
import {
  comparisonTable,
  type Figure,
  fitQuadratic,
  formatBytes,
  formatMs,
  type GrowthSample,
  growthTable,
  perTurnTable,
  type SideResult,
} from './peers/report.js';
import { type Backend, NO_STORAGE, ON_WEFT_SAVER, type Side } from './peers/side.js';
import { runStoreColumn } from './peers/store.js';
import { openWeft } from './peers/weft.js';
import {
  type ConversationView,
  expectedView,
  generateWorkload,
  type Turn,
  turnContentBytes,
} from './peers/workload.js';

const DEFAULT_SIZES = [100, 1_000, 5_000];
/** LangGraph writes turn by turn up to this many turns (--langgraph-turns=N; --langgraph-full: all). */
const LANGGRAPH_TURN_LIMIT = 100;
/**
 * LangGraph on WeftSaver writes turn by turn (its checkpoints hold only what is new) up to this
 * many turns; larger sizes are not run (--weftsaver-turns=N moves it).
 */
const WEFT_SAVER_TURN_LIMIT = 1_000;
/** Growth samples per turn-by-turn LangGraph run. */
const GROWTH_SAMPLES = 20;
/** Best of this many rounds per read measure, while the rounds stay within READ_BUDGET_MS. */
const READ_ROUNDS = 3;
const READ_BUDGET_MS = 8_000;
/**
 * When LangGraph's slowest read or fork at one size took longer than this, its reads and fork at
 * the next (compacted) size are scaled linearly from it instead of measured (marked ≈);
 * `--langgraph-read-cap=ms` changes it (a large value measures every size).
 */
const READ_EXTRAPOLATE_MS = 20_000;

const log = (message: string) => console.log(`  [peers] ${message}`);

interface Options {
  sizes: number[];
  langgraphFull: boolean;
  /** Largest size LangGraph writes turn by turn (and the length of its growth run). */
  langgraphTurns: number;
  /** Sizes also run on Postgres (--postgres-turns=…; default: every size). */
  postgresSizes?: number[];
  /** See READ_EXTRAPOLATE_MS (--langgraph-read-cap=ms). */
  readCap: number;
  /** LangGraph's `durability` per invoke; undefined: its default ("async"). */
  durability?: 'async' | 'sync' | 'exit';
  /** Largest size the LangGraph-on-WeftSaver side writes (turn by turn; --weftsaver-turns=N). */
  weftSaverTurns: number;
  /** --only=weftsaver: only the LangGraph-on-WeftSaver side and its floor (no Weft, no LangGraph savers). */
  onlyWeftSaver: boolean;
  /** --only=store: only the store column (peers/store.ts). */
  onlyStore: boolean;
  /** Items the store column puts and searches (--store-items=N, default 10,000). */
  storeItems: number;
}

function parseOptions(argv: readonly string[]): Options {
  let sizes = DEFAULT_SIZES;
  let langgraphTurns = LANGGRAPH_TURN_LIMIT;
  let durability: Options['durability'];
  let readCap = READ_EXTRAPOLATE_MS;
  let postgresSizes: number[] | undefined;
  let weftSaverTurns = WEFT_SAVER_TURN_LIMIT;
  let storeItems = 10_000;
  for (const arg of argv) {
    if (arg.startsWith('--only=') && arg !== '--only=weftsaver' && arg !== '--only=store') {
      throw new Error(`--only takes weftsaver or store, got ${arg}`);
    }
    if (arg.startsWith('--store-items=')) {
      storeItems = Number(arg.slice('--store-items='.length).replaceAll('_', ''));
      if (!Number.isInteger(storeItems) || storeItems < 100) {
        throw new Error(`--store-items takes an integer ≥ 100, got ${arg}`);
      }
    }
    if (arg.startsWith('--weftsaver-turns=')) {
      weftSaverTurns = Number(arg.slice('--weftsaver-turns='.length).replaceAll('_', ''));
      if (!Number.isInteger(weftSaverTurns) || weftSaverTurns < 0) {
        throw new Error(`--weftsaver-turns takes a non-negative integer, got ${arg}`);
      }
    }
    if (arg.startsWith('--postgres-turns=')) {
      postgresSizes = arg
        .slice('--postgres-turns='.length)
        .split(',')
        .filter((v) => v !== '')
        .map((v) => Number(v.replaceAll('_', '')));
      if (postgresSizes.some((n) => !Number.isInteger(n) || n < 2)) {
        throw new Error(
          `--postgres-turns takes a comma-separated list of integers ≥ 2, got ${arg}`,
        );
      }
    }
    if (arg.startsWith('--langgraph-read-cap=')) {
      readCap = Number(arg.slice('--langgraph-read-cap='.length));
      if (!Number.isFinite(readCap) || readCap < 0) {
        throw new Error(`--langgraph-read-cap takes milliseconds, got ${arg}`);
      }
    }
    if (arg.startsWith('--langgraph-durability=')) {
      const value = arg.slice('--langgraph-durability='.length);
      if (value !== 'async' && value !== 'sync' && value !== 'exit') {
        throw new Error(`--langgraph-durability takes async, sync or exit, got ${value}`);
      }
      durability = value;
    }
    if (arg.startsWith('--langgraph-turns=')) {
      langgraphTurns = Number(arg.slice('--langgraph-turns='.length));
      if (!Number.isInteger(langgraphTurns) || langgraphTurns < 2 * GROWTH_SAMPLES) {
        throw new Error(`--langgraph-turns takes an integer ≥ ${2 * GROWTH_SAMPLES}, got ${arg}`);
      }
    }
    if (arg.startsWith('--turns=')) {
      sizes = arg
        .slice('--turns='.length)
        .split(',')
        .map((s) => Number(s.replaceAll('_', '')));
      if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 2)) {
        throw new Error(`--turns takes a comma-separated list of integers ≥ 2, got ${arg}`);
      }
    }
  }
  return {
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    langgraphFull: argv.includes('--langgraph-full'),
    langgraphTurns,
    readCap,
    weftSaverTurns,
    onlyWeftSaver: argv.includes('--only=weftsaver'),
    onlyStore: argv.includes('--only=store'),
    storeItems,
    ...(postgresSizes === undefined ? {} : { postgresSizes }),
    ...(durability === undefined ? {} : { durability }),
  };
}

/** Best (smallest) duration of up to `rounds` runs of `fn`, stopping early past `budgetMs`. */
async function bestOf<T>(
  fn: () => Promise<{ ms: number; value: T }>,
  rounds = READ_ROUNDS,
  budgetMs = READ_BUDGET_MS,
): Promise<{ ms: number; value: T }> {
  let best: { ms: number; value: T } | undefined;
  let spent = 0;
  for (let r = 0; r < rounds && (r === 0 || spent < budgetMs); r++) {
    const run = await fn();
    spent += run.ms;
    if (best === undefined || run.ms < best.ms) best = run;
  }
  return best!;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

interface RunOutcome {
  result: SideResult;
  growth: GrowthSample[];
  mismatches: Mismatch[];
  latest: ConversationView;
}

/** Writes the workload into one side and takes every measure and the content check. */
interface Expected {
  latest: ConversationView;
  middle: ConversationView;
  samples: number[];
  midSamples: number[];
}

async function measureSide(
  side: Side,
  turns: readonly Turn[],
  history: 'turns' | 'compacted',
  expected: Expected,
): Promise<RunOutcome> {
  const label = `${side.system}/${side.backend} ${turns.length} turns`;
  const mid = Math.floor(turns.length / 2);
  const growth: GrowthSample[] = [];
  let writeMs = 0;
  /**
   * Per turn: [write ms, of which a checkpointer call was pending, CPU ms], for the first and last
   * SPAN turns (LangGraph runs its next step while a put is pending: the saver's share is less).
   */
  const tenth = spanOf(turns.length);
  const ends: Record<'first' | 'last', [number, number, number]> = {
    first: [0, 0, 0],
    last: [0, 0, 0],
  };
  let mark: unknown;
  const started = performance.now();
  if (history === 'turns') {
    const every = Math.max(1, Math.floor(turns.length / GROWTH_SAMPLES));
    const progressEvery = Math.max(1, Math.floor(turns.length / 10));
    let lastProgress = started;
    for (const turn of turns) {
      const start = performance.now();
      const cpu = process.cpuUsage();
      const saverBefore = side.saverMs?.() ?? 0;
      await side.writeTurn(turn);
      const ms = performance.now() - start;
      writeMs += ms;
      const end = endOf(turn.n, turns.length, ends);
      if (end !== undefined) {
        const used = process.cpuUsage(cpu);
        end[0] += ms;
        end[1] += (side.saverMs?.() ?? 0) - saverBefore;
        end[2] += (used.user + used.system) / 1000;
      }
      if (turn.n === mid) mark = await side.mark();
      if (side.system === 'LangGraph' && turn.n % every === 0) {
        growth.push({ n: turn.n, ms: writeMs, bytes: await side.bytes() });
      }
      if (turn.n % progressEvery === 0 && performance.now() - lastProgress > 5_000) {
        lastProgress = performance.now();
        log(`${label}: ${turn.n} written, ${formatMs(performance.now() - started)} so far`);
      }
    }
  } else {
    await side.writeCompacted!(turns.slice(0, mid));
    mark = await side.mark();
    await side.writeCompacted!(turns.slice(mid));
  }
  const bytes = history === 'turns' ? await side.bytes() : undefined;

  const latest = await bestOf(() => timed(() => side.readLatest()));
  const cold = await bestOf(async () => {
    const reader = await side.coldReader();
    try {
      return await timed(() => reader.read());
    } finally {
      await reader.close();
    }
  });
  const at = await bestOf(() => timed(() => side.readAt(mark)));
  const fork = await bestOf(() => timed(() => side.fork(mark)));
  const forked = await fork.value();

  const mismatches: Mismatch[] = [];
  const latestView = side.view(latest.value);
  for (const [what, view, want, samples] of [
    ['latest (writer)', latestView, expected.latest, expected.samples],
    ['latest (fresh client)', side.view(cold.value), expected.latest, expected.samples],
    ['state at middle turn', side.view(at.value), expected.middle, expected.midSamples],
    ['fork at middle turn', side.view(forked), expected.middle, expected.midSamples],
  ] as const) {
    const mismatch = compareViews(`${label}: ${what}`, view, want, samples);
    if (mismatch !== undefined) mismatches.push(mismatch);
  }
  log(
    `${label}${history === 'compacted' ? ' (history compacted)' : ''}: ` +
      `write ${history === 'turns' ? formatMs(writeMs) : 'not measured'}, ` +
      `${bytes === undefined ? '' : `${formatBytes(bytes)}, `}` +
      `latest ${formatMs(latest.ms)} / fresh ${formatMs(cold.ms)}, ` +
      `middle ${formatMs(at.ms)}, fork ${formatMs(fork.ms)}, ` +
      `content ${mismatches.length === 0 ? 'ok' : 'MISMATCH'}`,
  );
  if (history === 'turns') {
    const perTurn = ([ms, saver, cpu]: [number, number, number]) =>
      `${formatMs(ms / tenth)} (CPU ${formatMs(cpu / tenth)}${side.saverMs === undefined ? '' : `; a checkpointer call pending ${formatMs(saver / tenth)}`})`;
    log(
      `${label}: write per turn over turns ${spanLabel(tenth, turns.length)}: ${perTurn(ends.first)} / ${perTurn(ends.last)}`,
    );
  }
  const measured = (value: number): Figure => ({ value });
  return {
    result: {
      system: side.system,
      backend: side.backend,
      turns: turns.length,
      history,
      writeMs: history === 'turns' ? measured(writeMs) : undefined,
      bytes: bytes === undefined ? undefined : measured(bytes),
      latestMs: measured(latest.ms),
      coldLatestMs: measured(cold.ms),
      timeTravelMs: measured(at.ms),
      forkMs: measured(fork.ms),
      ...(history === 'turns'
        ? {
            perTurn: {
              span: tenth,
              first: { wallMs: ends.first[0], cpuMs: ends.first[2] },
              last: { wallMs: ends.last[0], cpuMs: ends.last[2] },
            },
          }
        : {}),
    },
    growth,
    mismatches,
    latest: latestView,
  };
}

/**
 * The turns at each end of a run whose write time per turn is compared: a tenth, at most 100.
 * The first tenth is the warm-up (the JIT, connections, first allocations); "first" is the tenth
 * after it (turns 101–200 of 1,000), "last" the last tenth (901–1,000).
 */
const spanOf = (turns: number) => Math.max(1, Math.min(100, Math.floor(turns / 10)));
const spanLabel = (span: number, total: number) =>
  `${fmtInt(span + 1)}–${fmtInt(2 * span)} / ${fmtInt(total - span + 1)}–${fmtInt(total)}`;
function endOf<T>(n: number, total: number, ends: { first: T; last: T }): T | undefined {
  const span = spanOf(total);
  if (n > span && n <= 2 * span) return ends.first;
  return n > total - span ? ends.last : undefined;
}

/**
 * LangGraph's own work per turn on this workload: the same graph and turns with a checkpointer
 * that stores nothing (peers/reference-saver.ts), only the write time per turn at both ends.
 */
async function measureFloor(turns: readonly Turn[]): Promise<SideResult> {
  const side = await openLangGraph({ backend: 'sqlite', location: '', referenceSaver: true });
  const span = spanOf(turns.length);
  const ends = { first: { wallMs: 0, cpuMs: 0 }, last: { wallMs: 0, cpuMs: 0 } };
  for (const turn of turns) {
    const start = performance.now();
    const cpu = process.cpuUsage();
    await side.writeTurn(turn);
    const end = endOf(turn.n, turns.length, ends);
    if (end === undefined) continue;
    const used = process.cpuUsage(cpu);
    end.wallMs += performance.now() - start;
    end.cpuMs += (used.user + used.system) / 1000;
  }
  await side.close();
  const perTurn = (t: { wallMs: number; cpuMs: number }) =>
    `${formatMs(t.wallMs / span)} (CPU ${formatMs(t.cpuMs / span)})`;
  log(
    `${NO_STORAGE} ${turns.length} turns: write per turn over turns ${spanLabel(span, turns.length)}: ${perTurn(ends.first)} / ${perTurn(ends.last)}`,
  );
  const none = undefined;
  return {
    system: NO_STORAGE,
    backend: 'sqlite',
    turns: turns.length,
    history: 'turns',
    writeMs: none,
    bytes: none,
    latestMs: none,
    coldLatestMs: none,
    timeTravelMs: none,
    forkMs: none,
    perTurn: { span, ...ends },
  };
}

/** Two WeftSaver threads (short and long) and two nothing-stored ones: see peers/flatness.ts. */
async function probeFlatness(backend: Backend, total: number): Promise<FlatnessResult> {
  log(`${ON_WEFT_SAVER}/${backend}: flatness probe, ${fmtInt(total)} turns (four processes)`);
  return withScratch(backend, 'flat-short', (short) =>
    withScratch(backend, 'flat-long', async (long) => {
      const writers = {
        shortSaver: childWriter('saver', backend, short.location, total),
        shortFloor: childWriter('floor', backend, '', total),
        longSaver: childWriter('saver', backend, long.location, total),
        longFloor: childWriter('floor', backend, '', total),
      };
      try {
        return await measureFlatness(writers, total, spanOf(total));
      } finally {
        for (const writer of Object.values(writers)) await writer.close();
      }
    }),
  );
}

async function withScratch<T>(
  backend: Backend,
  name: string,
  body: (scratch: Scratch) => Promise<T>,
): Promise<T> {
  const scratch = backend === 'sqlite' ? scratchSqlite(name) : await scratchPostgres();
  try {
    return await body(scratch);
  } finally {
    await scratch.drop();
  }
}

export async function runPeersBench(
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const options = parseOptions(argv);
  if (options.onlyStore) return runStoreColumn(options.storeItems);
  console.log(
    `\nPeers: Weft engine vs LangGraph checkpointers, same seeded conversation, sizes ${options.sizes.map((n) => fmtInt(n)).join(', ')} turns` +
      `; LangGraph durability: ${options.durability ?? 'its default (async: a checkpoint per step)'}`,
  );
  const pgReason = await postgresUnavailable();
  const backends: Backend[] = ['sqlite'];
  if (pgReason === undefined) backends.push('postgres');
  else log(`Postgres rows SKIPPED: ${pgReason} (set WEFT_BENCH_POSTGRES_URL)`);

  const limit = options.langgraphTurns;
  const all = generateWorkload(Math.max(options.sizes.at(-1)!, limit));
  const results: SideResult[] = [];
  const mismatches: Mismatch[] = [];
  const growth = new Map<Backend, GrowthSample[]>();
  const payloadPerTurn = new Map<number, number>();
  const sampleReport: string[] = [];
  const lastPeer = new Map<Backend, SideResult>();
  let readsScaled = false;

  const onWeftSaver = async (backend: Backend, turns: Turn[], expected: Expected) => {
    const onWeft = await withScratch(backend, 'weftsaver', async (s) => {
      const side = await openLangGraph({
        backend,
        location: s.location,
        durability: options.durability,
        weftSaver: true,
      });
      try {
        return await measureSide(side, turns, 'turns', expected);
      } finally {
        await side.close();
      }
    });
    results.push(onWeft.result);
    mismatches.push(...onWeft.mismatches);
    if (turns.length === flatnessSize)
      flatness.push([backend, await probeFlatness(backend, turns.length)]);
  };
  const floors: SideResult[] = [];
  const flatness: Array<[Backend, FlatnessResult]> = [];
  // The probe runs at the largest size written turn by turn on WeftSaver (at least 300 turns).
  const flatnessSize = options.sizes.filter((n) => n <= options.weftSaverTurns && n >= 300).at(-1);

  for (const size of options.sizes) {
    const turns = all.slice(0, size);
    if (size <= options.weftSaverTurns) floors.push(await measureFloor(turns));
    const mid = Math.floor(size / 2);
    payloadPerTurn.set(size, turns.reduce((sum, t) => sum + turnContentBytes(t), 0) / size);
    const expected = {
      latest: expectedView(turns),
      middle: expectedView(turns.slice(0, mid)),
      samples: sampleTurns(size),
      midSamples: sampleTurns(mid),
    };
    for (const backend of backends) {
      if (backend === 'postgres' && options.postgresSizes?.includes(size) === false) {
        log(`Postgres ${fmtInt(size)} turns SKIPPED: not in --postgres-turns`);
        continue;
      }
      if (options.onlyWeftSaver) {
        if (size <= options.weftSaverTurns) await onWeftSaver(backend, turns, expected);
        continue;
      }
      const weft = await withScratch(backend, 'weft', async (s) => {
        const side = await openWeft({ backend, location: s.location });
        try {
          return await measureSide(side, turns, 'turns', expected);
        } finally {
          await side.close();
        }
      });
      results.push(weft.result);
      mismatches.push(...weft.mismatches);

      const turnByTurn = options.langgraphFull || size <= limit;
      if (!turnByTurn && (growth.get(backend)?.at(-1)?.n ?? 0) < limit) {
        log(`LangGraph/${backend}: measuring its growth over ${limit} turns first`);
        const calibration = await withScratch(backend, 'langgraph', async (s) => {
          const side = await openLangGraph({
            backend,
            location: s.location,
            durability: options.durability,
          });
          try {
            const half = Math.floor(limit / 2);
            return await measureSide(side, all.slice(0, limit), 'turns', {
              latest: expectedView(all.slice(0, limit)),
              middle: expectedView(all.slice(0, half)),
              samples: sampleTurns(limit),
              midSamples: sampleTurns(half),
            });
          } finally {
            await side.close();
          }
        });
        growth.set(backend, calibration.growth);
        mismatches.push(...calibration.mismatches);
      }
      const previous = lastPeer.get(backend);
      const slowest =
        previous === undefined
          ? 0
          : Math.max(
              ...[
                previous.latestMs,
                previous.coldLatestMs,
                previous.timeTravelMs,
                previous.forkMs,
              ].map((f) => f?.value ?? 0),
            );
      let peer: Pick<RunOutcome, 'result' | 'growth' | 'mismatches'> & {
        latest?: ConversationView;
      };
      if (!turnByTurn && previous !== undefined && slowest > options.readCap) {
        // Reads and fork load the whole message list: linear in the turns. Past a minute-scale
        // read, scale the previous size's figures instead of spending many minutes per read.
        const scale = (f: Figure): Figure =>
          f === undefined
            ? undefined
            : { value: (f.value * size) / previous.turns, extrapolated: true };
        log(
          `LangGraph/${backend} ${size} turns: reads took up to ${formatMs(slowest)} at ${fmtInt(previous.turns)} turns;` +
            ' scaling them linearly instead of measuring',
        );
        peer = {
          result: {
            ...previous,
            turns: size,
            history: 'compacted',
            latestMs: scale(previous.latestMs),
            coldLatestMs: scale(previous.coldLatestMs),
            timeTravelMs: scale(previous.timeTravelMs),
            forkMs: scale(previous.forkMs),
          },
          growth: [],
          mismatches: [],
        };
        readsScaled = true;
      } else {
        peer = await withScratch(backend, 'langgraph', async (s) => {
          const side = await openLangGraph({
            backend,
            location: s.location,
            durability: options.durability,
          });
          try {
            return await measureSide(side, turns, turnByTurn ? 'turns' : 'compacted', expected);
          } finally {
            await side.close();
          }
        });
      }
      if (turnByTurn && peer.growth.length > 0) {
        const known = growth.get(backend);
        if (known === undefined || known.at(-1)!.n < size) growth.set(backend, peer.growth);
      }
      if (!turnByTurn) {
        const samples = growth.get(backend)!;
        const time = fitQuadratic(samples.map((g) => [g.n, g.ms]));
        const bytes = fitQuadratic(samples.map((g) => [g.n, g.bytes]));
        peer.result.writeMs = { value: time(size), extrapolated: true };
        peer.result.bytes = { value: bytes(size), extrapolated: true };
      }
      results.push(peer.result);
      lastPeer.set(backend, peer.result);
      mismatches.push(...peer.mismatches);

      if (size <= options.weftSaverTurns) {
        await onWeftSaver(backend, turns, expected);
      } else {
        log(`${ON_WEFT_SAVER}/${backend} ${fmtInt(size)} turns SKIPPED: above --weftsaver-turns`);
      }

      const peerLatest = peer.latest;
      if (peerLatest === undefined) {
        sampleReport.push(
          `${fmtInt(size)} turns ${backend}: LangGraph not read back at this size (figures scaled); Weft checked against the workload`,
        );
        continue;
      }
      const same = expected.samples.every(
        (n) =>
          JSON.stringify(turnMessagesOf(weft.latest, n)) ===
          JSON.stringify(turnMessagesOf(peerLatest, n)),
      );
      sampleReport.push(
        `${fmtInt(size)} turns ${backend}: turns ${expected.samples.join(', ')} ${same ? 'identical' : 'DIFFER'} on both sides`,
      );
      if (!same)
        mismatches.push({
          what: `${size} turns ${backend}`,
          detail: 'sample turns differ between Weft and LangGraph',
        });
    }
  }

  console.log(
    '\nWeft vs LangGraph (best of up to 3 rounds per read; ratios < 1: Weft smaller or faster)\n',
  );
  console.log(comparisonTable(results));
  console.log('\nDatabase bytes per turn as the conversation grows\n');
  console.log(growthTable(results, payloadPerTurn));
  console.log(
    '\nWrite time per turn at the start and at the end of each turn-by-turn run (both ends measured' +
      ' in the same run; CPU: the process, all its threads — not the Postgres server)\n',
  );
  console.log(perTurnTable([...results, ...floors]));
  if (flatness.length > 0) {
    console.log(
      `\nTarget "write time per turn flat", judged on WeftSaver's own CPU per turn (above` +
        ' the same turn on a saver storing nothing), early turns of a short conversation and late turns' +
        ` of a long one written side by side, median turn, last/first within ${FLAT_WITHIN}×` +
        " (peers/flatness.ts says why). LangGraph's own work grows with the conversation under any saver:",
    );
    for (const [backend, result] of flatness) console.log(`  ${flatnessLine(backend, result)}`);
  }
  const extrapolated = results.some((r) => r.writeMs?.extrapolated);
  if (extrapolated) {
    console.log(
      `\n≈ extrapolated: LangGraph wrote turn by turn only up to ${limit} turns (each turn stores the` +
        ` whole message list in ${options.durability === 'exit' ? 'one checkpoint' : 'three checkpoints'}, so bytes and write time grow with turns²); its write time and` +
        ` bytes at larger sizes come from a quadratic fit of that run's growth (${GROWTH_SAMPLES} samples), and its reads` +
        ' and fork there are measured on the same latest and middle states, written by two invokes' +
        ' (the first half of the turns, then the rest). Run with --langgraph-full to write every size turn by turn.',
    );
  }
  if (readsScaled) {
    console.log(
      `≈ scaled: where LangGraph's slowest read or fork at the previous size exceeded ${formatMs(options.readCap)},` +
        " its reads and fork at the next size are the previous size's figures scaled linearly with the turns (each reads" +
        ' the whole message list once), not measured.',
    );
  }
  for (const [backend, samples] of growth) {
    const last = samples.at(-1)!;
    const first = samples[0]!;
    const late = (last.bytes - samples.at(-2)!.bytes) / (last.n - samples.at(-2)!.n);
    const early = first.bytes / first.n;
    console.log(
      `LangGraph/${backend} measured growth: ${formatBytes(early)} per turn over the first ${first.n} turns, ` +
        `${formatBytes(late)} per turn by turn ${last.n}.`,
    );
  }
  console.log(`\nContent check (every read compared with the workload, message by message):`);
  for (const line of sampleReport) console.log(`  ${line}`);
  if (mismatches.length === 0) {
    console.log(
      '  every read taken (latest, fresh client, middle turn, fork) matches the workload on both sides',
    );
  } else {
    for (const m of mismatches) console.log(`  MISMATCH ${m.what}: ${m.detail}`);
    process.exitCode = 1;
  }
  if (!options.onlyWeftSaver) await runStoreColumn(options.storeItems);
}

const fmtInt = (n: number) => n.toLocaleString('en-US');
