/** Read models: the rows a log entry projects to, and the store that writes them with it. */
export {
  ACTIVE_RUN_STATUSES,
  type DueRun,
  type DueRunQuery,
  type DueRunSource,
  findDueRuns,
  openDueRunSource,
  type RunKey,
} from './deadlines.js';
export type { EntryReads } from './log-reads.js';
export { mergeChanges } from './merge.js';
export {
  DEFAULT_TENANT,
  logEntryRow,
  projectEntry,
  projectEntrySteps,
  projectSharedState,
  runRow,
} from './project.js';
export {
  countExpiredThreads,
  countUnexpiringSince,
  type ExpiredCursor,
  type ExpiredThread,
  type ExpiredThreadQuery,
  findExpiredThreads,
} from './retention.js';
export type * from './rows.js';
export { countTenantThreads } from './select.js';
export {
  createThreadStore,
  type IdempotencyRecord,
  openThreadStore,
  openThreadStoreOn,
  type ReadModelDump,
  type RunLocation,
  type StoreWriterStats,
  type ThreadStore,
  type ThreadStoreOptions,
} from './thread-store.js';
export { drive, noPause, type Pause, SLICE_MS, timeSlices } from './time-slices.js';
