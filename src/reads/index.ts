/**
 * The read API: what GraphQL resolvers, the server and the CLI read through. Batch readers over
 * the read models and the engine's thread state (reads.ts), the same API as one tenant sees it
 * (scoped-reads.ts), the views it answers with (views.ts) and the bound on one-value answers
 * (answer-size.ts). It only reads: the engine's commands are the one writer, and the engine
 * imports nothing from here.
 */
export { MAX_ANSWER_BYTES, withinAnswerBound } from './answer-size.js';
export type { ChildList, ChildPageQuery } from './child-reads.js';
export {
  createReads,
  type NodeSearchView,
  type Reads,
  type SearchDisabled,
  type WalkKey,
} from './reads.js';
export { scopeReads } from './scoped-reads.js';
export { MAX_OMITTED_LIMIT, type ProjectionView } from './state-reads.js';
export {
  type ActivityView,
  type ApprovalView,
  type AuditView,
  type EventHeadView,
  type EventView,
  type MemoryView,
  type NodeKey,
  type NodeView,
  type RunView,
  type ThreadDiffView,
  type ThreadView,
  toEventView,
  toNodeView,
  toRunView,
  toThreadView,
} from './views.js';
