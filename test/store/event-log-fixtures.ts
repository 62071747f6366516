/** Entry builders shared by the event-log store tests and their child processes (no vitest). */
import { randomUUID } from 'node:crypto';
import type { LogEntry } from '../../src/core/log/index.js';

/** A thread id no other test (or earlier run on a shared database) uses. */
export const newThreadId = (name = 't'): string => `${name}-${randomUUID().slice(0, 12)}`;

/** A valid entry at `index`; `tag` keeps ids unique per batch. Envelope keys in canonical order. */
export function makeEntry(index: number, tag = 'e', extra: Partial<LogEntry> = {}): LogEntry {
  return {
    event: { type: 'noted', n: index },
    id: `${tag}-${index}`,
    index,
    machineId: 'weft-test',
    machineVersion: '1.0.0',
    recordedAt: '2026-03-01T00:00:00.000Z',
    schemaVersion: 1,
    ...extra,
  };
}

export const makeBatch = (from: number, count: number, tag = 'e'): LogEntry[] =>
  Array.from({ length: count }, (_, i) => makeEntry(from + i, tag));

/**
 * An entry whose objects are all written in non-canonical key order (envelope included), with
 * unicode keys and values, escapes, a lone surrogate, nested arrays of objects and odd numbers.
 */
export function makeAwkwardEntry(index: number, tag = 'awk'): LogEntry {
  const payload = {
    zeta: { y: [3, { b: true, a: null }], x: 'last' },
    Zeta: 'capital',
    é: 'accent',
    e: 'plain',
    ß: 'sharp s',
    中文: '汉字 and 🙂 emoji 𝄞',
    '🙂': { '🙃': 'upside', '😀': 'grin' },
    'b-c': 'dash',
    b: '"quotes" \\ backslash \n newline \t tab \u0000 nul \u2028 sep',
    a: [1.5, -2, 0.1, 1e21, 1e-7, 9007199254740991, -0.5],
    _under: 'underscore',
    lone: 'high \ud800 surrogate',
    empty: { inner: {}, list: [] },
  };
  return {
    verification: { stateHash: 'h'.repeat(64) },
    metadata: { z: 1, a: { d: 'x', c: 'y' } },
    correlationId: 'corr-1',
    causationId: 'cause-1',
    event: { type: 'tool.result_recorded', payload, callId: 'c-1' },
    recordedAt: '2026-03-01T12:34:56.789+02:00',
    machineVersion: '2.0.0',
    machineId: 'weft-test',
    index,
    id: `${tag}-${index}`,
    schemaVersion: 1,
  };
}
