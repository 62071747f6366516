/**
 * A LangGraph agent that remembers a user's preference across threads with WeftStore, and shows
 * where each remembered value came from:
 *
 *   DATABASE_URL=file:./data/weft.db npx tsx examples/langgraph/memory-agent.ts
 *
 * In thread `onboarding` the user says how they like answers; the agent stores it under
 * ["users", "ada"]. In thread `support`, a different conversation, the agent reads it back and
 * answers that way. Then the program prints the item's history: every version, with the
 * LangGraph thread and the Weft run that wrote it. On a `weft serve` over the same database, the
 * console shows the item as memory of the `langgraph-store` thread, and each writing run on its
 * own thread. In an application import from the package: `from 'weft/langgraph'`.
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { openEngine } from '../../src/engine/index.js';
import { WeftSaver, WeftStore } from '../../src/langgraph/index.js';

type State = typeof MessagesAnnotation.State;

const engine = await openEngine(process.env.DATABASE_URL ?? 'file:./data/weft.db');
const store = new WeftStore({ engine });
const user = ['users', 'ada'];

/** A stand-in for a model: learns "I prefer …" and answers in the remembered style. */
async function assistant(state: State): Promise<Partial<State>> {
  const said = String(state.messages.at(-1)?.content ?? '');
  const learned = /I prefer (\w+)/i.exec(said)?.[1];
  if (learned !== undefined) {
    await store.put(user, 'style', { style: learned.toLowerCase() });
    return { messages: [new AIMessage(`Noted: ${learned.toLowerCase()} answers from now on.`)] };
  }
  const style = (await store.get(user, 'style'))?.value.style ?? 'neutral';
  const answer = style === 'concise' ? 'Restart it.' : 'Try restarting the service, then …';
  return { messages: [new AIMessage(`(${style}) ${answer}`)] };
}

const graph = new StateGraph(MessagesAnnotation)
  .addNode('assistant', assistant)
  .addEdge(START, 'assistant')
  .compile({ checkpointer: new WeftSaver({ engine }), store });

for (const [thread, text] of [
  ['onboarding', 'Hi! I prefer concise answers.'],
  ['support', 'My service is stuck, what do I do?'],
]) {
  const done = await graph.invoke(
    { messages: [new HumanMessage(text!)] },
    { configurable: { thread_id: thread } },
  );
  console.log(`[${thread}] ${text}\n[${thread}] ${String(done.messages.at(-1)?.content)}`);
}

console.log('\nHistory of users/ada style:');
for (const v of await store.history(user, 'style')) {
  const by = v.writtenBy;
  console.log(
    `  #${v.logIndex} ${v.recordedAt} ${JSON.stringify(v.value)}` +
      (by === undefined ? '' : ` by thread ${by.langgraphThreadId} (${by.threadId}), run ${by.runId}`),
  );
}
await engine.close();
