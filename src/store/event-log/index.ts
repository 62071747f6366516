export { createLogStore, type LogStoreOptions, toRecordedAt } from './log-store.js';
export { createMemoryEventLogStore } from './memory.js';
export type { AppendInput, EventLogStore, ForkInput, ReadOptions } from './types.js';
