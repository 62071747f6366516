export { type AppendCheckInput, checkAppend } from './append-check.js';
export {
  getEntryIssues,
  isRfc3339,
  isRfc3339Form,
  LOG_SCHEMA_VERSION,
  type LogEntry,
  type LogEvent,
  validateEntry,
} from './entry.js';
export { diffLogs, forkLog, type LogDiff } from './fork-diff.js';
export {
  assertJsonSafe,
  childPath,
  findJsonUnsafe,
  isJsonSafe,
  type JsonUnsafe,
} from './json-safety.js';
export { createEventChainMachine, type EventChainState, foldLog } from './reference.js';
export {
  type LogMachine,
  type ReplayOptions,
  type ReplayResult,
  replay,
  stampStateHashes,
  type VerifyMode,
  type VerifyReport,
  verifyLog,
} from './replay.js';
export {
  chainStateHash,
  chainStateHashText,
  entryDigest,
  GENESIS_STATE_HASH,
} from './state-hash.js';
