/**
 * Shared execution of subscription events (src/server/shared-execution.ts): identical
 * subscriptions of one caller execute the document once per event — one read-model read for all
 * of them — while a different document or a different caller (`principal` in the context) gets
 * an execution of its own, and every subscriber still receives the event. Over SSE in process
 * (yoga.fetch), with the caller named by a request header.
 */
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../../src/graphql/context.js';
import { schema } from '../../src/graphql/schema.js';
import { createReads, type Reads } from '../../src/reads/index.js';
import {
  type SharedSubscriptionOptions,
  useSharedSubscriptions,
} from '../../src/server/shared-execution.js';
import { must, type Node, openNode, sqliteDatabases } from '../events/support.js';
import { type Payload, sseSubscribe, takeData } from './subscriptions-support.js';

const BY_ID = `subscription($t: ID!) { nodeAppended(threadId: $t) { id sequence payload } }`;
const SEQUENCE_ONLY = `subscription($t: ID!) { nodeAppended(threadId: $t) { sequence } }`;

const dbs = sqliteDatabases();
let node: Node;
let url: string;

beforeAll(async () => {
  url = await dbs.fresh();
  node = await openNode(url);
});
afterAll(async () => {
  await node.close();
  await dbs.cleanup();
});

/** A yoga with the plugin, whose context names the caller from `x-principal`; counts node reads. */
function serve(options: SharedSubscriptionOptions = {}) {
  const reads = createReads(node.engine, { databaseUrl: url });
  let nodeReads = 0;
  const counted = new Proxy(reads, {
    get(target, property, receiver) {
      if (property === 'nodes') {
        return (...args: Parameters<Reads['nodes']>) => {
          nodeReads++;
          return target.nodes(...args);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
  const yoga = createYoga({
    schema,
    logging: false,
    maskedErrors: { isDev: false },
    context: ({ request }: { request: Request }) => ({
      ...createContext({ engine: node.engine, reads: counted }),
      events: node.hub,
      principal: request.headers.get('x-principal') ?? undefined,
    }),
    plugins: [useSharedSubscriptions(options)],
  });
  const subscribe = (principal: string, query: string, threadId: string) =>
    sseSubscribe('http://weft.test/graphql', query, { t: threadId }, (target, init) =>
      Promise.resolve(
        yoga.fetch(target, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), 'x-principal': principal },
        }),
      ),
    );
  return {
    subscribe,
    nodeReads: () => nodeReads,
    close: async () => {
      await yoga.dispose();
      await reads.close();
    },
  };
}

/** Opens the subscribers, waits until each is attached to the hub, appends one node. */
async function oneEvent(
  server: ReturnType<typeof serve>,
  threadId: string,
  subscribers: Array<[principal: string, query: string]>,
) {
  must(await node.engine.createThread({ threadId }));
  const before = node.hub.stats().listeners;
  const streams = subscribers.map(([principal, query]) =>
    server.subscribe(principal, query, threadId),
  );
  // SSE requests start on the first pull: pull each once (the event arrives after the append).
  const firsts = streams.map((s) => takeData(s, 1));
  // Each subscriber's own live stream (until the first event it shares with its group), and the
  // one stream of their group (src/events/groups.ts).
  const attached = before + subscribers.length + 1;
  for (let i = 0; i < 500 && node.hub.stats().listeners < attached; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(node.hub.stats().listeners).toBe(attached);
  const readsBefore = server.nodeReads();
  must(
    await node.engine.appendNodes({
      threadId,
      nodes: [{ kind: 'inference', payload: { hello: threadId } }],
    }),
  );
  const received = (await Promise.all(firsts)).map(
    ([data]) => data as NonNullable<Payload['data']>,
  );
  await Promise.all(streams.map((s) => s.return?.()));
  return { received, reads: server.nodeReads() - readsBefore };
}

describe('shared subscription execution', () => {
  it('identical subscriptions of one caller execute once per event; other documents and callers apart', async () => {
    const server = serve();
    try {
      const { received, reads } = await oneEvent(server, 'shared-1', [
        ['alice', BY_ID],
        ['alice', BY_ID],
        ['alice', BY_ID],
        ['bob', BY_ID],
        ['bob', BY_ID],
        ['alice', SEQUENCE_ONLY],
      ]);
      expect(received).toHaveLength(6);
      const full = received[0]!.nodeAppended;
      expect(full).toMatchObject({ sequence: 1, payload: { hello: 'shared-1' } });
      for (const data of received.slice(0, 5)) expect(data.nodeAppended).toEqual(full);
      expect(received[5]!.nodeAppended).toEqual({ sequence: 1 });
      // alice × BY_ID, bob × BY_ID, alice × SEQUENCE_ONLY: three executions, one read each.
      expect(reads).toBe(3);
    } finally {
      await server.close();
    }
  });

  it('a caller without an identity key is executed on its own', async () => {
    const server = serve({ identify: () => undefined });
    try {
      const { received, reads } = await oneEvent(server, 'shared-2', [
        ['alice', BY_ID],
        ['alice', BY_ID],
        ['alice', BY_ID],
      ]);
      expect(received.map((d) => d.nodeAppended.sequence)).toEqual([1, 1, 1]);
      expect(reads).toBe(3);
    } finally {
      await server.close();
    }
  });
});
