/**
 * The engine: Weft's one writer. Every command loads the thread, plans an event with the core,
 * commits it with its read models in one transaction, and publishes after commit.
 */
import { migrate } from '../store/migrate/index.js';
import { createDeadlineCommands } from './deadlines.js';
import { createRuntime } from './engine.js';
import { createRunCommands } from './run-commands.js';
import { createThreadCommands } from './thread-commands.js';
import type { Engine, EngineOptions } from './types.js';

export { DEFAULT_MAX_PAYLOAD_BYTES } from './checks.js';
export {
  DEFAULT_DEADLINE_PAGE,
  type DeadlineScheduler,
  type DeadlineSchedulerOptions,
  MAX_DEADLINE_PAGE,
  startDeadlineScheduler,
} from './deadlines.js';
export { type ProjectedLog, projectLog } from './project-log.js';
export { createReads, type Reads } from './reads.js';
export type * from './types.js';

/** Opens an engine on a migrated database (`databaseUrl`) or a given thread store. */
export function createEngine(options: EngineOptions): Engine {
  const rt = createRuntime(options);
  const deadlines = createDeadlineCommands(rt, options);
  return {
    ...createThreadCommands(rt),
    ...createRunCommands(rt),
    ...deadlines.commands,
    getState: (threadId: string) => rt.load(threadId, true),
    store: rt.store,
    close: async () => {
      await deadlines.close();
      await rt.store.close();
    },
  };
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
