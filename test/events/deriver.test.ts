/**
 * The effect deriver folds stored entries the way the engine loads them: recorded ids trusted
 * only on a signed log, and every state hash present checked. A tampered entry is refused with
 * the engine's typed error, never turned into events.
 */
import { describe, expect, it } from 'vitest';
import { isWeftFailure } from '../../src/core/errors.js';
import type { LogEntry } from '../../src/core/log/index.js';
import {
  planAppendNodes,
  planCreateThread,
  planStartRun,
  type RecordedNode,
} from '../../src/core/thread/index.js';
import { createEffectDeriver } from '../../src/events/deriver.js';
import type { ThreadStore } from '../../src/store/read-model/index.js';
import { createSession, fingerprint } from '../core/support/thread-fixtures.js';

function session() {
  const s = createSession();
  s.commit(planCreateThread('t', {}));
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
  s.commit(planStartRun(s.state, { runId: 'r1', goal: 'g' }, s.now()));
  s.commit(planAppendNodes(s.state, [{ kind: 'answer', payload: 'done' }], s.now()));
  return s;
}

/** A store holding one thread `t` with `entries`: all the deriver reads. */
function storeOf(entries: readonly LogEntry[]): ThreadStore {
  return {
    readEntries: async (threadId: string, from = 0, to?: number) =>
      threadId === 't' ? structuredClone(entries.slice(from, to)) : [],
  } as unknown as ThreadStore;
}

async function refusal(promise: Promise<unknown>) {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isWeftFailure(thrown)).toBe(true);
  if (!isWeftFailure(thrown)) throw new Error('expected a WeftFailure');
  return thrown.error;
}

describe('effect deriver', () => {
  it('derives the effects the writer had, from the entries given and from the store', async () => {
    const s = session();
    const deriver = createEffectDeriver(storeOf(s.entries), {}, 2);
    expect(await deriver.effectsOf('t', s.entries.slice(2))).toEqual(s.effects.slice(2));
    expect(fingerprint(await deriver.latestState('t'))).toBe(fingerprint(s.state));
  });

  it('rejects an entry whose stateHash does not match (VERIFICATION_FAILED at it)', async () => {
    const s = session();
    const tampered = structuredClone(s.entries);
    tampered[2]!.verification = { stateHash: 'f'.repeat(64) };
    // Handed over (a published or re-read item) …
    const given = createEffectDeriver(storeOf(s.entries));
    expect(await refusal(given.effectsOf('t', tampered.slice(2)))).toMatchObject({
      code: 'VERIFICATION_FAILED',
      index: 2,
      entryId: tampered[2]!.id,
    });
    // … or read from the store on the way to a later entry.
    const stored = createEffectDeriver(storeOf(tampered));
    expect(await refusal(stored.effectsOf('t', s.entries.slice(3)))).toMatchObject({
      code: 'VERIFICATION_FAILED',
      index: 2,
    });
    expect(await refusal(createEffectDeriver(storeOf(tampered)).latestState('t'))).toMatchObject({
      code: 'VERIFICATION_FAILED',
      index: 2,
    });
  });

  it('rejects a node payload edited after signing, though recorded ids are trusted', async () => {
    const s = session();
    const edited = structuredClone(s.entries);
    (edited[1]!.event.nodes as unknown as RecordedNode[])[1]!.payload = { n: 2 };
    const deriver = createEffectDeriver(storeOf(edited));
    expect(await refusal(deriver.latestState('t'))).toMatchObject({
      code: 'VERIFICATION_FAILED',
      index: 1,
      entryId: edited[1]!.id,
    });
  });

  it('still derives an unsigned log (ids recomputed), and refuses a forged id in it', async () => {
    const s = session();
    const unsigned = structuredClone(s.entries).map((e) => {
      delete e.verification;
      return e;
    });
    const deriver = createEffectDeriver(storeOf(unsigned));
    expect((await deriver.latestState('t')).length).toBe(4);
    const forged = structuredClone(unsigned);
    (forged[3]!.event.nodes as unknown as RecordedNode[])[0]!.id = `cw_${'0'.repeat(24)}`;
    expect(await refusal(createEffectDeriver(storeOf(forged)).latestState('t'))).toMatchObject({
      code: 'NODE_ID_MISMATCH',
    });
  });
});
