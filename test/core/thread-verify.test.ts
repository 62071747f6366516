import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { type LogEntry, replay, type VerifyReport, verifyLog } from '../../src/core/log/index.js';
import { createWorkflowState } from '../../src/core/run/index.js';
import {
  createThreadMachine,
  dueDeadlines,
  planAppendNodes,
  planCancelRun,
  planCreateThread,
  planDispatch,
  planImportState,
  planImportWorkflowState,
  planRecordUsage,
  planRemember,
  planResolveApproval,
  planSaveCheckpoint,
  planSaveCheckpointWrites,
  planStartRun,
  THREAD_EVENT_TYPES,
  type ThreadEvent,
} from '../../src/core/thread/index.js';
import { createSession, DAY, iso, must, sampleAgentState, T0 } from './support/thread-fixtures.js';

/** A log holding every event type the thread machine knows (thread_forked last). */
function everyEventLog(): LogEntry[] {
  const s = createSession();
  s.commit(planCreateThread('t1', {}));
  s.commit(
    planAppendNodes(
      s.state,
      [
        { kind: 'system', payload: 'sys' },
        { kind: 'tool_result', payload: { raw: 'x' }, taint: { source: 'mcp_tool' } },
      ],
      s.now(),
    ),
  );
  s.commit(planRemember(s.state, { type: 'memory', key: 'k', content: 1 }, s.now()));
  s.commit(
    planStartRun(s.state, { runId: 'r1', goal: 'g', maxExecutionTimeMs: 30 * DAY }, s.now()),
  );
  s.commit(
    planDispatch(
      s.state,
      {
        runId: 'r1',
        action: {
          id: 'a1',
          type: 'update_memory',
          payload: { updates: { a: 1 } },
          compensation: { type: 'undo', payload: {} },
        },
      },
      s.now(),
    ),
  );
  s.commit(
    planDispatch(
      s.state,
      { runId: 'r1', action: { id: 'ask', type: 'request_human_input', payload: {} } },
      s.now(),
    ),
  );
  s.tick(1000);
  s.commit(planResolveApproval(s.state, { runId: 'r1', actionId: 'ok', decision: 'yes' }, s.now()));
  s.commit(
    planRecordUsage(s.state, { runId: 'r1', model: 'gpt-4o', inputTokens: 10, outputTokens: 5 }),
  );
  s.commit(
    planDispatch(
      s.state,
      { runId: 'r1', action: { id: 'ask2', type: 'request_human_input', payload: {} } },
      s.now(),
    ),
  );
  s.tick(DAY);
  must(s.tryCommit(dueDeadlines(s.state, s.now())[0]!));
  s.commit(planCancelRun(s.state, { runId: 'r1', rollback: true }));
  s.commit(
    planImportWorkflowState(
      s.state,
      JSON.parse(
        JSON.stringify(
          createWorkflowState({ workflowId: 'w', goal: 'g' }, { runId: 'x1', now: iso(T0) }),
        ),
      ),
    ),
  );
  s.commit(
    planSaveCheckpoint(
      s.state,
      {
        checkpointId: 'c1',
        data: { checkpoint: { v: 4 } },
        nodes: [{ kind: 'goal', parents: [], payload: { role: 'human', content: 'hi' } }],
      },
      s.now(),
    ),
  );
  s.commit(
    planSaveCheckpointWrites(
      s.state,
      { checkpointId: 'c1', taskId: 'task-1', data: { writes: [] } },
      s.now(),
    ),
  );
  must(s.tryCommit({ type: 'checkpoints_cleared' }));
  const system = (s.entries[1]!.event as unknown as { nodes: Array<{ id: string }> }).nodes[0]!;
  must(
    s.tryCommit({
      type: 'nodes_redacted',
      reason: 'erasure',
      nodes: [{ id: system.id, index: 1, digest: '0'.repeat(64) }],
    }),
  );
  must(
    s.tryCommit({
      type: 'thread_forked',
      threadId: 't2',
      fromThreadId: 't1',
      upToIndex: s.state.length,
    }),
  );
  return s.entries;
}

/** A log that starts from an imported AgentState and grows on it. */
function importedLog(): LogEntry[] {
  const s = createSession();
  s.commit(planImportState('t3', sampleAgentState(2), {}));
  s.commit(planAppendNodes(s.state, [{ kind: 'answer', payload: 'done' }], s.now()));
  return s.entries;
}

/** verifyLog, with a throw turned into a value so the assertion can say what happened. */
function verifySafely(entries: LogEntry[]): VerifyReport | string {
  try {
    return verifyLog(createThreadMachine(), entries, { strict: true });
  } catch (thrown) {
    return `threw ${String(thrown)}`;
  }
}

describe('verifyLog on thread logs', () => {
  const logs = [everyEventLog(), importedLog()];
  const log = logs[0]!;

  it('the reference logs cover every event type and verify', () => {
    const types = new Set(logs.flat().map((e) => e.event.type));
    expect([...types].sort()).toEqual([...THREAD_EVENT_TYPES].sort());
    for (const entries of logs) {
      expect(verifyLog(createThreadMachine(), entries, { strict: true })).toEqual({
        ok: true,
        checkedEntries: entries.length,
      });
    }
  });

  // Tampering with any entry is detected — by a report naming the entry, not by an
  // exception out of replay. A stored entry is untrusted input: its event may not have the shape
  // its type implies.
  it('an entry whose event type was swapped is reported at its index, never thrown', () => {
    const problems: string[] = [];
    for (const log of logs) {
      log.forEach((entry, index) => {
        for (const type of [...THREAD_EVENT_TYPES, 'bogus_happened']) {
          if (type === entry.event.type) continue;
          const copy = structuredClone(log);
          copy[index]!.event.type = type;
          const report = verifySafely(copy);
          const expected = { ok: false, firstBadIndex: index, checkedEntries: index };
          if (typeof report === 'string' || !matches(report, expected)) {
            problems.push(`${entry.event.type}→${type} at ${index}: ${JSON.stringify(report)}`);
          }
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it('an entry with a field of its event removed is reported at its index, never thrown', () => {
    const problems: string[] = [];
    for (const log of logs) {
      log.forEach((entry, index) => {
        for (const field of Object.keys(entry.event)) {
          if (field === 'type') continue;
          const copy = structuredClone(log);
          delete (copy[index]!.event as Record<string, unknown>)[field];
          const report = verifySafely(copy);
          if (typeof report === 'string' || !matches(report, { ok: false, firstBadIndex: index })) {
            problems.push(`${entry.event.type} without ${field}: ${JSON.stringify(report)}`);
          }
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it('replay of a log whose run_started became nodes_appended fails as a Result', () => {
    const copy = structuredClone(log);
    expect(copy[3]!.event.type).toBe('run_started');
    (copy[3]!.event as unknown as ThreadEvent).type = 'nodes_appended';
    let outcome: string;
    try {
      outcome = replay(createThreadMachine(), copy, { verify: 'strict' }).ok ? 'ok' : 'error';
    } catch {
      outcome = 'threw';
    }
    expect(outcome).toBe('error');
  });

  it('the reference log survives a JSON round trip byte for byte', () => {
    const parsed = JSON.parse(JSON.stringify(log)) as LogEntry[];
    expect(canonicalJson(parsed)).toBe(canonicalJson(log));
    expect(verifyLog(createThreadMachine(), parsed, { strict: true }).ok).toBe(true);
  });
});

function matches(report: VerifyReport, expected: Partial<VerifyReport>): boolean {
  return Object.entries(expected).every(
    ([key, value]) => report[key as keyof VerifyReport] === value,
  );
}
