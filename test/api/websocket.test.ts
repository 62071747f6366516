/**
 * graphql-ws on the HTTP server's port and path: operations run through yoga's envelop (same
 * schema, context and plugins as HTTP). Subscriptions plug into this transport.
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestApp, type TestApp } from './support.js';

let t: TestApp;
let wsUrl: string;
beforeAll(async () => {
  t = await createTestApp({ config: { introspection: false } });
  wsUrl = (await t.app.start()).replace(/^http/, 'ws');
});
afterAll(() => t.close());

function execute(query: string): Promise<{ data?: unknown; errors?: Array<{ message: string }> }> {
  const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
  return new Promise((resolve, reject) => {
    let result: { data?: unknown; errors?: Array<{ message: string }> } = {};
    client.subscribe(
      { query },
      {
        next: (value) => {
          result = value as typeof result;
        },
        error: (error) => {
          void client.dispose();
          if (Array.isArray(error)) resolve({ errors: error as Array<{ message: string }> });
          else reject(error);
        },
        complete: () => {
          void client.dispose();
          resolve(result);
        },
      },
    );
  });
}

describe('graphql-ws on /graphql', () => {
  it('runs queries and mutations with the HTTP context (engine, reads)', async () => {
    const created = await execute(
      'mutation { createThread(input: { threadId: "ws" }) { __typename } }',
    );
    expect(created).toEqual({ data: { createThread: { __typename: 'CreateThreadSuccess' } } });
    const read = await execute('{ thread(id: "ws") { id logLength } }');
    expect(read).toEqual({ data: { thread: { id: 'ws', logLength: 1 } } });
  });

  it('applies the same plugins as HTTP (introspection off here)', async () => {
    const result = await execute('{ __schema { queryType { name } } }');
    expect(result.errors?.[0]?.message).toMatch(/introspection/i);
  });

  it('stop() closes open sockets', async () => {
    const socket = new WebSocket(wsUrl, 'graphql-transport-ws');
    await new Promise((resolve) => socket.once('open', resolve));
    const closed = new Promise<number>((resolve) => socket.once('close', resolve));
    await t.app.stop();
    expect(await closed).toBe(1001);
  });
});
