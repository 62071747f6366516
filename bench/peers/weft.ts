/**
 * The Weft side: the engine (`openEngine`) on a SQLite file or a Postgres database. A turn is one
 * `appendNodes` (goal, inference, tool_call…, tool_result…, answer nodes, chained on the frontier)
 * plus, on memory turns, one `remember`. Latest state: `getState`; time travel: `stateAt` at the
 * log length recorded after the middle turn; fork: `forkThread` up to that index.
 */
import { type AgentState, exportAgentState } from '../../src/core/graph/index.js';
import type { JsonValue } from '../../src/core/json.js';
import type { NodeInput, ThreadState } from '../../src/core/thread/index.js';
import { createEngine, type Engine, openEngine } from '../../src/engine/index.js';
import { measureSqliteFile, postgresBytes } from './langgraph.js';
import type { Backend, Side, Snapshot } from './side.js';
import type { ConversationView, Turn, ViewMessage } from './workload.js';

const THREAD_ID = 'bench-thread';

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(`Weft: ${result.error.message}`);
  return result.value;
}

/** The nodes of one turn, in order (tool calls as their own nodes after the inference). */
export function turnNodes(turn: Turn): NodeInput[] {
  const nodes: NodeInput[] = [{ kind: 'goal', payload: { text: turn.goal } }];
  for (const step of turn.steps) {
    if (step.type === 'inference') {
      nodes.push({ kind: 'inference', payload: { text: step.inference.text } });
      for (const call of step.inference.toolCalls) {
        nodes.push({ kind: 'tool_call', payload: { ...call } as JsonValue });
      }
    } else {
      nodes.push({ kind: 'tool_result', payload: { ...step.result } });
    }
  }
  nodes.push({ kind: 'answer', payload: { text: turn.answer } });
  return nodes;
}

/** Weft's read-back (the thread's causal nodes in order) as the comparable view. */
export function weftView(agentState: AgentState): ConversationView {
  const messages: ViewMessage[] = [];
  const memory: Record<string, string> = {};
  for (const node of agentState.nodes) {
    const payload = node.payload as Record<string, JsonValue>;
    switch (node.kind) {
      case 'goal':
        messages.push({ role: 'user', content: payload.text as string });
        break;
      case 'inference':
      case 'answer':
        messages.push({ role: 'assistant', content: payload.text as string, toolCalls: [] });
        break;
      case 'tool_call': {
        const last = messages.at(-1);
        if (last?.role !== 'assistant') throw new Error('tool_call node without an inference');
        last.toolCalls.push({
          id: payload.id as string,
          name: payload.name as string,
          args: payload.args as Record<string, string>,
        });
        break;
      }
      case 'tool_result':
        messages.push({
          role: 'tool',
          toolCallId: payload.toolCallId as string,
          content: payload.content as string,
        });
        break;
      case 'semantic':
        memory[payload.key as string] = payload.content as string;
        break;
      default:
        throw new Error(`unexpected node kind ${node.kind}`);
    }
  }
  return { messages, memory };
}

export interface WeftTarget {
  backend: Backend;
  /** SQLite: a file path; Postgres: a connection string of an empty database. */
  location: string;
}

type WeftSnapshot = { state: ThreadState } | { agentState: AgentState };

export async function openWeft(target: WeftTarget): Promise<Side> {
  const url = target.backend === 'sqlite' ? `file:${target.location}` : target.location;
  const engine: Engine = await openEngine(url);
  const baseline = target.backend === 'postgres' ? await postgresBytes(target.location) : 0;
  must(await engine.createThread({ threadId: THREAD_ID }));
  let length = 1;
  let forks = 0;

  return {
    system: 'Weft',
    backend: target.backend,
    async writeTurn(turn) {
      length = must(
        await engine.appendNodes({ threadId: THREAD_ID, nodes: turnNodes(turn) }),
      ).logLength;
      if (turn.memory !== undefined) {
        length = must(
          await engine.remember({
            threadId: THREAD_ID,
            type: 'memory',
            key: turn.memory.key,
            content: turn.memory.content,
          }),
        ).logLength;
      }
    },
    mark: async () => length,
    readLatest: async () => ({ state: must(await engine.getState(THREAD_ID)) }),
    async coldReader() {
      const fresh = createEngine({ databaseUrl: url });
      return {
        read: async () => ({ state: must(await fresh.getState(THREAD_ID)) }),
        close: () => fresh.close(),
      };
    },
    readAt: async (mark) => must(await engine.stateAt(THREAD_ID, mark as number)),
    async fork(mark) {
      const newThreadId = `${THREAD_ID}-fork-${++forks}`;
      must(
        await engine.forkThread({ threadId: THREAD_ID, upToIndex: mark as number, newThreadId }),
      );
      return async () => ({ state: must(await engine.getState(newThreadId)) });
    },
    view(snapshot: Snapshot) {
      const s = snapshot as WeftSnapshot;
      return weftView('agentState' in s ? s.agentState : exportAgentState(s.state.graph));
    },
    async bytes() {
      if (target.backend === 'sqlite') return measureSqliteFile(target.location);
      return (await postgresBytes(target.location)) - baseline;
    },
    close: () => engine.close(),
  };
}
