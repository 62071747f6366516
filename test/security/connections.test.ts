/**
 * graphql-ws connections are bounded. Over a real port with raw sockets: in
 * keyed mode a connection_init without a valid key is closed with 4403 (not acknowledged and
 * held); a socket that never sends connection_init is closed with 4408 after
 * WEFT_WS_INIT_TIMEOUT_MS; one socket past WEFT_WS_MAX_CONNECTIONS is refused at the upgrade
 * (503 TOO_MANY_CONNECTIONS); one past WEFT_WS_MAX_CONNECTIONS_PER_KEY is closed with 4429 while
 * another key still connects; one operation past WEFT_WS_MAX_SUBSCRIPTIONS on a socket gets
 * TOO_MANY_SUBSCRIPTIONS. Every refusal is counted in weft_websocket_refusals_total.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type App, buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { createTestApp } from '../api/support.js';
import { type AuthApp, createAuthApp } from '../auth/support.js';

let t: AuthApp;
let admin: string;

beforeAll(async () => {
  t = await createAuthApp({ mode: 'keys' });
  admin = (await t.key('acme', ['admin'])).key;
});
afterAll(() => t.close());

const servers: App[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop(100)));
});

/** A server on the shared database and keys with these WEFT_WS_* settings. */
async function serverWith(env: Record<string, string>): Promise<string> {
  const config = loadConfig({
    DATABASE_URL: t.databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    WEFT_REQUEST_LOG: 'off',
    ...env,
  });
  const app = buildApp({
    config,
    engine: t.engine,
    auth: t.authenticator,
    extendContext: () => ({ events: t.hub }),
  });
  servers.push(app);
  return app.start();
}

/** A raw graphql-transport-ws socket that records every message and its close code. */
class Raw {
  readonly messages: Array<Record<string, unknown>> = [];
  closed: { code: number; reason: string } | undefined;
  refused: { status: number; body: string } | undefined;
  readonly socket: WebSocket;
  private readonly waiters: Array<() => void> = [];

  constructor(url: string) {
    this.socket = new WebSocket(url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    this.socket.on('message', (data) => {
      this.messages.push(JSON.parse(String(data)));
      this.wake();
    });
    this.socket.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wake();
    });
    this.socket.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => {
        this.refused = { status: res.statusCode ?? 0, body };
        this.wake();
      });
    });
    this.socket.on('open', () => this.wake());
    this.socket.on('error', () => this.wake());
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves once `done()` holds (checked at every event; generous 10 s ceiling). */
  until(done: () => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no such event within 10 s')), 10_000);
      const check = () => {
        if (done()) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      check();
    });
  }

  opened(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.socket.readyState === WebSocket.OPEN) return resolve();
      this.socket.once('open', () => resolve());
      this.socket.once('unexpected-response', () => reject(new Error('refused')));
    });
  }

  send(message: object) {
    this.socket.send(JSON.stringify(message));
  }

  async init(key: string | undefined): Promise<void> {
    await this.opened();
    this.send({
      type: 'connection_init',
      payload: key === undefined ? {} : { authorization: `Bearer ${key}` },
    });
    await this.until(
      () => this.closed !== undefined || this.messages.some((m) => m.type === 'connection_ack'),
    );
  }

  get acknowledged(): boolean {
    return this.messages.some((m) => m.type === 'connection_ack');
  }

  close() {
    this.socket.close();
  }
}

const SUBSCRIPTION = 'subscription { threadEvents(threadId: "conn") { index } }';

async function metricsOf(url: string): Promise<string> {
  const response = await fetch(`${new URL(url).origin}/metrics`, {
    headers: { authorization: `Bearer ${admin}` },
  });
  return response.text();
}

const refusals = (text: string, reason: string): number => {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`weft_websocket_refusals_total{reason="${reason}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
};

describe('keyed mode', () => {
  it('connection_init without a valid key is closed with 4403, not acknowledged; a key is acknowledged', async () => {
    const url = await serverWith({});
    for (const key of [undefined, 'not-a-key']) {
      const socket = new Raw(url);
      await socket.init(key);
      expect(socket.acknowledged, String(key)).toBe(false);
      await socket.until(() => socket.closed !== undefined);
      expect(socket.closed?.code, String(key)).toBe(4403);
    }
    const keyed = new Raw(url);
    await keyed.init(admin);
    expect(keyed.acknowledged).toBe(true);
    keyed.close();
    expect(refusals(await metricsOf(url), 'unauthenticated')).toBe(2);
  });

  it('a socket that never sends connection_init is closed with 4408 after WEFT_WS_INIT_TIMEOUT_MS, and counted', async () => {
    const url = await serverWith({ WEFT_WS_INIT_TIMEOUT_MS: '200' });
    const silent = new Raw(url);
    await silent.opened();
    await silent.until(() => silent.closed !== undefined);
    expect(silent.closed?.code).toBe(4408);
    expect(refusals(await metricsOf(url), 'init_timeout')).toBe(1);
  });
});

describe('caps', () => {
  it('one socket past WEFT_WS_MAX_CONNECTIONS is refused at the upgrade with 503 TOO_MANY_CONNECTIONS', async () => {
    const url = await serverWith({ WEFT_WS_MAX_CONNECTIONS: '2' });
    const held = [new Raw(url), new Raw(url)];
    await Promise.all(held.map((s) => s.init(admin)));
    expect(held.every((s) => s.acknowledged)).toBe(true);
    const third = new Raw(url);
    await third.until(() => third.refused !== undefined);
    expect(third.refused?.status).toBe(503);
    expect(JSON.parse(third.refused?.body ?? '{}').errors[0].extensions.code).toBe(
      'TOO_MANY_CONNECTIONS',
    );
    // A slot freed is a slot usable again.
    held[0]!.close();
    await held[0]!.until(() => held[0]!.closed !== undefined);
    let again: Raw | undefined;
    for (let attempt = 0; attempt < 50; attempt++) {
      again = new Raw(url);
      await again.until(() => again!.refused !== undefined || again!.socket.readyState === 1);
      if (again.refused === undefined) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await again!.init(admin);
    expect(again!.acknowledged).toBe(true);
    expect(refusals(await metricsOf(url), 'connections')).toBeGreaterThanOrEqual(1);
    for (const s of [held[1]!, again!]) s.close();
  });

  it('one socket past WEFT_WS_MAX_CONNECTIONS_PER_KEY is closed with 4429; another key still connects', async () => {
    const url = await serverWith({ WEFT_WS_MAX_CONNECTIONS_PER_KEY: '2' });
    const other = (await t.key('other', ['read'])).key;
    const held = [new Raw(url), new Raw(url)];
    for (const s of held) await s.init(admin);
    expect(held.every((s) => s.acknowledged)).toBe(true);
    const third = new Raw(url);
    await third.init(admin);
    expect(third.acknowledged).toBe(false);
    await third.until(() => third.closed !== undefined);
    expect(third.closed?.code).toBe(4429);
    const otherKey = new Raw(url);
    await otherKey.init(other);
    expect(otherKey.acknowledged).toBe(true);
    // Closing one frees its slot for the same key.
    held[0]!.close();
    await held[0]!.until(() => held[0]!.closed !== undefined);
    let again: Raw | undefined;
    for (let attempt = 0; attempt < 50; attempt++) {
      again = new Raw(url);
      await again.init(admin);
      if (again.acknowledged) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(again!.acknowledged).toBe(true);
    expect(refusals(await metricsOf(url), 'connections_per_key')).toBeGreaterThanOrEqual(1);
    for (const s of [held[1]!, otherKey, again!]) s.close();
  });

  it('one operation past WEFT_WS_MAX_SUBSCRIPTIONS on a socket gets TOO_MANY_SUBSCRIPTIONS; completing one frees a slot', async () => {
    const url = await serverWith({ WEFT_WS_MAX_SUBSCRIPTIONS: '2' });
    const socket = new Raw(url);
    await socket.init(admin);
    for (const id of ['1', '2', '3']) {
      socket.send({ id, type: 'subscribe', payload: { query: SUBSCRIPTION } });
    }
    await socket.until(() => socket.messages.some((m) => m.id === '3' && m.type === 'error'));
    const refused = socket.messages.find((m) => m.id === '3') as {
      payload: Array<{ extensions?: { code?: string } }>;
    };
    expect(refused.payload[0]?.extensions?.code).toBe('TOO_MANY_SUBSCRIPTIONS');
    expect(socket.messages.some((m) => (m.id === '1' || m.id === '2') && m.type === 'error')).toBe(
      false,
    );
    socket.send({ id: '1', type: 'complete' });
    // The freed slot takes a new subscription: it is not refused, and answers a query too.
    for (let attempt = 0; attempt < 50; attempt++) {
      const id = `q${attempt}`;
      socket.send({ id, type: 'subscribe', payload: { query: '{ __typename }' } });
      await socket.until(() =>
        socket.messages.some((m) => m.id === id && (m.type === 'complete' || m.type === 'error')),
      );
      if (socket.messages.some((m) => m.id === id && m.type === 'next')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(
      socket.messages.some(
        (m) =>
          m.type === 'next' &&
          JSON.stringify(m.payload) === JSON.stringify({ data: { __typename: 'Subscription' } }),
      ) ||
        socket.messages.some(
          (m) =>
            m.type === 'next' &&
            JSON.stringify(m.payload) === JSON.stringify({ data: { __typename: 'Query' } }),
        ),
    ).toBe(true);
    expect(socket.closed).toBeUndefined();
    expect(refusals(await metricsOf(url), 'subscriptions')).toBeGreaterThanOrEqual(1);
    socket.close();
  });
});

describe('open mode', () => {
  it('has no per-key cap: every local client shares one identity, only the process cap applies', async () => {
    const open = await createTestApp({
      config: {
        requestLog: false,
        websocket: {
          initTimeoutMs: 3000,
          maxConnections: 100,
          maxConnectionsPerKey: 2,
          maxSubscriptions: 100,
        },
      },
    });
    try {
      const url = await open.app.start();
      const sockets = [new Raw(url), new Raw(url), new Raw(url), new Raw(url)];
      for (const s of sockets) await s.init(undefined);
      expect(sockets.map((s) => s.acknowledged)).toEqual([true, true, true, true]);
      for (const s of sockets) s.close();
    } finally {
      await open.close();
    }
  });
});

describe('message sizes', () => {
  it('a connection_init over 16 KB is closed with 4400 and not acknowledged; a small one is', async () => {
    const open = await createTestApp({ config: { requestLog: false } });
    try {
      const url = await open.app.start();
      const huge = new Raw(url);
      await huge.init('k'.repeat(100_000));
      expect(huge.acknowledged).toBe(false);
      await huge.until(() => huge.closed !== undefined);
      expect(huge.closed?.code).toBe(4400);
      const small = new Raw(url);
      await small.init('k'.repeat(1_000));
      expect(small.acknowledged).toBe(true);
      small.close();
    } finally {
      await open.close();
    }
  });

  it('a WebSocket message larger than WEFT_MAX_BODY_BYTES closes the socket with 1009', async () => {
    const open = await createTestApp({ config: { requestLog: false, maxBodyBytes: 64 * 1024 } });
    try {
      const url = await open.app.start();
      const socket = new Raw(url);
      await socket.init(undefined);
      expect(socket.acknowledged).toBe(true);
      socket.send({
        id: '1',
        type: 'subscribe',
        payload: { query: `{ __typename }`, variables: { pad: 'x'.repeat(100 * 1024) } },
      });
      await socket.until(() => socket.closed !== undefined);
      expect(socket.closed?.code).toBe(1009);
    } finally {
      await open.close();
    }
  });
});

describe('deep variables over graphql-ws', () => {
  it('variables nested deeper than the HTTP body bound get a BAD_USER_INPUT error message and write nothing; the socket stays', async () => {
    const open = await createTestApp({ config: { requestLog: false } });
    try {
      const url = await open.app.start();
      const socket = new Raw(url);
      await socket.init(undefined);
      const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
      const create =
        'mutation($m: JSON) { createThread(input: { threadId: "deep-ws", metadata: $m }) { __typename } }';
      socket.socket.send(
        `{"id":"1","type":"subscribe","payload":{"query":${JSON.stringify(create)},"variables":{"m":${deep}}}}`,
      );
      await socket.until(() => socket.messages.some((m) => m.id === '1'));
      const answer = socket.messages.find((m) => m.id === '1') as {
        type: string;
        payload: Array<{ message: string; extensions?: { code?: string } }>;
      };
      expect(answer.type).toBe('error');
      expect(answer.payload[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(answer.payload[0]?.message).toContain('more than 1100 levels');
      // The socket still answers, and nothing was created.
      socket.send({
        id: '2',
        type: 'subscribe',
        payload: { query: '{ thread(id: "deep-ws") { id } }' },
      });
      await socket.until(() => socket.messages.some((m) => m.id === '2' && m.type === 'next'));
      const next = socket.messages.find((m) => m.id === '2' && m.type === 'next') as {
        payload: { data: { thread: unknown } };
      };
      expect(next.payload.data.thread).toBeNull();
      expect(socket.closed).toBeUndefined();
      socket.close();
    } finally {
      await open.close();
    }
  });
});
