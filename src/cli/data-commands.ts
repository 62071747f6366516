/**
 * `weft export | import | verify | replay`: work directly on the database named by DATABASE_URL
 * (migrated first), through the engine. Thread ids are per tenant (src/engine/tenancy.ts): a
 * thread named on the command line is looked up in `--tenant` (default: default).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { TENANT_NAME } from '../auth/index.js';
import type { WeftError } from '../core/errors.js';
import { nodeCount } from '../core/graph/index.js';
import {
  createEngine,
  DEFAULT_TENANT,
  type Engine,
  projectLog,
  publicThreadId,
  threadKey,
} from '../engine/index.js';
import { importThreadLog } from '../engine/transfer.js';
import { openDatabase } from '../server/root.js';
import { isMigrationError, migrate } from '../store/migrate/index.js';
import type { WeftPrisma } from '../store/prisma/index.js';
import { createReadQueries } from '../store/read-model/queries.js';
import { intOption, type ParsedArgs, parseArgs, UsageError } from './args.js';
import { migrationExitCode } from './failures.js';
import { configOrExit } from './server-commands.js';

/** The header line of an export file; every following line is one stored entry, verbatim. */
export const EXPORT_FORMAT = 'weft.thread-log';

export interface Opened {
  engine: Engine;
  prisma: WeftPrisma;
  close(): Promise<void>;
}

async function open(command: string): Promise<Opened | number> {
  const config = configOrExit(command);
  if (config === undefined) return 2;
  try {
    await migrate(config.databaseUrl);
  } catch (error) {
    if (isMigrationError(error)) {
      console.error(`weft ${command}: ${error.message}`);
      return migrationExitCode(error);
    }
    throw error;
  }
  // One client on the database: the engine's store and the read queries share it.
  const database = await openDatabase(config.databaseUrl, {
    migrated: true,
    store: {
      encryptionKey: config.encryptionKey,
      searchPlaintextIndex: config.searchPlaintextIndex,
    },
  });
  const engine = createEngine({ store: database.store });
  return {
    engine,
    prisma: database.weft,
    async close() {
      await engine.close();
      await database.close();
    },
  };
}

export async function withDatabase(
  command: string,
  run: (db: Opened) => Promise<number>,
): Promise<number> {
  const db = await open(command);
  if (typeof db === 'number') return db;
  try {
    return await run(db);
  } finally {
    await db.close();
  }
}

/** The tenant `--tenant` names (default: default), checked. */
export function tenantOption(args: ParsedArgs): string {
  const tenant = args.options.get('tenant');
  if (tenant === undefined) return DEFAULT_TENANT;
  if (tenant === true || !TENANT_NAME.test(tenant)) {
    throw new UsageError(
      `--tenant ${String(tenant)} is not a tenant name (1 to 64 letters, digits, . _ -)`,
    );
  }
  return tenant;
}

/** What a command says when `threadId` names no thread of `tenant`. */
export const noSuchThread = (threadId: string, tenant: string) =>
  `thread ${threadId} does not exist in tenant ${tenant}` +
  (tenant === DEFAULT_TENANT ? " (another tenant's thread: pass --tenant)" : '');

export const describeError = (e: WeftError) => {
  const where = 'nodeId' in e && e.nodeId !== undefined ? ` (node ${e.nodeId})` : '';
  const issues =
    e.code === 'VALIDATION_FAILED' && e.issues.length > 1
      ? `\n${e.issues.map((i) => `  ${i.path}: ${i.message}`).join('\n')}`
      : '';
  return `${e.code}: ${e.message}${where}${issues}`;
};

export function runExport(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['at', 'out', 'tenant'] });
  const [threadId, extra] = args.positionals;
  if (threadId === undefined || extra !== undefined) {
    throw new UsageError('export takes one thread id');
  }
  const at = intOption(args, 'at');
  const out = args.options.get('out');
  const tenant = tenantOption(args);
  return withDatabase('export', async ({ engine }) => {
    const key = await threadKey(engine.tenants, threadId, tenant);
    const length = key === undefined ? undefined : await engine.store.getLogLength(key);
    if (key === undefined || length === undefined) {
      console.error(`weft export: ${noSuchThread(threadId, tenant)}`);
      return 1;
    }
    if (at !== undefined && (at < 1 || at > length)) {
      console.error(`weft export: --at must be from 1 to ${length} (the thread's log length)`);
      return 2;
    }
    const texts = await engine.store.readEntryTexts(key, 0, at ?? length);
    const header = JSON.stringify({
      format: EXPORT_FORMAT,
      version: 1,
      threadId,
      entries: texts.length,
    });
    const body = `${header}\n${texts.map((t) => `${t}\n`).join('')}`;
    if (typeof out === 'string') {
      await new Promise<void>((resolve, reject) => {
        const stream = createWriteStream(out);
        stream.on('error', reject);
        stream.end(body, () => resolve());
      });
      console.error(`weft export: wrote ${texts.length} entries of ${threadId} to ${out}`);
    } else {
      process.stdout.write(body);
    }
    return 0;
  });
}

async function readExport(file: string): Promise<{ threadId: string; entries: unknown[] }> {
  const input = file === '-' ? process.stdin : createReadStream(file);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let header: { format?: unknown; version?: unknown; threadId?: unknown; entries?: unknown };
  const entries: unknown[] = [];
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new UsageError(`${file} line ${n} is not JSON: is this a 'weft export' file?`);
    }
    if (n === 1) header = value as typeof header;
    else entries.push(value);
  }
  header ??= {};
  if (
    header.format !== EXPORT_FORMAT ||
    header.version !== 1 ||
    typeof header.threadId !== 'string'
  ) {
    throw new UsageError(
      `${file} does not start with a '${EXPORT_FORMAT}' v1 header: is this a 'weft export' file?`,
    );
  }
  if (header.entries !== entries.length) {
    throw new UsageError(
      `${file} announces ${String(header.entries)} entries but holds ${entries.length}: the file is truncated`,
    );
  }
  return { threadId: header.threadId, entries };
}

export async function runImport(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { values: ['thread-id', 'tenant'] });
  const [file, extra] = args.positionals;
  if (file === undefined || extra !== undefined) {
    throw new UsageError("import takes one file ('-' for stdin)");
  }
  let parsed: Awaited<ReturnType<typeof readExport>>;
  try {
    parsed = await readExport(file);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') {
      console.error(`weft import: ${file} does not exist`);
      return 1;
    }
    if (error instanceof UsageError) {
      console.error(`weft import: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const threadId = (args.options.get('thread-id') as string | undefined) ?? parsed.threadId;
  const tenant = tenantOption(args);
  return withDatabase('import', async ({ engine }) => {
    const imported = await importThreadLog(engine, threadId, parsed.entries, tenant);
    if (!imported.ok) {
      console.error(`weft import: refused, nothing written. ${describeError(imported.error)}`);
      return 1;
    }
    console.log(
      `weft import: thread ${threadId} created with ${imported.value.logLength} entries (state hash ${imported.value.stateHash})${tenant === DEFAULT_TENANT ? '' : ` in tenant ${tenant}`}`,
    );
    return 0;
  });
}

/** A thread a command works on: where it is stored and how its lines name it. */
interface Target {
  /** The storage key; undefined when the thread named on the command line does not exist. */
  key: string | undefined;
  /** The thread's id in its tenant. */
  id: string;
  tenant: string;
  /** How output lines name it: its id, and its tenant unless that is the default. */
  label: string;
}

function target(key: string | undefined, id: string, tenant: string): Target {
  return { key, id, tenant, label: tenant === DEFAULT_TENANT ? id : `${id} (tenant ${tenant})` };
}

/**
 * The threads named on the command line (ids of `--tenant`, default: default), or with none
 * named every thread: of `--tenant` when given, else of every tenant.
 */
async function targets(db: Opened, args: ParsedArgs): Promise<Target[]> {
  const tenant = tenantOption(args);
  if (args.positionals.length > 0) {
    return Promise.all(
      args.positionals.map(async (id) =>
        target(await threadKey(db.engine.tenants, id, tenant), id, tenant),
      ),
    );
  }
  const queries = createReadQueries(db.prisma, false, db.engine.store.codec);
  const found: Target[] = [];
  let after: { at: Date; id: string } | undefined;
  const tenantId = args.options.has('tenant') ? tenant : undefined;
  for (;;) {
    const page = await queries.listThreads({ tenantId, take: 500, after });
    found.push(
      ...page.map((t) => target(t.id, publicThreadId(t.id), t.tenantId ?? DEFAULT_TENANT)),
    );
    const last = page.at(-1);
    if (last === undefined || page.length < 500) return found;
    after = { at: last.createdAt, id: last.id };
  }
}

export function runVerify(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['strict', 'no-strict', 'all'], values: ['tenant'] });
  if (args.options.has('strict') && args.options.has('no-strict')) {
    throw new UsageError('--strict and --no-strict exclude each other');
  }
  const strict = !args.options.has('no-strict');
  return withDatabase('verify', async (db) => {
    let failed = 0;
    const threads = await targets(db, args);
    for (const { key, id: threadId, tenant, label: id } of threads) {
      if (key === undefined) {
        console.error(`weft verify: ${noSuchThread(threadId, tenant)}`);
        failed++;
        continue;
      }
      const report = await db.engine.verify(key, { strict });
      if (!report.ok) {
        // The system engine names the thread by its storage key; the line names it by id.
        const why = describeError(report.error).split(key).join(threadId);
        console.error(`weft verify: thread ${id}: ${why}`);
        failed++;
      } else if (!report.value.ok) {
        const r = report.value;
        console.error(
          `weft verify: thread ${id}: TAMPERED at entry ${r.firstBadIndex}` +
            `${r.entryId === undefined ? '' : ` (id ${r.entryId})`}: ${r.message ?? 'hash mismatch'}` +
            ` — ${r.checkedEntries} entries before it are good`,
        );
        failed++;
      } else {
        console.log(
          `weft verify: thread ${id}: ok, ${r(report.value.checkedEntries)} verified${strict ? ' (strict)' : ''}`,
        );
      }
    }
    if (threads.length === 0) console.log('weft verify: no threads');
    return failed === 0 ? 0 : 1;
  });
}

const r = (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}`;

export function runReplay(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['all'], values: ['tenant'] });
  return withDatabase('replay', async (db) => {
    let failed = 0;
    const queries = createReadQueries(db.prisma, false, db.engine.store.codec);
    const threads = await targets(db, args);
    for (const { key, id: threadId, tenant, label: id } of threads) {
      const entries = key === undefined ? [] : await db.engine.store.readEntries(key);
      const [row] = key === undefined ? [] : await queries.threads([key]);
      if (key === undefined || entries.length === 0 || row === undefined) {
        console.error(`weft replay: ${noSuchThread(threadId, tenant)}`);
        failed++;
        continue;
      }
      const replayed = projectLog(key, entries);
      if (!replayed.ok) {
        console.error(`weft replay: thread ${id}: ${describeError(replayed.error)}`);
        failed++;
        continue;
      }
      const state = replayed.value.state;
      const stored = {
        logLength: row.logLength,
        stateHash: row.stateHash,
        nodes: await queries.nodeCount(key),
      };
      const rebuilt = {
        logLength: state.length,
        stateHash: state.stateHash,
        nodes: nodeCount(state.graph),
      };
      const differs = (Object.keys(stored) as Array<keyof typeof stored>).filter(
        (k) => stored[k] !== rebuilt[k],
      );
      if (differs.length > 0) {
        console.error(
          `weft replay: thread ${id}: read models differ from the replayed log in ${differs
            .map((k) => `${k} (stored ${stored[k]}, replayed ${rebuilt[k]})`)
            .join(', ')}`,
        );
        failed++;
      } else {
        console.log(
          `weft replay: thread ${id}: ${r(state.length)}, ${rebuilt.nodes} nodes, ${state.runOrder.length} runs; state hash ${state.stateHash} matches`,
        );
      }
    }
    if (threads.length === 0) console.log('weft replay: no threads');
    return failed === 0 ? 0 : 1;
  });
}
