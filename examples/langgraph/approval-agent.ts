/**
 * A LangGraph agent checkpointed by Weft, whose tool calls wait for a human approval in Weft's
 * approvals inbox:
 *
 *   DATABASE_URL=file:./data/weft.db npx tsx examples/langgraph/approval-agent.ts "find weft"
 *
 * The graph pauses at `interrupt()`; the interrupt is a pending approval of the Weft thread
 * (Query.approvals, Subscription.approvalRequested, the console). Resolve it from anywhere that
 * reaches the same database, e.g. a `weft serve` on it:
 *
 *   mutation { resolveApproval(input: { runId: "<runId>", threadId: "<threadId>",
 *     decision: "approved", response: { approved: true } }) { __typename } }
 *
 * `saver.waitForResume(config)` returns that response and the graph resumes with it. With
 * `--auto-approve` the program plays the reviewer itself (through the engine), to run unattended.
 * In an application import from the package: `import { WeftSaver } from 'weft/langgraph'`.
 */
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import {
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { openEngine } from '../../src/engine/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';

type State = typeof MessagesAnnotation.State;

/** A stand-in for a model: one search per question, then an answer from the result. */
function model(state: State): Partial<State> {
  const last = state.messages.at(-1);
  if (ToolMessage.isInstance(last)) {
    return { messages: [new AIMessage(`Here is what I found: ${String(last.content)}`)] };
  }
  const question = String(last?.content ?? '');
  return {
    messages: [
      new AIMessage({
        content: 'I will search for that.',
        tool_calls: [{ id: `call-${state.messages.length}`, name: 'search', args: { question } }],
      }),
    ],
  };
}

/** The human review: pauses the graph until the approval is resolved. */
function review(state: State): Command {
  const call = (state.messages.at(-1) as AIMessage).tool_calls?.[0];
  const answer = interrupt({ question: 'May the agent run this tool call?', toolCall: call }) as {
    approved?: boolean;
  };
  return new Command({ goto: answer?.approved === false ? END : 'search' });
}

function search(state: State): Partial<State> {
  const calls = (state.messages.at(-1) as AIMessage).tool_calls ?? [];
  return {
    messages: calls.map(
      (call) =>
        new ToolMessage({
          tool_call_id: call.id!,
          content: `3 documents about "${String(call.args.question)}"`,
        }),
    ),
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const autoApprove = args.includes('--auto-approve');
  const question = args.find((a) => !a.startsWith('--')) ?? 'find weft';
  const engine = await openEngine(process.env.DATABASE_URL ?? 'file:./data/weft.db');
  const saver = new WeftSaver({ engine });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('model', model)
    .addNode('review', review, { ends: ['search', END] })
    .addNode('search', search)
    .addEdge(START, 'model')
    .addConditionalEdges('model', (s: State) =>
      ((s.messages.at(-1) as AIMessage).tool_calls?.length ?? 0) > 0 ? 'review' : END,
    )
    .addEdge('search', 'model')
    .compile({ checkpointer: saver });

  const config = { configurable: { thread_id: process.env.THREAD_ID ?? `example-${Date.now()}` } };
  const threadId = saver.weftThreadId(config);
  await graph.invoke({ messages: [new HumanMessage(question)] }, config);
  const paused = await graph.getState(config);
  if (paused.next.length === 0) throw new Error('the graph finished without asking for review');

  console.log(`Waiting for an approval of Weft thread ${threadId} (Query.approvals lists it).`);
  if (autoApprove) {
    const state = await engine.getState(threadId);
    if (!state.ok) throw new Error(state.error.message);
    const waiting = [...state.value.runs.values()].find((run) => run.status === 'waiting');
    if (waiting === undefined) throw new Error('no run is waiting for an approval');
    const resolved = await engine.resolveApproval({
      runId: waiting.run_id,
      threadId,
      decision: 'approved',
      response: { approved: true },
    });
    if (!resolved.ok) throw new Error(resolved.error.message);
  }
  const resume = await saver.waitForResume(config);
  console.log(`Resolved: ${resume.decision} ${JSON.stringify(resume.response)}`);
  const done = await graph.invoke(new Command({ resume: resume.response }), config);
  console.log(String(done.messages.at(-1)?.content));
  await engine.close();
}

await main();
