/**
 * Object refs shared across domain files, so that a file can add fields to another domain's
 * type (node.ts adds `Thread.nodes`, run.ts adds `CausalNode.run`, …) without import cycles.
 * Each ref is implemented by the file of its domain.
 */
import type { ThreadSpend } from '../core/thread/index.js';
import type {
  EventHeadView,
  EventView,
  MemoryView,
  NodeView,
  RunView,
  ThreadView,
} from '../reads/index.js';
import { builder } from './builder.js';

export const ThreadRef = builder.objectRef<ThreadView>('Thread');
export const CausalNodeRef = builder.objectRef<NodeView>('CausalNode');
export const RunRef = builder.objectRef<RunView>('Run');
export const MemoryItemRef = builder.objectRef<MemoryView>('MemoryItem');
/** A list of entries reads their heads; `entry` is then read only where it is asked for. */
export const ThreadEventRef = builder.objectRef<EventHeadView | EventView>('ThreadEvent');
export const SpendRef = builder.objectRef<ThreadSpend>('Spend');
