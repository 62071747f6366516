/** The thread: one log, one causal graph, its runs — as a pure state machine over log entries. */
export {
  applyThreadEntry,
  createThreadMachine,
  getNodeMeta,
  type ThreadEffect,
  type ThreadMachineOptions,
} from './apply.js';
export {
  type Committed,
  commitEvent,
  commitEventSteps,
  type EntryStamp,
  THREAD_MACHINE_ID,
  THREAD_MACHINE_VERSION,
} from './commit.js';
export * from './events.js';
export {
  type DispatchInput,
  dueDeadlines,
  type NodeInput,
  type PreparedImport,
  planAppendNodes,
  planCancelRun,
  planCreateThread,
  planDispatch,
  planImportState,
  planImportWorkflowState,
  planRecordUsage,
  planRemember,
  planResolveApproval,
  planStartRun,
  prepareImportState,
  type RememberInput,
  type ResolveApprovalInput,
  type StartRunInput,
  type ThreadSettings,
} from './plan.js';
export {
  type CheckpointInput,
  type CheckpointWritesInput,
  planSaveCheckpoint,
  planSaveCheckpointWrites,
} from './plan-checkpoints.js';
export {
  checkRedactions,
  type RedactedNodeReport,
  redactAnswerText,
  redactEntryText,
  redactionDigest,
} from './redaction.js';
export {
  createEmptyThreadState,
  type NodeMeta,
  type ThreadConfig,
  type ThreadSpend,
  type ThreadState,
  withPayloadSalt,
  ZERO_SPEND,
} from './state.js';
