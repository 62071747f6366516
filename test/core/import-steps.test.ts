/**
 * The step-wise import (`prepareImportState`, which the engine drives a chunk of nodes at a time)
 * against the single call (`planImportState` then `commitEvent`, which checks the state while
 * applying it): the same entry, state and error on every fixture, and a prepared graph is only
 * taken for the very state it was built from.
 */
import { describe, expect, it } from 'vitest';
import type { AgentState } from '../../src/core/graph/index.js';
import { runSteps } from '../../src/core/graph/index.js';
import {
  commitEvent,
  createThreadMachine,
  planImportState,
  prepareImportState,
  type ThreadMachineOptions,
} from '../../src/core/thread/index.js';
import { failure, iso, must, sampleAgentState, T0 } from './support/thread-fixtures.js';

const stamp = { id: 'entry-1', recordedAt: iso(T0) };
const initial = createThreadMachine().initial;

function singleCall(state: unknown, options: ThreadMachineOptions = {}) {
  const event = planImportState('t', state, {});
  if (!event.ok) return event;
  return commitEvent(initial, event.value, stamp, options);
}

function stepWise(state: unknown, options: ThreadMachineOptions = {}) {
  const steps = prepareImportState('t', state, {}, options.importLimits);
  let pauses = 0;
  for (;;) {
    const next = steps.next();
    if (next.done) {
      if (!next.value.ok) return { committed: next.value, pauses };
      const { event, importedGraph } = next.value.value;
      const committed = commitEvent(initial, event, stamp, { ...options, importedGraph });
      return { committed, pauses };
    }
    pauses++;
  }
}

describe('prepareImportState agrees with the single-call import', () => {
  it('commits the same entry, text and state, pausing between chunks of a large state', () => {
    const state = sampleAgentState(3_000);
    const one = must(singleCall(state));
    const { committed, pauses } = stepWise(state);
    const two = must(committed);
    expect(two.text).toBe(one.text);
    expect(two.state.stateHash).toBe(one.state.stateHash);
    expect(two.effects).toEqual(one.effects);
    expect(pauses).toBeGreaterThan(1);
  });

  const refusals: Array<[string, (s: AgentState) => void]> = [
    [
      'an altered payload',
      (s) => {
        s.nodes.at(-1)!.payload = { changed: true };
      },
    ],
    ['a duplicate frontier id', (s) => void s.frontier.push(s.frontier[0]!)],
    [
      'a bad sequence',
      (s) => {
        s.nodes[5]!.sequence = 99;
      },
    ],
  ];
  for (const [name, spoil] of refusals) {
    it(`refuses ${name} with the same error`, () => {
      const state = sampleAgentState(50);
      spoil(state);
      const one = failure(singleCall(state));
      expect(failure(stepWise(state).committed)).toEqual(one);
    });
  }

  it('applies the stricter of the planning limits and the machine limits', () => {
    const state = sampleAgentState(50);
    const options = { importLimits: { maxNodes: 10 } };
    expect(failure(singleCall(state, options)).code).toBe('STATE_TOO_LARGE');
    expect(failure(stepWise(state, options).committed).code).toBe('STATE_TOO_LARGE');
  });

  it('checks a state that is not the one the prepared graph was built from', () => {
    const state = sampleAgentState(20);
    const prepared = must(runSteps(prepareImportState('t', state, {})));
    const other = structuredClone(state);
    other.nodes.at(-1)!.payload = { changed: true };
    const event = { ...prepared.event, state: other };
    const refused = commitEvent(initial, event, stamp, { importedGraph: prepared.importedGraph });
    expect(failure(refused).code).toBe('NODE_ID_MISMATCH');
  });
});
