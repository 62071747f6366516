/**
 * `weft/langgraph`: LangGraph agents on Weft. `new WeftSaver({ engine })` over an engine from
 * `openEngine(url)`; see docs/langgraph.md.
 */
export {
  type Approval,
  type ApprovalAnswer,
  getApproval,
  isApprovalAnswer,
  isApproved,
} from './approval-answer.js';
export { DIRECTORY_THREAD_ID, type DirectoryEntry } from './directory.js';
export { WeftSaverError } from './errors.js';
export { type Resume, WeftSaver, type WeftSaverOptions, weftThreadId } from './saver.js';
export {
  type ItemVersion,
  type Provenance,
  type PutOptions,
  WeftStore,
  type WeftStoreOptions,
} from './weft-store.js';
