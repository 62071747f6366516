/**
 * `weft retention` and `weft gc`: what would be removed (a dry run, the default) and, with
 * `--apply`, removing it, on the database of `--database` or DATABASE_URL (migrated first).
 *
 * `retention` lists the live threads whose expiry has passed and, with --apply, deletes them as
 * the server's sweeper does (engine.deleteExpiredThreads: deleteThread's path, actor
 * `retention`, once even with servers sweeping the same database), batch by batch with a
 * progress line per batch. With REDIS_URL the deletions wake the subscribers of the servers on
 * that Redis (their subscriptions end with THREAD_DELETED). With WEFT_RETENTION_DAYS it also
 * reports the threads without an expiry that are older than that (the default applies to new
 * threads only).
 *
 * `gc` reports (and with --apply removes) the storage no thread needs (src/store/read-model/gc.ts).
 */
import { DEFAULT_TENANT, type RetentionSweep } from '../engine/index.js';
import type { ServerConfig } from '../server/config.js';
import { type EventedEngine, openDatabase, openEventedEngine } from '../server/root.js';
import { isMigrationError, migrate, parseDatabaseUrl } from '../store/migrate/index.js';
import { createPrisma, type WeftPrisma } from '../store/prisma/index.js';
import {
  GC_CATEGORIES,
  type GcCategory,
  gcApply,
  gcReport,
  gcRows,
} from '../store/read-model/gc.js';
import {
  countExpiredThreads,
  countUnexpiringSince,
  findExpiredThreads,
} from '../store/read-model/index.js';
import { intOption, type ParsedArgs, parseArgs, UsageError } from './args.js';
import { describeError, tenantOption } from './data-commands.js';
import { migrationExitCode } from './failures.js';
import { configOrExit } from './server-commands.js';

/** Expired threads a dry run lists (`--limit N` to change it). */
export const DEFAULT_RETENTION_LIST = 100;

/** The configuration, with `--database` in place of DATABASE_URL; a number: the exit code. */
async function configFor(command: string, args: ParsedArgs): Promise<ServerConfig | number> {
  const config = configOrExit(command);
  if (config === undefined) return 2;
  const database = args.options.get('database');
  if (database === true) throw new UsageError('--database needs a URL');
  if (database !== undefined) {
    try {
      parseDatabaseUrl(database);
    } catch (error) {
      throw new UsageError(`--database: ${(error as Error).message}`);
    }
  }
  const databaseUrl = database ?? config.databaseUrl;
  try {
    await migrate(databaseUrl);
  } catch (error) {
    if (isMigrationError(error)) {
      console.error(`weft ${command}: ${error.message}`);
      return migrationExitCode(error);
    }
    throw error;
  }
  return { ...config, databaseUrl };
}

const label = (threadId: string, tenant: string) =>
  tenant === DEFAULT_TENANT ? threadId : `${threadId} (tenant ${tenant})`;

/** A thread's id in its tenant, from its storage key. */
const idOf = (key: string) => key.split('\u001f')[0]!;

export async function runRetention(argv: string[]): Promise<number> {
  const args = parseArgs(argv, {
    flags: ['apply'],
    values: ['database', 'tenant', 'limit', 'batch'],
  });
  if (args.positionals.length > 0) throw new UsageError('retention takes no thread ids');
  const tenant = args.options.has('tenant') ? tenantOption(args) : undefined;
  const limit = intOption(args, 'limit') ?? DEFAULT_RETENTION_LIST;
  const batch = intOption(args, 'batch') ?? 100;
  if (batch < 1 || batch > 10_000) throw new UsageError('--batch must be from 1 to 10000');
  if (tenant !== undefined && args.options.has('apply')) {
    throw new UsageError('--apply deletes every expired thread: it takes no --tenant');
  }
  const config = await configFor('retention', args);
  if (typeof config === 'number') return config;
  // One client on the database either way: the report's, or the engine's that deletes.
  if (args.options.has('apply')) return applyRetention(config, batch);
  const weft = createPrisma(config.databaseUrl);
  try {
    return await reportRetention(weft, config, tenant, limit);
  } finally {
    await weft.prisma.$disconnect();
  }
}

async function reportRetention(
  weft: WeftPrisma,
  config: ServerConfig,
  tenant: string | undefined,
  limit: number,
): Promise<number> {
  const now = new Date();
  const total = await countExpiredThreads(weft, now, tenant);
  console.log(
    `weft retention: dry run at ${now.toISOString()}: nothing is deleted (--apply deletes)`,
  );
  const listed =
    limit === 0 ? [] : await findExpiredThreads(weft, { now, limit, tenantId: tenant });
  for (const t of listed) {
    console.log(
      `  ${label(idOf(t.threadId), t.tenantId)}: expired ${t.expiresAt.toISOString()}, ${t.logLength} entries`,
    );
  }
  const more = total > listed.length ? ` (${listed.length} listed; --limit N for more)` : '';
  console.log(
    `weft retention: ${total} expired ${total === 1 ? 'thread' : 'threads'} would be deleted${more}`,
  );
  const days = config.retention.days;
  if (days !== undefined) {
    const before = new Date(now.getTime() - days * 86_400_000);
    const old = await countUnexpiringSince(weft, before, tenant);
    if (old > 0) {
      console.log(
        `weft retention: ${old} ${old === 1 ? 'thread has' : 'threads have'} no expiresAt and ${old === 1 ? 'is' : 'are'} older than ` +
          `WEFT_RETENTION_DAYS=${days}; the default applies to new threads only: give them one with setThreadExpiry`,
      );
    }
  }
  return 0;
}

async function applyRetention(config: ServerConfig, batch: number): Promise<number> {
  const database = await openDatabase(config.databaseUrl, {
    migrated: true,
    store: {
      encryptionKey: config.encryptionKey,
      searchPlaintextIndex: config.searchPlaintextIndex,
    },
  });
  try {
    return await sweepExpired(
      await openEventedEngine(database, { redisUrl: config.redisUrl }),
      batch,
    );
  } finally {
    await database.close();
  }
}

/** Deletes every expired thread, batch by batch, with a progress line per batch. */
async function sweepExpired(opened: EventedEngine, batch: number): Promise<number> {
  let deleted = 0;
  let skipped = 0;
  let failed = 0;
  try {
    let after: RetentionSweep['next'];
    do {
      const result = await opened.engine.deleteExpiredThreads({ limit: batch, after });
      if (!result.ok) {
        console.error(`weft retention: ${describeError(result.error)}`);
        return 1;
      }
      const sweep = result.value;
      for (const d of sweep.deleted) {
        console.log(
          `weft retention: deleted ${label(idOf(d.threadId), d.tenantId)} (expired ${d.expiresAt}, ${d.logLength} entries, state hash ${d.stateHash})`,
        );
      }
      for (const f of sweep.failed) {
        console.error(`weft retention: thread ${f.threadId}: ${describeError(f.error)}`);
      }
      deleted += sweep.deleted.length;
      skipped += sweep.skipped.length;
      failed += sweep.failed.length;
      console.error(
        `weft retention: ${deleted} deleted so far` +
          (skipped > 0 ? `, ${skipped} taken by another process` : '') +
          (failed > 0 ? `, ${failed} failed` : ''),
      );
      after = sweep.next;
    } while (after !== undefined);
  } finally {
    await opened.close();
  }
  console.log(
    `weft retention: deleted ${deleted} expired ${deleted === 1 ? 'thread' : 'threads'}` +
      (skipped > 0 ? ` (${skipped} deleted meanwhile by another process or moved)` : '') +
      (failed > 0 ? `; ${failed} failed` : ''),
  );
  return failed === 0 ? 0 : 1;
}

const describeTables = (tables: Record<string, number>) =>
  Object.entries(tables)
    .map(([table, n]) => `${n} ${table}`)
    .join(', ');

export async function runGc(argv: string[]): Promise<number> {
  const args = parseArgs(argv, { flags: ['apply'], values: ['database'] });
  if (args.positionals.length > 0) throw new UsageError('gc takes no arguments but options');
  const config = await configFor('gc', args);
  if (typeof config === 'number') return config;
  const weft = createPrisma(config.databaseUrl);
  try {
    const apply = args.options.has('apply');
    const report = apply ? await gcApply(weft) : await gcReport(weft);
    console.log(
      apply
        ? 'weft gc: removed what no thread needs:'
        : 'weft gc: dry run: nothing is removed (--apply removes):',
    );
    for (const category of Object.keys(GC_CATEGORIES) as GcCategory[]) {
      const rows = describeTables(report[category]);
      console.log(`  ${GC_CATEGORIES[category]}: ${rows === '' ? 'none' : rows}`);
    }
    const total = gcRows(report);
    console.log(
      `weft gc: ${total} ${total === 1 ? 'row' : 'rows'} ${apply ? 'removed' : 'would be removed'}`,
    );
    if (apply) {
      const left = gcRows(await gcReport(weft));
      if (left > 0) {
        console.error(
          `weft gc: ${left} rows are still unneeded (written meanwhile?): run it again`,
        );
        return 1;
      }
    }
    return 0;
  } finally {
    await weft.prisma.$disconnect();
  }
}
