import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/core/log/entry.js';
import { diffLogs, forkLog } from '../../src/core/log/fork-diff.js';
import { createEventChainMachine } from '../../src/core/log/reference.js';
import { stampStateHashes } from '../../src/core/log/replay.js';

const chain = createEventChainMachine();

function makeLog(types: readonly string[], prefix = 'e'): LogEntry[] {
  const drafts: LogEntry[] = types.map((type, index) => ({
    schemaVersion: 1,
    id: `${prefix}-${index}`,
    index,
    recordedAt: '2026-01-01T00:00:00.000Z',
    machineId: 'toy',
    machineVersion: '1',
    event: { type, payload: { n: index } },
  }));
  const result = stampStateHashes(chain, drafts);
  if (!result.ok) throw new Error(result.error.message);
  return result.value.entries;
}

/** Continues `base` with new events, as a branch written after a fork would. */
function extend(base: LogEntry[], types: readonly string[], prefix: string): LogEntry[] {
  const drafts: LogEntry[] = types.map((type, i) => ({
    schemaVersion: 1,
    id: `${prefix}-${base.length + i}`,
    index: base.length + i,
    recordedAt: '2026-01-02T00:00:00.000Z',
    machineId: 'toy',
    machineVersion: '1',
    event: { type },
  }));
  let state = chain.initial;
  for (const entry of base) {
    const next = chain.apply(state, entry);
    if (!next.ok) throw new Error(next.error.message);
    state = next.value[0];
  }
  const result = stampStateHashes(chain, drafts, { state, index: base.length });
  if (!result.ok) throw new Error(result.error.message);
  return [...base, ...result.value.entries];
}

const log = makeLog(['a', 'b', 'c', 'd']);

describe('forkLog', () => {
  it('copies the whole log by default, as deep copies', () => {
    const result = forkLog(log);
    expect(result).toEqual({ ok: true, value: log });
    if (!result.ok) return;
    expect(result.value[0]).not.toBe(log[0]);
    result.value[0]!.event.type = 'changed';
    expect(log[0]!.event.type).toBe('a');
  });

  it('copies [0, upToIndex) for 0, a mid-point and the length', () => {
    expect(forkLog(log, 0)).toEqual({ ok: true, value: [] });
    expect(forkLog(log, 2)).toEqual({ ok: true, value: log.slice(0, 2) });
    expect(forkLog(log, log.length)).toEqual({ ok: true, value: log });
    expect(forkLog([], 0)).toEqual({ ok: true, value: [] });
  });

  it('preserves key order of copied entries', () => {
    const odd = { ...log[0]!, event: { z: 1, type: 'a', a: 2 } } as LogEntry;
    const result = forkLog([odd]);
    expect(result.ok && JSON.stringify(result.value[0])).toBe(JSON.stringify(odd));
  });

  it.each([-1, log.length + 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'rejects upToIndex %s',
    (upToIndex) => {
      const result = forkLog(log, upToIndex);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error).toMatchObject({
        code: 'VALIDATION_FAILED',
        issues: [{ path: '$.upToIndex' }],
      });
      expect(result.error.message).toContain(`[0, ${log.length}]`);
    },
  );
});

describe('diffLogs', () => {
  it('finds no difference between identical logs (including deep copies)', () => {
    expect(diffLogs(log, log)).toEqual({ commonPrefix: 4, onlyA: [], onlyB: [] });
    expect(diffLogs(log, structuredClone(log))).toEqual({ commonPrefix: 4, onlyA: [], onlyB: [] });
    expect(diffLogs([], [])).toEqual({ commonPrefix: 0, onlyA: [], onlyB: [] });
  });

  it('reports a fork that diverged after the fork point', () => {
    const forked = forkLog(log, 2);
    if (!forked.ok) throw new Error(forked.error.message);
    const a = extend(log.slice(0, 2), ['x', 'y'], 'a');
    const b = extend(forked.value, ['z'], 'b');
    const diff = diffLogs(a, b);
    expect(diff.commonPrefix).toBe(2);
    expect(diff.onlyA.map((e) => e.id)).toEqual(['a-2', 'a-3']);
    expect(diff.onlyB.map((e) => e.id)).toEqual(['b-2']);
  });

  it('handles one log being a prefix of the other', () => {
    expect(diffLogs(log.slice(0, 1), log)).toEqual({
      commonPrefix: 1,
      onlyA: [],
      onlyB: log.slice(1),
    });
    expect(diffLogs(log, [])).toEqual({ commonPrefix: 0, onlyA: log, onlyB: [] });
  });

  it('ends the common prefix at a tampered entry even when its id is unchanged', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: log.length - 1 }),
        fc.constantFrom('event', 'hash', 'time'),
        (i, how) => {
          const copy = structuredClone(log);
          const entry = copy[i]!;
          if (how === 'event') entry.event.payload = { n: -1 };
          if (how === 'hash') entry.verification = { stateHash: 'f'.repeat(64) };
          if (how === 'time') entry.recordedAt = '2030-01-01T00:00:00.000Z';
          const diff = diffLogs(log, copy);
          expect(diff.commonPrefix).toBe(i);
          expect(diff.onlyA).toEqual(log.slice(i));
          expect(diff.onlyB).toEqual(copy.slice(i));
        },
      ),
    );
  });

  it('treats entries that differ only in key order as identical', () => {
    const reordered = log.map((entry) => {
      const { event, id, ...rest } = entry;
      return { event, ...rest, id } as LogEntry;
    });
    expect(diffLogs(log, reordered).commonPrefix).toBe(log.length);
  });
});
