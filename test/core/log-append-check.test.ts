import { describe, expect, it } from 'vitest';
import { type AppendCheckInput, checkAppend } from '../../src/core/log/append-check.js';
import type { LogEntry } from '../../src/core/log/entry.js';

const entry = (index: number, id = `e-${index}`): LogEntry => ({
  schemaVersion: 1,
  id,
  index,
  recordedAt: '2026-01-01T00:00:00.000Z',
  machineId: 'toy',
  machineVersion: '1',
  event: { type: 'thing.happened' },
});

const existing = new Set(['e-0', 'e-1']);
const input = (overrides: Partial<AppendCheckInput> = {}): AppendCheckInput => ({
  threadId: 't1',
  currentLength: 2,
  expectedIndex: 2,
  entries: [entry(2), entry(3)],
  hasEntryId: (id) => existing.has(id),
  ...overrides,
});

function failure(overrides: Partial<AppendCheckInput>) {
  const result = checkAppend(input(overrides));
  if (result.ok) throw new Error('expected the append to be rejected');
  return result.error;
}

describe('checkAppend', () => {
  it('accepts a batch continuing the log', () => {
    expect(checkAppend(input())).toEqual({ ok: true, value: undefined });
    expect(
      checkAppend(input({ currentLength: 0, expectedIndex: 0, entries: [entry(0, 'x')] })),
    ).toEqual({ ok: true, value: undefined });
  });

  it('rejects an empty batch and a bad expectedIndex', () => {
    expect(failure({ entries: [] })).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$.entries' }],
    });
    expect(failure({ expectedIndex: -1 })).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$.expectedIndex' }],
    });
  });

  it('rejects indices that do not equal expectedIndex + i, as plain validation', () => {
    const gap = failure({ entries: [entry(2), entry(4)] });
    expect(gap).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$.entries[1].index' }],
    });
    expect(gap.message).toContain('index must be 3');
    expect(failure({ entries: [entry(3)] }).code).toBe('VALIDATION_FAILED');
  });

  it('rejects an invalid envelope, naming the entry and path', () => {
    const bad = { ...entry(3), event: { type: 'x', payload: { at: Number.NaN } } };
    expect(failure({ entries: [entry(2), bad] })).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$.entries[1].event.payload.at', message: 'NaN is not JSON' }],
    });
    expect(checkAppend(input({ entries: [entry(2), bad], validateEntries: false })).ok).toBe(true);
  });

  it('returns CONFLICT with both indices when the log moved on, telling the caller to reload', () => {
    for (const currentLength of [3, 1]) {
      const error = failure({ currentLength });
      expect(error).toMatchObject({
        code: 'CONFLICT',
        threadId: 't1',
        expectedIndex: 2,
        actualIndex: currentLength,
      });
      expect(error.message).toContain('Reload the thread and retry');
    }
  });

  it('rejects duplicate ids within the batch and ids already in the thread, naming them', () => {
    const twice = failure({ entries: [entry(2, 'x'), entry(3, 'x')] });
    expect(twice).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$.entries[1].id' }],
    });
    expect(twice.message).toContain('"x"');
    const stored = failure({ entries: [entry(2, 'fresh'), entry(3, 'e-1')] });
    expect(stored).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$.entries[1].id' }],
    });
    expect(stored.message).toContain('"e-1" already exists in thread t1');
  });

  it('checks in the documented order: shape, then conflict, then duplicates', () => {
    // Bad indices and a stale writer: shape wins.
    expect(failure({ currentLength: 5, entries: [entry(9)] }).code).toBe('VALIDATION_FAILED');
    // A stale writer replaying a batch that already landed: conflict, not duplicate ids.
    const replayed = failure({ currentLength: 4, entries: [entry(2, 'e-0'), entry(3, 'e-1')] });
    expect(replayed.code).toBe('CONFLICT');
  });
});
