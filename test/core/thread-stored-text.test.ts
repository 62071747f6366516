import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { type LogEntry, replay, verifyLog } from '../../src/core/log/index.js';
import {
  applyThreadEntry,
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  planCreateThread,
  type ThreadState,
} from '../../src/core/thread/index.js';
import { fingerprint } from './support/thread-fixtures.js';

/** A small signed log, as a store holds it: canonical texts. */
function storedLog(): string[] {
  const machine = createThreadMachine();
  let state: ThreadState = machine.initial;
  const texts: string[] = [];
  const commit = (plan: { ok: boolean; value?: unknown; error?: { message: string } }) => {
    if (!plan.ok) throw new Error(plan.error?.message);
    const at = `2026-01-01T00:00:0${texts.length}.000Z`;
    const done = commitEvent(state, plan.value as never, {
      id: `e${texts.length}`,
      recordedAt: at,
    });
    if (!done.ok) throw new Error(done.error.message);
    state = done.value.state;
    texts.push(canonicalJson(done.value.entry));
  };
  commit(planCreateThread('t1', { metadata: { z: 1, a: 2 } }));
  for (let i = 0; i < 5; i++) {
    commit(
      planAppendNodes(
        state,
        [{ kind: 'inference', payload: { text: `step ${i}`, n: i } }],
        '2026-01-01T00:00:09.000Z',
      ),
    );
  }
  return texts;
}

describe('replay with stored entry texts', () => {
  it('gives the same state hash as replay without them', () => {
    const texts = storedLog();
    const entries = texts.map((t) => JSON.parse(t) as LogEntry);
    const withTexts = replay(createThreadMachine(), entries, { verify: 'strict', texts });
    const without = replay(createThreadMachine(), entries, { verify: 'strict' });
    expect(withTexts.ok && without.ok).toBe(true);
    if (withTexts.ok && without.ok) {
      expect(withTexts.value.state.stateHash).toBe(without.value.state.stateHash);
      expect(withTexts.value.length).toBe(6);
    }
  });

  it('reports a tampered stored text at its index', () => {
    const texts = storedLog();
    for (let i = 1; i < texts.length; i++) {
      const tampered = [...texts];
      tampered[i] = tampered[i]!.replace(`step ${i - 1}`, `step ${i - 1}!`);
      expect(tampered[i]).not.toBe(texts[i]);
      const entries = tampered.map((t) => JSON.parse(t) as LogEntry);
      const report = verifyLog(createThreadMachine(), entries, { strict: true, texts: tampered });
      expect(report.ok).toBe(false);
      expect(report.firstBadIndex).toBe(i);
    }
  });

  it('hashes the same unsigned text whatever the stored signature looks like', () => {
    const texts = storedLog();
    // Signatures of other lengths, and ones whose JSON needs escapes, so the signature's start
    // cannot be computed from its length and has to be searched for.
    for (const signature of ['0', 'abc', 'a"b\\c', 'é\u2028x', `${'f'.repeat(63)}"`]) {
      const entries = texts.map((t) => {
        const entry = JSON.parse(t) as LogEntry;
        entry.verification = { stateHash: signature };
        return entry;
      });
      const signed = entries.map((entry) => canonicalJson(entry));
      const withTexts = replay(createThreadMachine(), entries, { verify: 'none', texts: signed });
      const without = replay(createThreadMachine(), entries, { verify: 'none' });
      const reference = replay(
        createThreadMachine(),
        texts.map((t) => JSON.parse(t) as LogEntry),
        { verify: 'strict' },
      );
      expect(withTexts.ok && without.ok && reference.ok).toBe(true);
      if (withTexts.ok && without.ok && reference.ok) {
        expect(withTexts.value.state.stateHash).toBe(reference.value.state.stateHash);
        expect(without.value.state.stateHash).toBe(reference.value.state.stateHash);
      }
    }
  });

  it('builds the same state when the effects are not collected, and then builds none', () => {
    const texts = storedLog();
    const entries = texts.map((t) => JSON.parse(t) as LogEntry);
    const collected = replay(createThreadMachine(), entries, {
      verify: 'strict',
      texts,
      collectEffects: true,
    });
    const plain = replay(createThreadMachine(), entries, { verify: 'strict', texts });
    expect(collected.ok && plain.ok).toBe(true);
    if (!collected.ok || !plain.ok) return;
    expect(collected.value.effects?.length).toBe(entries.length);
    expect(fingerprint(plain.value.state)).toBe(fingerprint(collected.value.state));
    const machine = createThreadMachine();
    const first = applyThreadEntry(machine.initial, entries[0]!, {}, texts[0], false);
    const withEffects = applyThreadEntry(machine.initial, entries[0]!, {}, texts[0]);
    expect(first.ok && withEffects.ok).toBe(true);
    if (first.ok && withEffects.ok) {
      expect(first.value[1]).toEqual([]);
      expect(withEffects.value[1]).toEqual([{ type: 'thread_created', threadId: 't1' }]);
      expect(fingerprint(first.value[0])).toBe(fingerprint(withEffects.value[0]));
    }
  });
});
