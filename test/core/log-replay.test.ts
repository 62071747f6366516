import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { err, ok, WeftFailure } from '../../src/core/errors.js';
import type { JsonValue } from '../../src/core/json.js';
import type { LogEntry, LogEvent } from '../../src/core/log/entry.js';
import { createEventChainMachine, foldLog } from '../../src/core/log/reference.js';
import { type LogMachine, replay, stampStateHashes, verifyLog } from '../../src/core/log/replay.js';
import { chainStateHash, GENESIS_STATE_HASH } from '../../src/core/log/state-hash.js';

/** A toy list/counter machine: immutable states, hash chained over the delta each entry makes. */
interface ListState {
  items: JsonValue[];
  total: number;
  hash: string;
}
type Effect = { kind: 'notify'; index: number };

const listMachine: LogMachine<ListState, Effect> = {
  initial: { items: [], total: 0, hash: GENESIS_STATE_HASH },
  apply(state, entry) {
    const { type } = entry.event;
    if (type === 'entry.refused') {
      return err({ code: 'INVALID_ACTION', message: 'refused on purpose' });
    }
    if (type === 'entry.thrown') {
      throw new WeftFailure({ code: 'INVALID_ACTION', message: 'thrown on purpose' });
    }
    if (type === 'entry.crashed') throw new TypeError('a bug');
    const payload = entry.event.payload ?? null;
    const by = typeof entry.event.by === 'number' ? entry.event.by : 0;
    const items = type === 'item.added' ? [...state.items, payload] : state.items;
    const total = type === 'counter.incremented' ? state.total + by : state.total;
    // The delta names everything the entry decided: which rule fired and with what.
    const delta = { index: entry.index, type, payload, by };
    const effects: Effect[] = type === 'item.added' ? [{ kind: 'notify', index: entry.index }] : [];
    return ok([{ items, total, hash: chainStateHash(state.hash, delta) }, effects]);
  },
  stateHash: (state) => state.hash,
};

const plainJson = fc
  .jsonValue({ maxDepth: 2 })
  .map((v) => JSON.parse(JSON.stringify(v)) as JsonValue);
const eventArb: fc.Arbitrary<LogEvent> = fc.record({
  type: fc.constantFrom('item.added', 'counter.incremented', 'note.recorded'),
  payload: plainJson,
  by: fc.integer({ min: -5, max: 5 }),
});

function draft(events: readonly LogEvent[], start = 0): LogEntry[] {
  return events.map((event, i) => ({
    schemaVersion: 1,
    id: `e-${start + i}`,
    index: start + i,
    recordedAt: '2026-01-01T00:00:00.000Z',
    machineId: 'toy',
    machineVersion: '1',
    event,
  }));
}

function stamped(events: readonly LogEvent[]): LogEntry[] {
  const result = stampStateHashes(listMachine, draft(events));
  if (!result.ok) throw new Error(result.error.message);
  return result.value.entries;
}

const logArb = (minLength = 0) =>
  fc.array(eventArb, { minLength, maxLength: 20 }).map((events) => stamped(events));

type Tamper = 'payload' | 'type' | 'hash';
function tamper(entries: LogEntry[], position: number, how: Tamper): LogEntry[] {
  const copy = structuredClone(entries);
  const target = copy[position]!;
  if (how === 'payload') target.event.payload = { tampered: target.event.payload ?? null };
  if (how === 'type') target.event.type = `${target.event.type}.tampered`;
  if (how === 'hash') target.verification = { stateHash: chainStateHash('forged', position) };
  return copy;
}

describe('replay', () => {
  it('folds a log into the same state as the reference fold, with effects in order', () => {
    fc.assert(
      fc.property(logArb(), (entries) => {
        const result = replay(listMachine, entries, { verify: 'strict', collectEffects: true });
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        expect(result.value.state).toEqual(foldLog(listMachine, entries));
        expect(result.value.length).toBe(entries.length);
        expect(result.value.effects).toEqual(
          entries
            .filter((entry) => entry.event.type === 'item.added')
            .map((entry) => ({ kind: 'notify', index: entry.index })),
        );
      }),
    );
    expect(replay(listMachine, [])).toEqual(ok({ state: listMachine.initial, length: 0 }));
  });

  it('reports a modified entry at exactly its index under strict verification', () => {
    fc.assert(
      fc.property(
        logArb(1),
        fc.nat(),
        fc.constantFrom<Tamper>('payload', 'type', 'hash'),
        (entries, pick, how) => {
          const position = pick % entries.length;
          const bad = tamper(entries, position, how);
          expect(verifyLog(listMachine, entries, { strict: true })).toEqual({
            ok: true,
            checkedEntries: entries.length,
          });
          expect(verifyLog(listMachine, bad, { strict: true })).toMatchObject({
            ok: false,
            checkedEntries: position,
            firstBadIndex: position,
            entryId: `e-${position}`,
          });
          const result = replay(listMachine, bad, { verify: 'strict' });
          expect(result.ok).toBe(false);
          if (result.ok) return;
          expect(result.error).toMatchObject({
            code: 'VERIFICATION_FAILED',
            index: position,
            entryId: `e-${position}`,
          });
          expect(result.error.message).toContain(`expected ${foldHashAt(bad, position)}`);
          expect(result.error.message).toContain(`found ${bad[position]!.verification!.stateHash}`);
          // Without verification the tampered log still replays: only the hashes catch it.
          expect(replay(listMachine, bad, { verify: 'none' }).ok).toBe(true);
        },
      ),
    );
  });

  it("'strict' fails on a missing hash, 'present' does not", () => {
    fc.assert(
      fc.property(logArb(1), fc.nat(), (entries, pick) => {
        const position = pick % entries.length;
        const copy = structuredClone(entries);
        delete copy[position]!.verification;
        const strict = replay(listMachine, copy, { verify: 'strict' });
        expect(strict.ok).toBe(false);
        if (!strict.ok) {
          expect(strict.error).toMatchObject({ code: 'VERIFICATION_FAILED', index: position });
          expect(strict.error.message).toContain('no verification.stateHash');
        }
        expect(replay(listMachine, copy, { verify: 'present' }).ok).toBe(true);
        expect(replay(listMachine, copy).ok).toBe(true);
        expect(verifyLog(listMachine, copy, { strict: false }).ok).toBe(true);
        expect(verifyLog(listMachine, copy).firstBadIndex).toBe(position);
      }),
    );
  });

  it('replaying any prefix gives the state seen after that entry in the full replay', () => {
    fc.assert(
      fc.property(logArb(), (entries) => {
        const seen: ListState[] = [];
        const full = replay(listMachine, entries, {
          verify: 'strict',
          onEntry: (state, entry) => {
            expect(entry.index).toBe(seen.length);
            seen.push(state);
          },
        });
        expect(full.ok).toBe(true);
        expect(seen).toHaveLength(entries.length);
        for (let k = 0; k <= entries.length; k++) {
          const prefix = replay(listMachine, entries.slice(0, k), { verify: 'strict' });
          const expected = k === 0 ? listMachine.initial : seen[k - 1];
          expect(prefix).toEqual(ok({ state: expected, length: k }));
        }
      }),
    );
  });

  it('replaying from a mid-point state equals a full replay', () => {
    fc.assert(
      fc.property(logArb(), fc.nat(), (entries, pick) => {
        const k = pick % (entries.length + 1);
        const head = replay(listMachine, entries.slice(0, k));
        if (!head.ok) throw new Error(head.error.message);
        // A snapshot is a JSON round trip of the state; resuming from it must not matter.
        const snapshot = JSON.parse(JSON.stringify(head.value.state)) as ListState;
        const resumed = replay(listMachine, entries.slice(k), {
          verify: 'strict',
          from: { state: snapshot, index: k },
        });
        expect(resumed).toEqual(replay(listMachine, entries));
      }),
    );
  });

  it('rejects entries whose index does not continue the log, naming the index', () => {
    const entries = stamped([{ type: 'a' }, { type: 'b' }, { type: 'c' }]);
    const gap = [entries[0]!, entries[2]!];
    const result = replay(listMachine, gap);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$[1].index' }],
    });
    expect(result.error.message).toContain('has index 2 but the log expects 1');
    expect(verifyLog(listMachine, gap)).toMatchObject({
      ok: false,
      firstBadIndex: 1,
      entryId: 'e-2',
    });

    const wrongFrom = replay(listMachine, entries.slice(1), {
      from: { state: listMachine.initial, index: 0 },
    });
    expect(!wrongFrom.ok && wrongFrom.error.message).toContain('has index 1 but the log expects 0');
    const badFrom = replay(listMachine, [], { from: { state: listMachine.initial, index: -1 } });
    expect(!badFrom.ok && badFrom.error.code).toBe('VALIDATION_FAILED');
  });

  it('returns apply errors (returned or thrown as WeftFailure) annotated with the index', () => {
    for (const type of ['entry.refused', 'entry.thrown']) {
      const entries = draft([{ type: 'item.added' }, { type: 'note.recorded' }, { type }]);
      const result = replay(listMachine, entries, { verify: 'none' });
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.error.code).toBe('INVALID_ACTION');
      expect(result.error.message).toMatch(/^Replay failed at entry 2 \(e-2\): .* on purpose$/);
      expect(verifyLog(listMachine, entries, { strict: false })).toMatchObject({
        ok: false,
        checkedEntries: 2,
        firstBadIndex: 2,
        entryId: 'e-2',
      });
    }
    expect(() => replay(listMachine, draft([{ type: 'entry.crashed' }]))).toThrow(TypeError);
  });

  it('calls onEntry only for entries that passed verification', () => {
    const entries = tamper(stamped([{ type: 'a' }, { type: 'b' }, { type: 'c' }]), 1, 'hash');
    const visited: number[] = [];
    replay(listMachine, entries, { verify: 'present', onEntry: (_s, e) => visited.push(e.index) });
    expect(visited).toEqual([0]);
  });
});

describe('stampStateHashes and the event-chain machine', () => {
  it('stamps hashes that strict verification accepts, without touching the input', () => {
    const chain = createEventChainMachine();
    const drafts = draft([{ type: 'a', n: 1 }, { type: 'b' }]);
    const result = stampStateHashes(chain, drafts);
    if (!result.ok) throw new Error(result.error.message);
    expect(drafts[0]!.verification).toBeUndefined();
    expect(verifyLog(chain, result.value.entries)).toEqual({ ok: true, checkedEntries: 2 });
    expect(result.value.state.length).toBe(2);
    const moved = structuredClone(result.value.entries);
    moved[1]!.event.type = 'c';
    expect(verifyLog(chain, moved)).toMatchObject({ ok: false, firstBadIndex: 1 });
    // Continuing a log from a known state stamps the next entries consistently.
    const more = stampStateHashes(chain, draft([{ type: 'c' }], 2), {
      state: result.value.state,
      index: 2,
    });
    if (!more.ok) throw new Error(more.error.message);
    expect(verifyLog(chain, [...result.value.entries, ...more.value.entries]).ok).toBe(true);
  });
});

/** The hash replay recomputes at `position`: the chain over the (tampered) entries up to it. */
function foldHashAt(entries: LogEntry[], position: number): string {
  return foldLog(listMachine, entries.slice(0, position + 1)).hash;
}
