/**
 * Shared deployment: an agent embeds WeftSaver on an engine of its own (`openEngineWithEvents`
 * with Redis, from the package entry) on the same Postgres as a Weft server with Redis. The
 * server's graphql-ws subscriber sees the agent's steps live: the server's hub repair poll is
 * off, so only the agent's Redis wake-up can deliver them. (Two engines and two hubs in one test
 * process: they share nothing but the database and Redis, as two processes would.)
 */
import { randomBytes } from 'node:crypto';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type EventedEngine, openEngineWithEvents } from '../../src/index.js';
import { WeftSaver } from '../../src/langgraph/index.js';
import {
  type LiveServer,
  type Payload,
  startServer,
  wsClient,
  wsSubscribe,
} from '../api/subscriptions-support.js';
import { freshPostgresUrl } from '../api/support.js';
import { describeWithPostgresAndRedis, REDIS_URL } from '../support/services.js';

function echo(saver: WeftSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', (state: typeof MessagesAnnotation.State) => {
      const asked = state.messages.at(-1)!;
      return {
        messages: [new AIMessage({ id: `a-${asked.id}`, content: `re: ${asked.content}` })],
      };
    })
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer: saver });
}

describeWithPostgresAndRedis('WeftSaver in an agent process, a server on the same database', () => {
  let server: LiveServer;
  let agent: EventedEngine;
  let ws: Client;
  const streams: AsyncIterableIterator<Payload>[] = [];

  beforeAll(async () => {
    const url = await freshPostgresUrl();
    const channel = `weft:test:${randomBytes(6).toString('hex')}`;
    server = await startServer(url, { redis: { url: REDIS_URL, channel, pollIntervalMs: 0 } });
    agent = await openEngineWithEvents(url, { redisUrl: REDIS_URL, redisChannel: channel });
    ws = wsClient(server.url);
  });
  afterAll(async () => {
    await Promise.all(streams.map((s) => s.return?.()));
    await ws?.dispose();
    await agent?.close();
    await server?.close();
  });

  it("the server's subscriber sees each step the agent checkpoints, live", async () => {
    const saver = new WeftSaver({ engine: agent.engine });
    const graph = echo(saver);
    const config = { configurable: { thread_id: 'across' } };
    await graph.invoke({ messages: [new HumanMessage({ id: 'q1', content: 'one' })] }, config);

    const stream = wsSubscribe(
      ws,
      `subscription($t: ID!) { nodeAppended(threadId: $t, afterSequence: 0) { kind payload } }`,
      { t: saver.weftThreadId(config) },
    );
    streams.push(stream);
    const seen: string[] = [];
    const until = async (messageId: string) => {
      while (!seen.includes(messageId)) {
        const next = await stream.next();
        if (next.done) throw new Error(`the subscription ended before ${messageId}`);
        const payload = (next.value as Payload).data?.nodeAppended?.payload;
        if (typeof payload?.messageId === 'string') seen.push(payload.messageId);
      }
    };
    await until('a-q1'); // replayed from the log

    for (const n of [2, 3]) {
      await graph.invoke(
        { messages: [new HumanMessage({ id: `q${n}`, content: `${n}` })] },
        config,
      );
      await until(`a-q${n}`); // only a live wake-up brings these
    }
    expect(seen).toEqual(['q1', 'a-q1', 'q2', 'a-q2', 'q3', 'a-q3']);
  });
});
