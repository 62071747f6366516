/**
 * A LangGraph agent checkpointed by Weft, whose tool calls wait for a human approval in Weft's
 * approvals inbox, and run only when approved:
 *
 *   DATABASE_URL=file:./data/weft.db npx tsx examples/langgraph/approval-agent.ts "find weft"
 *
 * The graph pauses at `interrupt()`; the interrupt is a pending approval of the Weft thread
 * (Query.approvals, Subscription.approvalRequested, the console). Resolve it from anywhere that
 * reaches the same database, e.g. a `weft serve` on it:
 *
 *   mutation { resolveApproval(input: { runId: "<runId>", threadId: "<threadId>",
 *     decision: "approved" }) { __typename } }
 *
 * or with decision "rejected" (a response is optional either way). `saver.waitForResume(config)`
 * returns the resolution; the graph resumes with its `value`, `{ decision, response }`, and the
 * review node reads it with `getApproval`: a rejection never runs the tool. With `--auto-approve`
 * (or `--auto-reject`) the program plays the reviewer itself (through the engine), to run
 * unattended. In an application import from the package: `from 'weft/langgraph'`.
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
import { getApproval, WeftSaver } from '../../src/langgraph/index.js';

type State = typeof MessagesAnnotation.State;

/** A stand-in for a model: one search per question, then an answer from the result. */
function model(state: State): Partial<State> {
  const last = state.messages.at(-1);
  if (ToolMessage.isInstance(last) && last.status === 'error') {
    return { messages: [new AIMessage(`I did not run the search: ${String(last.content)}.`)] };
  }
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

/**
 * The human review: pauses the graph until the approval is resolved. Only an approval runs the
 * tool; anything else answers the call with a refusal, which the model reports.
 */
function review(state: State): Command {
  const call = (state.messages.at(-1) as AIMessage).tool_calls![0]!;
  const answer = getApproval(
    interrupt({ question: 'May the agent run this tool call?', toolCall: call }),
  );
  if (answer.approved) return new Command({ goto: 'search' });
  const said = answer.response === null ? '' : ` (${shown(answer.response)})`;
  const refusal = new ToolMessage({
    tool_call_id: call.id!,
    status: 'error',
    content: `the reviewer's decision was "${answer.decision}"${said}`,
  });
  return new Command({ goto: 'model', update: { messages: [refusal] } });
}

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

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
  const autoDecision = args.includes('--auto-approve')
    ? 'approved'
    : args.includes('--auto-reject')
      ? 'rejected'
      : undefined;
  const question = args.find((a) => !a.startsWith('--')) ?? 'find weft';
  const engine = await openEngine(process.env.DATABASE_URL ?? 'file:./data/weft.db');
  const saver = new WeftSaver({ engine });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('model', model)
    .addNode('review', review, { ends: ['search', 'model'] })
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

  const state = await engine.getState(threadId);
  if (!state.ok) throw new Error(state.error.message);
  const waiting = [...state.value.runs.values()].find((run) => run.status === 'waiting');
  if (waiting === undefined) throw new Error('no run is waiting for an approval');
  // Both ids, so that a reader can answer with resolveApproval without looking them up.
  console.log(
    `Waiting for an approval of Weft thread ${threadId}, run ${waiting.run_id} (Query.approvals lists it).`,
  );
  if (autoDecision !== undefined) {
    const resolved = await engine.resolveApproval({
      runId: waiting.run_id,
      threadId,
      decision: autoDecision,
    });
    if (!resolved.ok) throw new Error(resolved.error.message);
  }
  const resume = await saver.waitForResume(config);
  console.log(`Resolved: ${resume.decision}, resuming with ${JSON.stringify(resume.value)}`);
  const done = await graph.invoke(new Command({ resume: resume.value }), config);
  console.log(String(done.messages.at(-1)?.content));
  await engine.close();
}

await main();
