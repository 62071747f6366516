/**
 * `npm run bench -- query-layer`: the candidates for one typed query layer, typed from the Prisma
 * schema, against today's store path, on SQLite and on Postgres (when WEFT_BENCH_POSTGRES_URL,
 * default postgres://postgres@127.0.0.1:5432/test, answers; a fresh database, dropped at the
 * end). Every figure is a median over interleaved rounds, against today's path measured in the
 * same rounds (the variants take turns within each round, in a fresh order each round), so a
 * load change on the shared machine hits every variant alike; see docs/query-layer.md.
 *
 * 1. The hot write: one transaction writing a 1,000-node append's rows (log_entry, node,
 *    node_parent, as the store writes them) — today (sql.ts statements run by the SQLite writer
 *    thread / a Prisma interactive transaction) vs Kysely on its own driver, Kysely compiled and
 *    run by today's runner, the generated Kysely types with a typed multi-row helper on today's
 *    runner, Kysely through Prisma (prisma-extension-kysely), Prisma TypedSQL, and TypedSQL's
 *    set-valued statements (json_each / unnest) on today's runner; plus the main-thread cost of
 *    building the statements each way.
 * 2. The hot reads on a 100,000-node thread: a 100-node page by sequence, and a node by
 *    (thread, id) — today (select.ts on the direct reader) vs the same layers (Kysely compiled
 *    per call and once per query shape) and the Prisma ORM.
 *
 * Options: `--quick` (smaller: a smoke check), `--backends=sqlite,postgres`; WEFT_BENCH_QLAYER_
 * ROUNDS sets the write rounds.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createPostgresWeft, createSqliteWeft } from '../src/store/prisma/index.js';
import { openSqliteWriteConnection } from '../src/store/read-model/sqlite-writer.js';
import type { Provider } from '../src/store/tables/index.js';
import { fmt, percentile, printTable, type Row } from './harness.js';
import {
  kyselyDriver,
  prismaKysely,
  type SqliteDB,
  typedSqlPrisma,
} from './query-layer/clients.js';
import {
  type AppendRows,
  appendRows,
  type BenchDb,
  createThreads,
  log,
  openBenchDb,
  POSTGRES_URL,
  postgresProblem,
  templateAppend,
} from './query-layer/fixture.js';
import {
  kyselyCompiledReads,
  kyselyDriverReads,
  kyselyShapeReads,
  PAGE,
  prismaKyselyReads,
  prismaOrmReads,
  type ReadVariant,
  todayReads,
  typedSqlReads,
} from './query-layer/reads.js';
import {
  kyselyCompiledWrite,
  kyselyDriverWrite,
  kyselyTypedRowsWrite,
  postgresRunner,
  prismaKyselyWrite,
  setValuedWrite,
  statementBuildMs,
  todayWrite,
  typedSqlWrite,
  type WriteVariant,
} from './query-layer/writes.js';

interface Sizes {
  readThreadAppends: number;
  writeRounds: number;
  warmup: number;
  readRounds: number;
  readOps: number;
}

const sizesFor = (quick: boolean): Sizes => ({
  readThreadAppends: quick ? 10 : 100,
  writeRounds: Number(process.env.WEFT_BENCH_QLAYER_ROUNDS ?? (quick ? 3 : 30)),
  warmup: quick ? 1 : 2,
  readRounds: quick ? 2 : 7,
  readOps: quick ? 20 : 100,
});

const median = (values: number[]) => percentile(values, 50);

/** A deterministic pseudo-random sequence in [0, 1). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/**
 * The variants in a fresh order for each round (a seeded shuffle): a fixed cyclic order would
 * always put the same variant after the one that leaves the most garbage to collect.
 */
function shuffled<T>(items: readonly T[], round: number): T[] {
  const out = [...items];
  const rand = lcg(round + 101);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Each variant's write times (ms) over the measured rounds, and per round. */
async function measureWrites(variants: WriteVariant[], template: AppendRows, sizes: Sizes) {
  const ms = new Map(variants.map((v) => [v.name, [] as number[]]));
  const appended = new Map(variants.map((v) => [v.name, 0]));
  for (let round = 0; round < sizes.warmup + sizes.writeRounds; round++) {
    for (const v of shuffled(variants, round)) {
      const k = appended.get(v.name)! + 1;
      appended.set(v.name, k);
      const rows = appendRows(template, v.threadId, k);
      const start = performance.now();
      await v.write(rows);
      const took = performance.now() - start;
      if (round >= sizes.warmup) ms.get(v.name)!.push(took);
    }
    if (round >= sizes.warmup) {
      const line = variants.map((v) => `${fmt(ms.get(v.name)!.at(-1)!, 1)}`).join(' / ');
      log(`write round ${round - sizes.warmup + 1}/${sizes.writeRounds}: ${line} ms`);
    }
  }
  return { ms, appended };
}

/** Each variant's read latencies (ms), pages and by-id lookups, over interleaved rounds. */
async function measureReads(
  variants: ReadVariant[],
  threadId: string,
  nodes: number,
  ids: (sequence: number) => string,
  sizes: Sizes,
) {
  const pages = new Map(variants.map((v) => [v.name, [] as number[]]));
  const byIds = new Map(variants.map((v) => [v.name, [] as number[]]));
  for (let round = 0; round < 1 + sizes.readRounds; round++) {
    const rand = lcg(round + 1);
    const afters = Array.from({ length: sizes.readOps }, () => Math.floor(rand() * (nodes - PAGE)));
    const sequences = Array.from({ length: sizes.readOps }, () => 1 + Math.floor(rand() * nodes));
    for (const v of shuffled(variants, round)) {
      for (const after of afters) {
        const start = performance.now();
        await v.page(threadId, after);
        if (round > 0) pages.get(v.name)!.push(performance.now() - start);
      }
      for (const sequence of sequences) {
        const start = performance.now();
        await v.byId(threadId, ids(sequence));
        if (round > 0) byIds.get(v.name)!.push(performance.now() - start);
      }
    }
  }
  return { pages, byIds };
}

/** The same page and node from every variant, or a note naming the one that differs. */
async function checkReadsAgree(variants: ReadVariant[], threadId: string, id: string) {
  const shape = async (v: ReadVariant) => {
    const page = await v.page(threadId, 500);
    const one = await v.byId(threadId, id);
    return JSON.stringify(
      [...page, one].map((r) => [
        r?.id,
        r?.sequence,
        r?.payload.length,
        r?.isFrontier,
        r?.createdAt.toISOString(),
      ]),
    );
  };
  const expected = await shape(variants[0]!);
  const notes: string[] = [];
  for (const v of variants.slice(1)) {
    if ((await shape(v)) !== expected) notes.push(`${v.name} reads rows unlike today's`);
  }
  return notes;
}

const ratioRow = (name: string, ms: number[], baseline: number[], unit: string): Row => {
  const ratio = median(baseline) / median(ms);
  return {
    measure: name,
    value: `${fmt(median(ms), 2)} ms (${unit}), ${fmt(ratio * 100, 0)}% of today's speed`,
    target: '',
    verdict: '',
  };
};

interface Opened {
  writes: WriteVariant[];
  reads: ReadVariant[];
  readThread: string;
  /** Writes `appends` appends into the read thread through today's path. */
  fillReadThread(template: AppendRows, appends: number): Promise<void>;
  close(): Promise<void>;
}

/** Every variant's clients on the bench database, and one thread per write variant. */
async function openVariants(db: BenchDb): Promise<Opened> {
  const p = db.provider;
  const target = p === 'sqlite' ? db.path : db.url;
  const weft = p === 'sqlite' ? createSqliteWeft(db.path) : createPostgresWeft(db.url);
  const runner = p === 'sqlite' ? openSqliteWriteConnection(db.path) : postgresRunner(weft.prisma);
  const kysely = kyselyDriver<SqliteDB>(p, target);
  const prisma = await typedSqlPrisma(p, target);
  const viaPrisma = prismaKysely<SqliteDB>(p, prisma);
  const writers: Array<[string, (a: AppendRows) => Promise<void>]> = [
    [`today: sql.ts → ${p === 'sqlite' ? 'writer thread' : 'Prisma tx'}`, todayWrite(p, runner)],
    ['Kysely, own driver', kyselyDriverWrite(p, kysely)],
    [
      `Kysely compiled → today's ${p === 'sqlite' ? 'writer thread' : 'Prisma tx'}`,
      kyselyCompiledWrite(p, runner),
    ],
    [
      `Kysely types, typed multi-row helper → today's ${p === 'sqlite' ? 'writer thread' : 'Prisma tx'}`,
      kyselyTypedRowsWrite(p, runner),
    ],
    ['Kysely via Prisma (extension)', prismaKyselyWrite(p, viaPrisma)],
    ['Prisma TypedSQL', typedSqlWrite(p, prisma)],
    [
      `set-valued statements (${p === 'sqlite' ? 'json_each' : 'unnest'}) → today's ${p === 'sqlite' ? 'writer thread' : 'Prisma tx'}`,
      setValuedWrite(p, runner),
    ],
  ];
  const writes = writers.map(([name, write], i) => ({
    name,
    threadId: `qlayer-write-${i}`,
    write,
  }));
  const readThread = 'qlayer-read';
  await createThreads(p, runner, [...writes.map((w) => w.threadId), readThread]);
  return {
    writes,
    readThread,
    async fillReadThread(template, appends) {
      const write = todayWrite(p, runner);
      for (let k = 1; k <= appends; k++) await write(appendRows(template, readThread, k));
    },
    reads: [
      todayReads(weft),
      kyselyDriverReads(p, kysely),
      kyselyCompiledReads(p, weft),
      kyselyShapeReads(p, weft),
      prismaKyselyReads(p, viaPrisma),
      typedSqlReads(p, prisma),
      prismaOrmReads(prisma),
    ],
    async close() {
      await runner.close();
      await kysely.destroy();
      await prisma.$disconnect();
      await weft.prisma.$disconnect();
    },
  };
}

async function benchBackend(db: BenchDb, sizes: Sizes): Promise<{ rows: Row[]; notes: string[] }> {
  const template = await templateAppend(db);
  const opened = await openVariants(db);
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    log(`${db.provider}: writing the read thread (${sizes.readThreadAppends} appends)`);
    await opened.fillReadThread(template, sizes.readThreadAppends);
    const nodes = sizes.readThreadAppends * template.nodes.length;
    const idOf = (sequence: number) => {
      const k = Math.ceil(sequence / template.nodes.length);
      return `${template.nodes[(sequence - 1) % template.nodes.length]!.id}-${k}`;
    };
    notes.push(...(await checkReadsAgree(opened.reads, opened.readThread, idOf(777))));
    log(`${db.provider}: reads, ${sizes.readRounds} rounds × ${sizes.readOps} of each`);
    const reads = await measureReads(opened.reads, opened.readThread, nodes, idOf, sizes);
    const [base, ...others] = opened.reads;
    const label = `${fmt(nodes)}-node thread`;
    for (const [what, by] of [
      [`${PAGE}-node page by sequence`, reads.pages],
      ['node by (thread, id)', reads.byIds],
    ] as const) {
      const baseline = by.get(base!.name)!;
      rows.push({
        measure: `read ${what}, ${label}: ${base!.name}`,
        value: `${fmt(median(baseline), 2)} ms (median)`,
        target: 'baseline',
        verdict: '',
      });
      for (const v of others) {
        rows.push(ratioRow(`read ${what}: ${v.name}`, by.get(v.name)!, baseline, 'median'));
      }
    }
    for (const b of statementBuildMs(db.provider, appendRows(template, 'qlayer-build', 1))) {
      rows.push({
        measure: `build one append's statements (no database): ${b.name}`,
        value: `${fmt(b.ms, 2)} ms (median)`,
        target: '',
        verdict: '',
      });
    }
    log(`${db.provider}: writes, ${sizes.writeRounds} rounds of 1,000-node appends`);
    const writes = await measureWrites(opened.writes, template, sizes);
    const baseline = writes.ms.get(opened.writes[0]!.name)!;
    rows.push({
      measure: `write 1,000-node append: ${opened.writes[0]!.name}`,
      value: `${fmt(median(baseline), 1)} ms (${fmt((template.nodes.length * 1000) / median(baseline))} nodes/s)`,
      target: 'baseline',
      verdict: '',
    });
    for (const v of opened.writes.slice(1)) {
      const ms = writes.ms.get(v.name)!;
      // Paired: each round's ratio to today's write of the same round, then their median.
      const paired = ms.map((m, r) => baseline[r]! / m);
      const ratio = median(paired);
      rows.push({
        measure: `write: ${v.name}`,
        value: `${fmt(median(ms), 1)} ms (median); ${fmt(ratio * 100, 0)}% of today's speed (paired rounds, quartiles ${fmt(percentile(paired, 25) * 100, 0)}–${fmt(percentile(paired, 75) * 100, 0)}%)`,
        target: '≥ 100%',
        verdict: ratio >= 1 ? 'ok' : 'MISSED',
      });
    }
  } finally {
    await opened.close();
  }
  return { rows, notes };
}

export async function runQueryLayerBench(
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const generated = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('./query-layer/generate.mjs', import.meta.url))],
    { stdio: 'inherit' },
  );
  if (generated.status !== 0) throw new Error('bench/query-layer/generate.mjs failed');
  const quick = argv.includes('--quick');
  const sizes = sizesFor(quick);
  const chosen = argv.find((a) => a.startsWith('--backends='))?.slice('--backends='.length);
  const backends = (chosen?.split(',') ?? ['sqlite', 'postgres']) as Provider[];
  const root = mkdtempSync(join(tmpdir(), 'weft-bench-qlayer-'));
  try {
    for (const provider of backends) {
      if (provider === 'postgres') {
        const problem = await postgresProblem();
        if (problem !== undefined) {
          printTable(
            `Query layer on postgres: SKIPPED (cannot reach ${POSTGRES_URL}: ${problem})`,
            [],
          );
          continue;
        }
      }
      const db = await openBenchDb(provider, root);
      try {
        const { rows, notes } = await benchBackend(db, sizes);
        printTable(
          `Query layer on ${provider}${quick ? ' (QUICK sizes)' : ''}: medians of interleaved rounds`,
          rows,
        );
        for (const note of notes) console.log(`  NOTE: ${note}`);
      } finally {
        await db.drop();
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
