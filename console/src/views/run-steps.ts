/**
 * A run's steps from its log entries: each entry that names the run opens a step that lasts
 * until the next one (the last until the run ended, or until now while it is live), labelled by
 * what happened, with the tokens spent so far. Pure.
 */

export type StepKind =
  | 'start'
  | 'status'
  | 'wait'
  | 'approval'
  | 'retry'
  | 'usage'
  | 'end'
  | 'other';

export interface RunStep {
  index: number;
  type: string;
  at: number;
  until: number;
  label: string;
  kind: StepKind;
  /** Input + output tokens recorded up to and including this step. */
  tokens: number;
}

interface RunEntry {
  index: number;
  type: string;
  recordedAt: string;
  entry: unknown;
}

type Json = Record<string, unknown>;
const record = (v: unknown): Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'timeout']);

function describeAction(action: Json): { label: string; kind: StepKind } {
  const payload = record(action.payload);
  switch (action.type) {
    case 'set_status': {
      const status = String(payload.status ?? '?');
      const error = typeof payload.error === 'string' ? `: ${payload.error}` : '';
      return { label: `status → ${status}${error}`, kind: TERMINAL.has(status) ? 'end' : 'status' };
    }
    case 'request_human_input':
      return { label: `waiting for ${String(payload.waiting_for ?? 'a human')}`, kind: 'wait' };
    case 'goto_node':
      return { label: `node ${String(payload.node ?? payload.node_id ?? '?')}`, kind: 'status' };
    case 'update_memory':
      return { label: `memory: ${Object.keys(record(payload.updates)).join(', ')}`, kind: 'other' };
    case '_retry':
      return { label: 'retry', kind: 'retry' };
    case '_fail':
      return { label: 'failed', kind: 'end' };
    case '_complete':
      return { label: 'completed', kind: 'end' };
    default:
      return { label: String(action.type ?? 'action'), kind: 'other' };
  }
}

function describe(type: string, event: Json): { label: string; kind: StepKind; tokens: number } {
  switch (type) {
    case 'run_started':
      return {
        label: `started: ${String(record(event.config).goal ?? '')}`,
        kind: 'start',
        tokens: 0,
      };
    case 'run_action_dispatched':
      return { ...describeAction(record(event.action)), tokens: 0 };
    case 'approval_resolved': {
      const decision = record(record(event.action).payload).decision;
      return { label: `approval: ${String(decision ?? 'resolved')}`, kind: 'approval', tokens: 0 };
    }
    case 'usage_recorded': {
      const tokens = Number(event.inputTokens ?? 0) + Number(event.outputTokens ?? 0);
      return {
        label: `usage: ${tokens.toLocaleString()} tokens (${String(event.model)})`,
        kind: 'usage',
        tokens,
      };
    }
    case 'run_cancelled':
      return { label: `cancelled: ${String(event.reason ?? '')}`, kind: 'end', tokens: 0 };
    case 'deadline_fired':
      return { label: `${String(event.deadline)} deadline passed`, kind: 'end', tokens: 0 };
    default:
      return { label: type, kind: 'other', tokens: 0 };
  }
}

/** The entries of run `runId` among `entries` (any order), as steps in log order. */
export function runSteps(
  entries: readonly RunEntry[],
  runId: string,
  end: { live: boolean; updatedAt: string; now: number },
): RunStep[] {
  const mine = entries
    .filter((e) => record(record(e.entry).event).runId === runId)
    .sort((a, b) => a.index - b.index);
  let tokens = 0;
  const last = end.live ? end.now : Date.parse(end.updatedAt);
  return mine.map((e, i) => {
    const d = describe(e.type, record(record(e.entry).event));
    tokens += d.tokens;
    const at = Date.parse(e.recordedAt);
    const next = mine[i + 1];
    const until = next === undefined ? Math.max(at, last) : Date.parse(next.recordedAt);
    return { index: e.index, type: e.type, at, until, label: d.label, kind: d.kind, tokens };
  });
}

/** True once `entries` (newest first, as read) reach back to the run's start. */
export const reachesStart = (entries: readonly RunEntry[], runId: string) =>
  entries.some((e) => e.type === 'run_started' && record(record(e.entry).event).runId === runId);

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
