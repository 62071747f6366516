import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { type LogEntry, stampStateHashes } from '../../src/core/log/index.js';
import {
  foldThreadLog,
  type ThreadFoldStep,
  trustsRecordedIds,
} from '../../src/core/thread/fold.js';
import {
  createThreadMachine,
  planAppendNodes,
  planCreateThread,
  planRemember,
  planStartRun,
  type RecordedNode,
} from '../../src/core/thread/index.js';
import { createSession, failure, fingerprint, must } from './support/thread-fixtures.js';

/** A signed log of four entries: create, append two nodes, remember, start a run. */
function signedLog() {
  const s = createSession();
  s.commit(planCreateThread('t1', {}));
  s.commit(
    planAppendNodes(
      s.state,
      [
        { kind: 'system', payload: 'sys' },
        { kind: 'inference', payload: { n: 1 } },
      ],
      s.now(),
    ),
  );
  s.commit(planRemember(s.state, { type: 'memory', key: 'k', content: 1 }, s.now()));
  s.commit(planStartRun(s.state, { runId: 'r1', goal: 'g' }, s.now()));
  return s;
}

const copy = (entries: readonly LogEntry[]): LogEntry[] => structuredClone([...entries]);

/**
 * The log of `signedLog` with the first appended node's recorded id replaced by one that is not
 * its content's, every hash re-stamped over the forgery (what a forger who can sign does).
 */
function forgedLog(): { entries: LogEntry[]; forged: string } {
  const s = createSession();
  s.commit(planCreateThread('t1', {}));
  s.commit(planAppendNodes(s.state, [{ kind: 'system', payload: 'sys' }], s.now()));
  const entries = copy(s.entries);
  const forged = `cw_${'0'.repeat(24)}`;
  (entries[1]!.event.nodes as unknown as RecordedNode[])[0]!.id = forged;
  const stamped = stampStateHashes(createThreadMachine({ trustRecordedIds: true }), entries);
  return { entries: must(stamped).entries, forged };
}

describe('foldThreadLog', () => {
  it('folds a signed log to the state the writer had, from the start or from a state', () => {
    const s = signedLog();
    expect(fingerprint(must(foldThreadLog(s.entries)))).toBe(fingerprint(s.state));
    const tail = s.entries.slice(2);
    const texts = tail.map((e) => canonicalJson(e));
    expect(fingerprint(must(foldThreadLog(tail, { from: s.states[2]!, texts })))).toBe(
      fingerprint(s.state),
    );
  });

  it('hands each step its state before and after and its effects, in log order', () => {
    const s = signedLog();
    const steps: ThreadFoldStep[] = [];
    must(foldThreadLog(s.entries, { onEntry: (step) => steps.push(step) }));
    expect(steps.map((st) => st.entry.index)).toEqual([0, 1, 2, 3]);
    steps.forEach((step, i) => {
      expect(fingerprint(step.before)).toBe(fingerprint(s.states[i]!));
      expect(fingerprint(step.state)).toBe(fingerprint(s.states[i + 1]!));
      expect(step.effects).toEqual(s.effects[i]);
    });
  });

  it('refuses an entry whose state hash was tampered with (VERIFICATION_FAILED at it)', () => {
    const s = signedLog();
    const entries = copy(s.entries);
    entries[2]!.verification = { stateHash: 'f'.repeat(64) };
    expect(failure(foldThreadLog(entries))).toMatchObject({
      code: 'VERIFICATION_FAILED',
      index: 2,
      entryId: entries[2]!.id,
    });
    // Strict: the same, and an unsigned entry fails too.
    const unsigned = copy(s.entries);
    delete unsigned[1]!.verification;
    expect(failure(foldThreadLog(unsigned, { verify: 'strict' }))).toMatchObject({
      code: 'VERIFICATION_FAILED',
      index: 1,
    });
    expect(foldThreadLog(unsigned).ok).toBe(true);
  });

  it('refuses a payload edited after signing even while it trusts recorded ids', () => {
    const s = signedLog();
    const entries = copy(s.entries);
    (entries[1]!.event.nodes as unknown as RecordedNode[])[1]!.payload = { n: 2 };
    expect(trustsRecordedIds(entries, 'present')).toBe(true);
    expect(failure(foldThreadLog(entries))).toMatchObject({
      code: 'VERIFICATION_FAILED',
      index: 1,
      entryId: entries[1]!.id,
    });
  });

  it('refuses entries that are not contiguous from the starting state (VALIDATION_FAILED)', () => {
    const s = signedLog();
    const gap = [s.entries[0]!, ...s.entries.slice(2)];
    expect(failure(foldThreadLog(gap)).code).toBe('VALIDATION_FAILED');
    // A tail that does not start at the state's length.
    expect(failure(foldThreadLog(s.entries.slice(2), { from: s.states[1]! })).code).toBe(
      'VALIDATION_FAILED',
    );
    expect(failure(foldThreadLog(s.entries.slice(1))).code).toBe('VALIDATION_FAILED');
  });

  it('trusts recorded ids only on a fully signed log it may trust, with hashes checked', () => {
    const { entries, forged } = forgedLog();
    // Fully signed and trusted: the id is taken as recorded (the chain covers every byte).
    const trusted = must(foldThreadLog(entries));
    expect(trusted.graph.count).toBe(1);
    expect(trustsRecordedIds(entries, 'present')).toBe(true);

    // Partly unsigned: every id is recomputed, and the forgery is found.
    const partly = copy(entries);
    delete partly[0]!.verification;
    expect(trustsRecordedIds(partly, 'present')).toBe(false);
    expect(failure(foldThreadLog(partly))).toMatchObject({
      code: 'NODE_ID_MISMATCH',
      nodeId: forged,
    });

    // A log from elsewhere, however signed, and a fold that checks no hash: never trusted.
    for (const options of [
      { trust: false },
      { machine: { trustRecordedIds: false } },
      { verify: 'none' as const },
    ]) {
      expect(failure(foldThreadLog(entries, options))).toMatchObject({
        code: 'NODE_ID_MISMATCH',
        nodeId: forged,
      });
    }
    expect(trustsRecordedIds(entries, 'none')).toBe(false);
    expect(trustsRecordedIds(entries, 'present', false)).toBe(false);
  });

  it('a machine option asking for trust does not force it on an unsigned log', () => {
    const { entries, forged } = forgedLog();
    const partly = copy(entries);
    delete partly[1]!.verification;
    expect(failure(foldThreadLog(partly, { machine: { trustRecordedIds: true } }))).toMatchObject({
      code: 'NODE_ID_MISMATCH',
      nodeId: forged,
    });
  });
});
