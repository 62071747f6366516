/**
 * The engine: Weft's one writer. Every command loads the thread, plans an event with the core,
 * commits it with its read models in one transaction, and publishes after commit.
 */
import { createCache } from '../store/cache.js';
import { migrate } from '../store/migrate/index.js';
import { createCheckpointCommands } from './checkpoint-commands.js';
import { createDeadlineCommands } from './deadlines.js';
import { createRuntime } from './engine.js';
import { createRetentionCommands } from './retention.js';
import { createRunCommands } from './run-commands.js';
import { runsAt } from './runs-at.js';
import { answeredAs, locateThread } from './tenancy.js';
import { createThreadCommands } from './thread-commands.js';
import type { Engine, EngineOptions } from './types.js';

export { CHECKPOINT_SIZE_FACTOR } from './checkpoint-commands.js';
export { DEFAULT_MAX_PAYLOAD_BYTES } from './checks.js';
export { type CarriesCommitted, COMMITTED, type CommittedViews } from './committed.js';
export {
  DEFAULT_DEADLINE_PAGE,
  type DeadlineScheduler,
  type DeadlineSchedulerOptions,
  MAX_DEADLINE_PAGE,
  startDeadlineScheduler,
} from './deadlines.js';
export {
  DEFAULT_MAX_ATTEMPTS,
  type ResolvedEngineOptions,
  resolveEngineOptions,
} from './options.js';
export { type ProjectedLog, projectLog } from './project-log.js';
export {
  DEFAULT_RETENTION_BATCH,
  MAX_RETENTION_BATCH,
  type RetentionSweeper,
  type RetentionSweeperOptions,
  type RetentionSweeperStats,
  startRetentionSweeper,
} from './retention.js';
export {
  canSee,
  createThreadTenants,
  DEFAULT_TENANT,
  KEY_SEPARATOR,
  publicThreadId,
  qualifiedKey,
  type ThreadTenants,
  threadKey,
  threadTenant,
} from './tenancy.js';
export {
  CACHE_ESTIMATE,
  DEFAULT_CACHE_BYTES,
  type StateOrigin,
  type ThreadCacheStats,
} from './thread-cache.js';
export type * from './types.js';

/** Opens an engine on a migrated database (`databaseUrl`) or a given thread store. */
export function createEngine(options: EngineOptions): Engine {
  const rt = createRuntime(options);
  const deadlines = createDeadlineCommands(rt);
  const retention = createRetentionCommands(rt);
  const close = () => rt.store.close();
  // Tenant views of this engine: cheap to make again, so a bounded memo.
  const scopes = createCache<Engine>({ maxEntries: 10_000 });
  const engineFor = (tenant: string | undefined): Engine => ({
    ...createThreadCommands(rt, tenant),
    ...createRunCommands(rt, tenant),
    ...createCheckpointCommands(rt, tenant),
    ...deadlines.commands,
    ...retention.commands,
    async getState(threadId: string) {
      const at = await locateThread(rt.tenants, threadId, tenant);
      return at.ok ? answeredAs(await rt.load(at.value.key, true), at.value) : at;
    },
    runsAt: (threadId: string, index: number) => runsAt(rt, tenant, threadId, index),
    tenant,
    forTenant,
    store: rt.store,
    tenants: rt.tenants,
    cacheStats: () => rt.cache.stats(),
    close,
  });
  function forTenant(tenant: string): Engine {
    let scoped = scopes.get(tenant);
    if (scoped === undefined) {
      scoped = engineFor(tenant);
      scopes.set(tenant, scoped);
    }
    return scoped;
  }
  return engineFor(undefined);
}

/**
 * For embedding Weft in a Node program: applies pending migrations to `databaseUrl` (SQLite
 * `file:…` or `postgres://…`), then opens an engine on it.
 */
export async function openEngine(
  databaseUrl: string,
  options: Omit<EngineOptions, 'databaseUrl' | 'store'> = {},
): Promise<Engine> {
  await migrate(databaseUrl);
  const engine = createEngine({ ...options, databaseUrl });
  try {
    await engine.store.ready(); // a missing or wrong encryption key fails here, at open
  } catch (error) {
    await engine.close();
    throw error;
  }
  return engine;
}
