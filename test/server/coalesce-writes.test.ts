import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { coalesceWrites } from '../../src/server/websocket.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A server socket (coalesced) and a client that never reads. */
async function pair(): Promise<{ server: WebSocket; raw: Duplex; client: WebSocket }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  const { port } = wss.address() as AddressInfo;
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${port}`);
  await once(client, 'open');
  const [server] = await accepted;
  client.pause();
  coalesceWrites(server);
  closers.push(() => {
    client.terminate();
    wss.close();
  });
  return { server, raw: (server as unknown as { _socket: Duplex })._socket, client };
}

describe('coalesceWrites', () => {
  it('queues one buffer per turn for a client that does not read, not one chunk per frame', async () => {
    const { server, raw } = await pair();
    const frame = 'x'.repeat(300);
    for (let t = 0; t < 200; t++) {
      for (let i = 0; i < 100; i++) server.send(frame);
      await turn();
    }
    // 20,000 frames of 300 bytes: far more than the kernel takes from a peer that does not read.
    expect(raw.writableLength).toBeGreaterThan(1_000_000);
    const queued = (raw as unknown as { writableBuffer: unknown[] }).writableBuffer.length;
    expect(queued).toBeGreaterThan(0);
    expect(queued).toBeLessThanOrEqual(200);
  });

  it('delivers every frame, in order, to a client that reads', async () => {
    const { server, client } = await pair();
    const got: string[] = [];
    client.on('message', (data: Buffer) => got.push(data.toString()));
    client.resume();
    for (let i = 0; i < 1_000; i++) server.send(`m${i}`);
    await turn();
    for (let i = 1_000; i < 2_000; i++) server.send(`m${i}`);
    while (got.length < 2_000) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(got).toEqual(Array.from({ length: 2_000 }, (_, i) => `m${i}`));
  });

  it('sends what a turn holds before the close frame', async () => {
    const { server, client } = await pair();
    const got: string[] = [];
    client.on('message', (data: Buffer) => got.push(data.toString()));
    client.resume();
    const closed = once(client, 'close');
    for (let i = 0; i < 50; i++) server.send(`m${i}`);
    server.close(4413, 'bye');
    const [code] = await closed;
    expect(code).toBe(4413);
    expect(got).toHaveLength(50);
  });
});
