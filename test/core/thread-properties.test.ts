import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import type { JsonValue } from '../../src/core/json.js';
import {
  diffLogs,
  forkLog,
  type LogEntry,
  type LogMachine,
  replay,
  verifyLog,
} from '../../src/core/log/index.js';
import {
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  planCreateThread,
  THREAD_EVENT_TYPES,
  type ThreadEffect,
  type ThreadEvent,
  type ThreadState,
} from '../../src/core/thread/index.js';
import {
  fingerprint,
  iso,
  must,
  playScenario,
  scenarioArb,
  summarise,
} from './support/thread-fixtures.js';

const RUNS = { numRuns: 100 };
const BRANCH_USAGE = { model: 'custom', inputTokens: 1, outputTokens: 2, costUsd: 0.001 };

const rebuild = (
  entries: readonly LogEntry[],
  machine: LogMachine<ThreadState, ThreadEffect> = createThreadMachine(),
) => must(replay(machine, entries, { verify: 'strict', collectEffects: true }));

describe('thread machine properties (generated command sequences)', () => {
  it('scenarios exercise refusals, runs and semantic memory (generator sanity)', () => {
    const refused = new Set<string>();
    let runs = 0;
    let memoryNodes = 0;
    let deadlines = 0;
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const played = playScenario(scenario);
        for (const code of played.refusedCodes) refused.add(code);
        runs += played.session.state.runs.size;
        for (const entry of played.session.entries) {
          const event = entry.event as unknown as ThreadEvent;
          if (event.type === 'run_action_dispatched') memoryNodes += event.memoryNodes.length;
          if (event.type === 'deadline_fired') deadlines++;
        }
      }),
      RUNS,
    );
    for (const code of ['NOT_FOUND', 'INVALID_TRANSITION', 'INVALID_ACTION']) {
      expect(refused).toContain(code);
    }
    expect(runs).toBeGreaterThan(0);
    expect(memoryNodes).toBeGreaterThan(0);
    expect(deadlines).toBeGreaterThan(0);
  });

  it('(a) replaying the log rebuilds the state observed after the last commit', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { session } = playScenario(scenario);
        const rebuilt = rebuild(session.entries);
        expect(summarise(rebuilt.state)).toEqual(summarise(session.state));
        expect(rebuilt.length).toBe(session.entries.length);
        // Replay owes exactly the effects the commits announced, in log order.
        expect(rebuilt.effects).toEqual(session.effects.flat());
        expect(verifyLog(session.machine, session.entries, { strict: true })).toEqual({
          ok: true,
          checkedEntries: session.entries.length,
        });
      }),
      RUNS,
    );
  });

  it('(b) replaying every prefix gives the state observed at that point', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { session, snapshots } = playScenario(scenario);
        expect(snapshots).toHaveLength(session.entries.length + 1);
        for (let k = 0; k <= session.entries.length; k++) {
          const prefix = rebuild(session.entries.slice(0, k)).state;
          expect(fingerprint(prefix), `prefix ${k}`).toBe(snapshots[k]);
        }
      }),
      RUNS,
    );
  });

  it('(c) a JSON round trip of the entries changes nothing', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { session } = playScenario(scenario);
        const text = JSON.stringify(session.entries);
        const parsed = JSON.parse(text) as LogEntry[];
        expect(parsed).toEqual(session.entries);
        expect(canonicalJson(parsed)).toBe(canonicalJson(session.entries));
        expect(verifyLog(createThreadMachine(), parsed, { strict: true }).ok).toBe(true);
        expect(fingerprint(rebuild(parsed).state)).toBe(fingerprint(session.state));
      }),
      RUNS,
    );
  });

  it('(d) changing any single entry is reported at exactly that index', () => {
    const tamperArb = fc.record({
      at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      how: fc.constantFrom('leaf', 'type', 'recordedAt', 'stateHash'),
      pick: fc.nat(),
    });
    fc.assert(
      fc.property(scenarioArb, tamperArb, (scenario, { at, how, pick }) => {
        const { session } = playScenario(scenario);
        const entries = session.entries;
        const index = Math.floor(at * entries.length);
        const tamper = (change: (target: LogEntry) => void) => {
          // A copy as read back from storage: structuredClone would keep the arrays that entries
          // share in memory (frozen parent lists) shared, so one edit would change two entries.
          const copy = JSON.parse(JSON.stringify(entries)) as LogEntry[];
          change(copy[index]!);
          return copy;
        };
        // A swapped type is tried with every other type: each one reaches different code.
        const copies =
          how === 'type'
            ? [...THREAD_EVENT_TYPES, 'bogus_happened']
                .filter((t) => t !== entries[index]!.event.type)
                .map((t) =>
                  tamper((target) => {
                    target.event.type = t;
                  }),
                )
            : [
                tamper((target) => {
                  if (how === 'leaf') {
                    tamperLeaf(target.event as unknown as Record<string, unknown>, pick);
                  }
                  if (how === 'recordedAt') {
                    target.recordedAt = iso(Date.parse(target.recordedAt) + 1 + (pick % 1000));
                  }
                  if (how === 'stateHash') {
                    const hash = target.verification!.stateHash;
                    const flipped = hash.endsWith('0') ? '1' : '0';
                    target.verification = { stateHash: hash.slice(0, -1) + flipped };
                  }
                }),
              ];
        for (const copy of copies) {
          expect(canonicalJson(copy)).not.toBe(canonicalJson(entries));
          const report = verifyLog(createThreadMachine(), copy, { strict: true });
          expect(report).toMatchObject({
            ok: false,
            firstBadIndex: index,
            checkedEntries: index,
            entryId: entries[index]!.id,
          });
          expect(replay(createThreadMachine(), copy, { verify: 'strict' }).ok).toBe(false);
        }
      }),
      RUNS,
    );
  });

  it('(e) the same entries always give deep-equal state', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { session } = playScenario(scenario);
        const once = rebuild(session.entries);
        const twice = rebuild(session.entries);
        const shared = rebuild(session.entries, session.machine);
        expect(summarise(twice.state)).toEqual(summarise(once.state));
        expect(summarise(shared.state)).toEqual(summarise(once.state));
        expect(twice.effects).toEqual(once.effects);
        // Re-committing the recorded events reproduces the recorded entries byte for byte.
        let state = createThreadMachine().initial;
        for (const entry of session.entries) {
          const again = must(
            commitEvent(state, structuredClone(entry.event) as unknown as ThreadEvent, {
              id: entry.id,
              recordedAt: entry.recordedAt,
            }),
          );
          expect(canonicalJson(again.entry)).toBe(canonicalJson(entry));
          // The text a commit hands the store is the entry's canonical text.
          expect(again.text).toBe(canonicalJson(again.entry));
          state = again.state;
        }
      }),
      RUNS,
    );
  });

  it('(f) old state values are unaffected by later commits, branches included', () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), (scenario, pick) => {
        const { session, snapshots } = playScenario(scenario);
        const { states } = session;
        const check = () => {
          states.forEach((state, k) => {
            expect(fingerprint(state), `state ${k}`).toBe(snapshots[k]);
          });
        };
        check();
        if (states.length < 2) return;
        // Branch from an older state (copy-on-divergence), then keep extending the main line.
        const k = 1 + (pick % (states.length - 1));
        const old = states[k]!;
        const extend = (from: ThreadState, id: string, payload: JsonValue) =>
          must(
            commitEvent(
              from,
              must(
                planAppendNodes(
                  from,
                  [{ kind: 'inference', payload, taint: { source: id }, usage: BRANCH_USAGE }],
                  session.now(),
                ),
              ),
              { id, recordedAt: session.now() },
            ),
          );
        const branch = extend(old, 'branch', { branch: k });
        check();
        const main = extend(session.state, 'main', { main: true });
        check();
        // Each line reads exactly as a replay of its own log would.
        const branchLog = [...session.entries.slice(0, k), branch.entry];
        expect(fingerprint(branch.state)).toBe(fingerprint(rebuild(branchLog).state));
        const mainLog = [...session.entries, main.entry];
        expect(fingerprint(main.state)).toBe(fingerprint(rebuild(mainLog).state));
      }),
      RUNS,
    );
  });

  it('(g) a fork at k replays to the state at k; diffLogs finds the divergence at k', () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), (scenario, pick) => {
        const { session, snapshots } = playScenario(scenario);
        const entries = session.entries;
        const k = pick % (entries.length + 1);
        const prefix = must(forkLog(entries, k));
        expect(fingerprint(rebuild(prefix).state)).toBe(snapshots[k]);

        const base = session.states[k]!;
        const divergent: ThreadEvent =
          k === 0
            ? must(planCreateThread('fork', {}))
            : { type: 'thread_forked', threadId: 'fork', fromThreadId: 't1', upToIndex: k };
        const next = must(
          commitEvent(base, divergent, { id: `e${k}`, recordedAt: iso(Date.parse(session.now())) }),
        );
        const forked = [...prefix, next.entry];
        expect(verifyLog(createThreadMachine(), forked, { strict: true }).ok).toBe(true);
        const diff = diffLogs(entries, forked);
        expect(diff.commonPrefix).toBe(k);
        expect(diff.onlyA).toEqual(entries.slice(k));
        expect(diff.onlyB).toEqual([next.entry]);
        // Forking left the original untouched.
        expect(fingerprint(rebuild(entries).state)).toBe(snapshots.at(-1));
      }),
      RUNS,
    );
  });
});

/** Changes one leaf of an event (not its type): the pick-th leaf in depth-first order. */
function tamperLeaf(event: Record<string, unknown>, pick: number): void {
  const leaves: Array<{ holder: Record<string, unknown> | unknown[]; key: string | number }> = [];
  const visit = (holder: Record<string, unknown> | unknown[], key: string | number) => {
    const value = (holder as Record<string | number, unknown>)[key];
    if (value !== null && typeof value === 'object') {
      const holderOf = value as Record<string, unknown> | unknown[];
      for (const k of Array.isArray(value) ? value.keys() : Object.keys(value)) visit(holderOf, k);
    } else {
      leaves.push({ holder, key });
    }
  };
  for (const key of Object.keys(event)) if (key !== 'type') visit(event, key);
  const { holder, key } = leaves[pick % leaves.length]!;
  const slot = holder as Record<string | number, unknown>;
  const value = slot[key];
  slot[key] =
    typeof value === 'string'
      ? `${value}~`
      : typeof value === 'number'
        ? value + 1
        : typeof value === 'boolean'
          ? !value
          : 0;
}
