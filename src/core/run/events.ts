import type { JsonValue } from '../json.js';
import type { CompensationEntry, MemoryDrop, TaintSource } from './schema.js';
import type { WaitingReason, WorkflowStatus } from './status.js';

/**
 * Facts a reduction produced, in the order they happened. The reducer never executes them; the
 * engine logs and publishes them (and, for `compensation_popped`, runs the compensating action).
 */
export type RunEvent =
  | { type: 'status_changed'; from: WorkflowStatus; to: WorkflowStatus; reason?: string }
  | { type: 'node_entered'; node_id: string; via: 'goto_node' | 'handoff' | 'advance' | 'init' }
  | { type: 'iteration_limit_exceeded'; iteration_count: number; max_iterations: number }
  | {
      type: 'retry_scheduled';
      attempt: number;
      max_retries: number;
      delay_ms: number;
      error: string;
    }
  | {
      type: 'usage_recorded';
      model: string;
      node_id?: string;
      input_tokens: number;
      output_tokens: number;
      cost_usd: number;
      priced: boolean;
    }
  | { type: 'usage_unpriced'; model: string }
  | {
      type: 'budget_threshold_crossed';
      percent: number;
      total_cost_usd: number;
      budget_usd: number;
    }
  | { type: 'budget_exceeded'; kind: 'tokens' | 'usd'; total: number; limit: number }
  | {
      type: 'approval_requested';
      waiting_for: WaitingReason;
      pending_approval?: JsonValue;
      timeout_at: string;
    }
  | { type: 'approval_resolved'; decision: string }
  | { type: 'memory_written'; keys: string[] }
  | {
      type: 'memory_dropped';
      key: string;
      bytes: number;
      limit: number;
      reason: MemoryDrop['reason'];
    }
  | { type: 'taint_recorded'; key: string; source: TaintSource }
  | { type: 'lessons_recorded'; entry_id: string; node_id: string; fact_ids: string[] }
  | { type: 'compensation_pushed'; entry: CompensationEntry }
  /** A compensating action the runtime must now execute (LIFO). */
  | { type: 'compensation_popped'; entry: CompensationEntry; rollback: boolean };

export type RunEventType = RunEvent['type'];
