/**
 * Realtime events: the hub the engine publishes to after each commit (in-process, or fanned out
 * through Redis), and the gap-free, resumable streams the Subscription fields serve.
 */
export { type ActivityFeeds, type ActivitySource, createActivityFeeds } from './activity.js';
export {
  DIRECT,
  type DirectSink,
  type DirectTicket,
  type MaybeDirect,
  withDirect,
} from './direct-mode.js';
export {
  groupedApprovalRequested,
  groupedNodeAppended,
  groupedRunStatusChanged,
  groupedThreadActivity,
  groupedThreadEvents,
  type Subscriber,
} from './grouped.js';
export {
  createSubscriptionGroups,
  DEFAULT_GROUP_CAPS,
  type GroupCaps,
  type GroupStats,
  SlowConsumerError,
  SubscriptionCostError,
  type SubscriptionGroups,
  subscriptionCost,
} from './groups.js';
export { createEventHub } from './hub.js';
export {
  type LogStreamOptions,
  type StreamSource,
  streamLog,
  ThreadDeletedError,
} from './stream.js';
export {
  type ApprovalRequestedArgs,
  approvalRequested,
  InvalidCursorError,
  type NodeAppendedArgs,
  nodeAppended,
  type RunStatusChangedArgs,
  runStatusChanged,
  type ThreadEventsArgs,
  threadEvents,
} from './subscriptions.js';
export type * from './types.js';
