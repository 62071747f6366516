import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { sha256Hex } from '../../src/core/hash.js';
import type { LogEntry } from '../../src/core/log/entry.js';
import {
  chainStateHash,
  chainStateHashText,
  entryDigest,
  GENESIS_STATE_HASH,
} from '../../src/core/log/state-hash.js';

const plainJson = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** Rebuilds an object with its keys in reverse order, recursively. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== 'object' || value === null) return value;
  // fromEntries defines own properties, so an own "__proto__" key (JSON.parse makes those)
  // stays a key instead of becoming the prototype.
  return Object.fromEntries(
    Object.keys(value)
      .reverse()
      .map((key) => [key, reverseKeys((value as Record<string, unknown>)[key])]),
  );
}

describe('chainStateHash', () => {
  it('starts from 64 zeros and is sha256(previous + newline + canonical delta)', () => {
    expect(GENESIS_STATE_HASH).toBe('0'.repeat(64));
    expect(chainStateHash(GENESIS_STATE_HASH, { b: 1, a: [2] })).toBe(
      sha256Hex(GENESIS_STATE_HASH + '\n' + '{"a":[2],"b":1}'),
    );
    expect(chainStateHash(GENESIS_STATE_HASH, {})).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is deterministic and ignores key order in the delta', () => {
    fc.assert(
      fc.property(plainJson, (delta) => {
        const once = chainStateHash(GENESIS_STATE_HASH, delta);
        expect(chainStateHash(GENESIS_STATE_HASH, delta)).toBe(once);
        expect(chainStateHash(GENESIS_STATE_HASH, reverseKeys(delta))).toBe(once);
      }),
    );
  });

  it('differs for different deltas and for different previous hashes', () => {
    fc.assert(
      fc.property(plainJson, plainJson, (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        expect(chainStateHash(GENESIS_STATE_HASH, a)).not.toBe(
          chainStateHash(GENESIS_STATE_HASH, b),
        );
      }),
    );
    const h1 = chainStateHash(GENESIS_STATE_HASH, { n: 1 });
    expect(chainStateHash(h1, { n: 2 })).not.toBe(chainStateHash(GENESIS_STATE_HASH, { n: 2 }));
    // Order of deltas matters: the chain commits to history, not to a set.
    const ab = chainStateHash(chainStateHash(GENESIS_STATE_HASH, 'a'), 'b');
    const ba = chainStateHash(chainStateHash(GENESIS_STATE_HASH, 'b'), 'a');
    expect(ab).not.toBe(ba);
  });
});

describe('entryDigest', () => {
  const entry: LogEntry = {
    schemaVersion: 1,
    id: 'e1',
    index: 0,
    recordedAt: '2026-01-01T00:00:00.000Z',
    machineId: 'm',
    machineVersion: '1',
    event: { type: 't' },
  };
  it('ignores verification and changes with any other field', () => {
    const digest = entryDigest(entry);
    expect(entryDigest({ ...entry, verification: { stateHash: 'x' } })).toBe(digest);
    expect(entryDigest({ ...entry, recordedAt: '2026-01-01T00:00:00.001Z' })).not.toBe(digest);
    expect(entryDigest({ ...entry, metadata: {} })).not.toBe(digest);
  });
});

describe('chainStateHashText', () => {
  it('equals chainStateHash of the parsed canonical delta', () => {
    const delta = { created: ['cw_1'], entry: { b: [1, { z: 1, a: 2 }], a: 'x' }, runs: {} };
    const text = canonicalJson(delta);
    expect(chainStateHashText(GENESIS_STATE_HASH, text)).toBe(
      chainStateHash(GENESIS_STATE_HASH, delta),
    );
  });
});
