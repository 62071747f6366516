import { exportAgentState } from '../../src/core/graph/index.js';
import type { ThreadState } from '../../src/core/thread/index.js';

/**
 * Everything a ThreadState answers, as plain data: the graph through its export (a restored
 * state shares node storage with a later one), the node metadata it can see, the runs in map
 * order, and every other field as is — so a field added to ThreadState is compared too.
 */
export function comparableState(state: ThreadState) {
  return {
    ...state,
    graph: {
      config: state.graph.config,
      count: state.graph.count,
      ...exportAgentState(state.graph),
    },
    nodeMeta: state.nodeMeta.items.slice(0, state.nodeMeta.length),
    runs: [...state.runs],
  };
}
