import { describe, expect, it } from 'vitest';
import { isRfc3339, type LogEntry, validateEntry } from '../../src/core/log/entry.js';

const good = (): LogEntry => ({
  schemaVersion: 1,
  id: 'e-1',
  index: 0,
  recordedAt: '2026-01-01T00:00:00.000Z',
  machineId: 'weft.thread',
  machineVersion: '1',
  event: { type: 'node.appended', payload: { x: 1, list: [true, null, 'a'] } },
  causationId: 'c-1',
  correlationId: 'r-1',
  metadata: { by: 'agent' },
  verification: { stateHash: 'a'.repeat(64) },
});

function issuesOf(raw: unknown) {
  const result = validateEntry(raw);
  if (result.ok) throw new Error('expected the entry to be rejected');
  expect(result.error.code).toBe('VALIDATION_FAILED');
  return result.error.code === 'VALIDATION_FAILED' ? result.error.issues : [];
}

const withField = (key: string, value: unknown): Record<string, unknown> => ({
  ...good(),
  [key]: value,
});

describe('validateEntry', () => {
  it('accepts a good envelope, with and without the optional fields, and returns it', () => {
    const entry = good();
    const result = validateEntry(entry);
    expect(result).toEqual({ ok: true, value: entry });
    const { causationId, correlationId, metadata, verification, ...minimal } = entry;
    expect(validateEntry(minimal).ok).toBe(true);
    expect(validateEntry({ ...entry, recordedAt: '2024-02-29T23:59:60+05:30' }).ok).toBe(true);
  });

  it.each<[string, unknown, string]>([
    ['schemaVersion', 2, '$.schemaVersion'],
    ['id', '', '$.id'],
    ['id', 7, '$.id'],
    ['machineId', undefined, '$.machineId'],
    ['machineVersion', '', '$.machineVersion'],
    ['index', -1, '$.index'],
    ['index', 1.5, '$.index'],
    ['index', '3', '$.index'],
    ['index', Number.NaN, '$.index'],
    ['recordedAt', '2026-01-01', '$.recordedAt'],
    ['recordedAt', '2026-02-30T00:00:00Z', '$.recordedAt'],
    ['recordedAt', '2026-01-01T24:00:00Z', '$.recordedAt'],
    ['recordedAt', 'yesterday', '$.recordedAt'],
    ['event', 'node.appended', '$.event'],
    ['event', [], '$.event'],
    ['event', { payload: 1 }, '$.event.type'],
    ['event', { type: '' }, '$.event.type'],
    ['causationId', 5, '$.causationId'],
    ['correlationId', '', '$.correlationId'],
    ['metadata', [1], '$.metadata'],
    ['verification', { stateHash: '' }, '$.verification.stateHash'],
    ['verification', 'abc', '$.verification'],
    ['verification', { stateHash: 'x', extra: 1 }, '$.verification.extra'],
    ['extra', 1, '$.extra'],
  ])('rejects %s = %o at %s', (key, value, path) => {
    const issues = issuesOf(withField(key, value));
    expect(issues.map((issue) => issue.path)).toContain(path);
  });

  it('rejects a missing required field', () => {
    for (const key of ['schemaVersion', 'id', 'index', 'recordedAt', 'machineId', 'event']) {
      const raw: Record<string, unknown> = { ...good() };
      delete raw[key];
      expect(issuesOf(raw).map((issue) => issue.path)).toContain(`$.${key}`);
    }
  });

  it('rejects non-JSON values deep in the entry, naming the path', () => {
    const entry = good();
    const raw = { ...entry, event: { type: 't', payload: { x: Number.NaN } } };
    expect(issuesOf(raw)).toEqual([{ path: '$.event.payload.x', message: 'NaN is not JSON' }]);
    const meta = { ...entry, metadata: { at: new Date(0) } };
    expect(issuesOf(meta)[0]?.path).toBe('$.metadata.at');
    // An optional field that is present but undefined is not plain JSON either.
    expect(issuesOf({ ...entry, causationId: undefined })[0]?.path).toBe('$.causationId');
  });

  it('reports every envelope problem and one path per issue', () => {
    const issues = issuesOf({ ...good(), id: '', index: -1, event: { type: 3 } });
    expect(issues.map((issue) => issue.path)).toEqual(['$.id', '$.index', '$.event.type']);
  });

  it('rejects things that are not objects, and prefixes paths with the given root', () => {
    for (const raw of [null, 1, 'x', [good()], new Date(0)]) {
      expect(issuesOf(raw)[0]?.path).toBe('$');
    }
    const result = validateEntry({ ...good(), index: -2 }, '$.entries[3]');
    expect(
      !result.ok && result.error.code === 'VALIDATION_FAILED' && result.error.issues[0]?.path,
    ).toBe('$.entries[3].index');
  });
});

describe('isRfc3339', () => {
  it('accepts RFC 3339 date-times and rejects the rest', () => {
    for (const s of [
      '2026-01-01T00:00:00Z',
      '2026-12-31t23:59:59.123456-08:00',
      '2000-02-29T00:00:00z',
    ]) {
      expect(isRfc3339(s)).toBe(true);
    }
    for (const s of [
      '1900-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-01-01T00:60:00Z',
      '2026-01-01T00:00:00',
      '2026-01-01T00:00:00+24:00',
      '2026-01-01 00:00:00Z',
      '',
    ]) {
      expect(isRfc3339(s)).toBe(false);
    }
  });
});
