import { ok } from '../errors.js';
import type { LogEntry, LogEvent } from './entry.js';
import type { LogMachine } from './replay.js';
import { chainStateHash, GENESIS_STATE_HASH } from './state-hash.js';

/**
 * The naive fold: apply every entry in order, no index or hash checks. A reference for
 * differential tests of `replay`; returns the first error thrown as a value by `apply`.
 */
export function foldLog<S, F, E extends LogEvent = LogEvent>(
  machine: LogMachine<S, F, E>,
  entries: readonly LogEntry<E>[],
  initial: S = machine.initial,
): S {
  let state = initial;
  for (const entry of entries) {
    const result = machine.apply(state, entry);
    if (!result.ok) throw new Error(`foldLog: entry ${entry.index}: ${result.error.message}`);
    state = result.value[0];
  }
  return state;
}

/** State of the event-chain machine: how many entries it has seen and the running hash. */
export interface EventChainState {
  length: number;
  stateHash: string;
}

/**
 * A machine whose derived state is only the hash chain over the events themselves (delta =
 * `{index, event}`). O(1) memory; useful to verify or stamp logs in store conformance tests
 * without a domain machine. Accepts every event and owes no effects.
 */
export function createEventChainMachine(): LogMachine<EventChainState, never> {
  return {
    initial: { length: 0, stateHash: GENESIS_STATE_HASH },
    apply: (state, entry) =>
      ok([
        {
          length: state.length + 1,
          stateHash: chainStateHash(state.stateHash, { index: entry.index, event: entry.event }),
        },
        [],
      ]),
    stateHash: (state) => state.stateHash,
  };
}
