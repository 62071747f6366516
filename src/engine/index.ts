/**
 * The engine: Weft's one writer. Every command loads the thread, plans an event with the core,
 * commits it with its read models in one transaction, and publishes after commit.
 */
import { createRuntime } from './engine.js';
import { createRunCommands } from './run-commands.js';
import { createThreadCommands } from './thread-commands.js';
import type { Engine, EngineOptions } from './types.js';

export { DEFAULT_MAX_PAYLOAD_BYTES } from './checks.js';
export { type ProjectedLog, projectLog } from './project-log.js';
export type * from './types.js';

/** Opens an engine on a migrated database (`databaseUrl`) or a given thread store. */
export function createEngine(options: EngineOptions): Engine {
  const rt = createRuntime(options);
  return {
    ...createThreadCommands(rt),
    ...createRunCommands(rt),
    getState: (threadId: string) => rt.load(threadId, true),
    store: rt.store,
    close: () => rt.store.close(),
  };
}
