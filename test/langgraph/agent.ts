/**
 * A small real LangGraph agent for the tests and the example: a scripted model that asks for one
 * `search` tool call per question and answers from the tool's result, a human review of each
 * tool call (`interrupt()`: only an approval runs it), and the tool itself.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ToolCall } from '@langchain/core/messages/tool';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import {
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { isApproved } from '../../src/langgraph/index.js';

type State = typeof MessagesAnnotation.State;

const lastHuman = (messages: BaseMessage[]) =>
  [...messages].reverse().find((m) => HumanMessage.isInstance(m));

function agent(state: State): Partial<State> {
  const last = state.messages.at(-1);
  const question = lastHuman(state.messages);
  const n = state.messages.length;
  if (ToolMessage.isInstance(last)) {
    return {
      messages: [new AIMessage({ id: `ai-${n}`, content: `Answer: ${String(last.content)}` })],
    };
  }
  return {
    messages: [
      new AIMessage({
        id: `ai-${n}`,
        content: 'Let me search for that.',
        tool_calls: [
          {
            id: `call-${n}`,
            name: 'search',
            args: { query: String(question?.content ?? '') },
            type: 'tool_call',
          },
        ],
      }),
    ],
  };
}

/** The human review: the graph pauses here; only an approval lets the tool call run. */
function review(state: State): Command {
  const call = (state.messages.at(-1) as AIMessage).tool_calls?.[0];
  const answer = interrupt({ question: 'Run this tool call?', toolCall: call });
  return new Command({ goto: isApproved(answer) ? 'tools' : END });
}

/** The tool; `onRun` hears of every call it runs (what a test checks a rejection against). */
const tools = (onRun: (call: ToolCall) => void) => (state: State) => {
  const calls = (state.messages.at(-1) as AIMessage).tool_calls ?? [];
  for (const call of calls) onRun(call);
  return {
    messages: calls.map(
      (call) =>
        new ToolMessage({
          id: `result-${call.id}`,
          tool_call_id: call.id!,
          content: `3 results for "${String(call.args.query)}"`,
        }),
    ),
  };
};

export function compileAgent(
  checkpointer: BaseCheckpointSaver,
  onToolRun: (call: ToolCall) => void = () => undefined,
) {
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', agent)
    .addNode('review', review, { ends: ['tools', END] })
    .addNode('tools', tools(onToolRun))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (state: State) =>
      ((state.messages.at(-1) as AIMessage).tool_calls?.length ?? 0) > 0 ? 'review' : END,
    )
    .addEdge('tools', 'agent')
    .compile({ checkpointer });
}
