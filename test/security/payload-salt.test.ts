/**
 * Review item 5, the option Weft offers itself: createThread's saltPayloads. In a salted thread
 * every object payload gets a `weft:salt` field, an HMAC of the node's content under a secret of
 * the thread, before its id is computed. The brute force that recovers a PIN from a redacted
 * node's id, kind and parents in an unsalted thread finds nothing here, while every id is still
 * the plain content hash of what is stored (verify, export → import). Both backends; the secret
 * is read from the raw rows to show it is sealed under WEFT_ENCRYPTION_KEY and gone on deletion.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { exportAgentState, getNode, SALT_FIELD } from '../../src/core/graph/index.js';
import { nodeId, nodeIdentityText } from '../../src/core/identity.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { saltWith } from '../../src/engine/payload-salts.js';
import { openThreadStore, type ThreadStore } from '../../src/store/read-model/index.js';
import { createTestApp } from '../api/support.js';
import { type Backend, failure, must, postgresBackend, sqliteBackend } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';

/** Every four-digit PIN in each payload shape, tried against the node's id. */
function guessPin(
  node: { id: string; kind: string; parents: readonly string[] },
  shapes: Array<(pin: string) => unknown>,
): string | undefined {
  for (let n = 0; n < 10_000; n++) {
    const pin = String(n).padStart(4, '0');
    for (const shape of shapes) {
      const payload = shape(pin);
      if (nodeId({ kind: node.kind, parents: node.parents, payload }) === node.id) return pin;
    }
  }
  return undefined;
}

const SHAPES = [
  (pin: string) => ({ text: `my pin is ${pin}` }),
  // The field's name is public; without the secret its value can only be guessed.
  (pin: string) => ({ text: `my pin is ${pin}`, [SALT_FIELD]: '' }),
  (pin: string) => ({ text: `my pin is ${pin}`, [SALT_FIELD]: '0'.repeat(32) }),
];

/** The stored payload_salt column of a thread row (undefined: no row). */
async function rawSalt(
  backend: Backend,
  url: string,
  id: string,
): Promise<string | null | undefined> {
  if (backend.name === 'sqlite') {
    const db = new Database(url.replace(/^file:/, ''), { readonly: true });
    try {
      const row = db.prepare('SELECT payload_salt FROM thread WHERE id = ?').get(id) as
        | { payload_salt: string | null }
        | undefined;
      return row?.payload_salt;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT payload_salt FROM thread WHERE id = $1', [id]);
    return rows[0]?.payload_salt;
  } finally {
    await client.end();
  }
}

function saltSuite(backend: Backend) {
  const engines: Engine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });
  afterAll(() => backend.cleanup());

  async function open(options: { encryptionKey?: Uint8Array } = {}) {
    const url = await backend.freshUrl();
    const store: ThreadStore = openThreadStore(url, options);
    const engine = createEngine({ store });
    engines.push(engine);
    return { engine, store, url };
  }

  async function salted(engine: Engine, threadId = 't') {
    must(await engine.createThread({ threadId, saltPayloads: true }));
    must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'goal', payload: { text: 'set up the card' } }],
      }),
    );
  }

  it('the brute force that recovers a PIN in an unsalted thread finds nothing after redaction', async () => {
    const { engine, store } = await open();
    await salted(engine);
    const [node] = must(
      await engine.appendNodes({
        threadId: 't',
        nodes: [{ kind: 'inference', payload: { text: 'my pin is 4821' } }],
      }),
    ).nodes;
    // The salt is the HMAC of the thread, the node's sequence and its identity without the salt,
    // under the thread's secret.
    const secret = (await store.getPayloadSalt('t'))!;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const text = nodeIdentityText({
      kind: 'inference',
      parents: node!.parents,
      payload: { text: 'my pin is 4821' },
    });
    expect(node!.payload).toEqual({
      text: 'my pin is 4821',
      [SALT_FIELD]: saltWith(secret, 't')(text, node!.sequence),
    });
    expect(nodeId(node!)).toBe(node!.id);
    must(await engine.redactNodes({ threadId: 't', nodeIds: [node!.id], reason: 'erasure' }));
    const after = getNode(must(await engine.getState('t')).graph, node!.id)!;
    expect(JSON.stringify(after.payload)).not.toContain('4821');
    expect(JSON.stringify(after.payload)).not.toContain(
      (node!.payload as Record<string, string>)[SALT_FIELD],
    );
    expect(guessPin(after, SHAPES)).toBeUndefined();
    // With the secret (which no caller gets), the same search finds it: the salt is all it hides.
    const withSecret = (pin: string) => {
      const payload = { text: `my pin is ${pin}` };
      const salt = saltWith(secret, 't')(
        nodeIdentityText({ kind: after.kind, parents: after.parents, payload }),
        after.sequence,
      );
      return { ...payload, [SALT_FIELD]: salt };
    };
    expect(guessPin(after, [withSecret])).toBe('4821');
    expect(must(await engine.verify('t', { strict: true })).ok).toBe(true);
  });

  it('ids verify, export → import round-trips, identical content is a new node, memory is salted', async () => {
    const { engine } = await open();
    await salted(engine);
    const payload = { text: 'twice' };
    const first = must(
      await engine.appendNodes({
        threadId: 't',
        nodes: [{ kind: 'inference', payload, parents: [] }],
      }),
    );
    const again = must(
      await engine.appendNodes({
        threadId: 't',
        nodes: [{ kind: 'inference', payload, parents: [] }],
      }),
    );
    // The salt covers the sequence: content sent again is a new node, so an append never tells
    // whether that content is in the thread already.
    expect(again.nodes[0]!.id).not.toBe(first.nodes[0]!.id);
    const remembered = must(
      await engine.remember({ threadId: 't', type: 'memory', key: 'pin', content: '4821' }),
    );
    expect(remembered.node.payload).toMatchObject({
      content: '4821',
      [SALT_FIELD]: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    const state = must(await engine.getState('t'));
    expect(state.graph.count).toBe(4);
    expect(must(await engine.verify('t', { strict: true })).ok).toBe(true);
    const exported = exportAgentState(state.graph);
    must(await engine.importState({ threadId: 'copy', state: exported }));
    expect(must(await engine.verify('copy', { strict: true })).ok).toBe(true);
    expect(exportAgentState(must(await engine.getState('copy')).graph)).toEqual(exported);
  });

  it('an append cannot confirm a guess of a redacted payload (same thread, or a fork at its position)', async () => {
    const { engine } = await open();
    await salted(engine);
    const secretPayload = { text: 'my pin is 4821' };
    const [node] = must(
      await engine.appendNodes({
        threadId: 't',
        nodes: [{ kind: 'inference', payload: secretPayload }],
      }),
    ).nodes;
    must(await engine.forkThread({ threadId: 't', newThreadId: 'probe', upToIndex: 2 }));
    must(await engine.redactNodes({ threadId: 't', nodeIds: [node!.id], reason: 'erasure' }));
    // The guess, right among wrong ones, with the redacted node's parents: with a deterministic
    // salt the right one named the redacted node (refused as redacted, or its id returned).
    const guesses = ['0000', '4821', '9999'].map((pin) => ({
      kind: 'inference' as const,
      payload: { text: `my pin is ${pin}` },
      parents: node!.parents,
    }));
    const inThread = must(await engine.appendNodes({ threadId: 't', nodes: guesses }));
    expect(inThread.nodes.map((n) => n.id)).not.toContain(node!.id);
    // A fork made before the node, appending the right guess first, takes the node's sequence.
    const [forked] = must(
      await engine.appendNodes({
        threadId: 'probe',
        nodes: [{ kind: 'inference', payload: secretPayload, parents: node!.parents }],
      }),
    ).nodes;
    expect(forked!.sequence).toBe(node!.sequence);
    expect(forked!.id).not.toBe(node!.id);
    expect(must(await engine.verify('t', { strict: true })).ok).toBe(true);
    expect(must(await engine.verify('probe', { strict: true })).ok).toBe(true);
  });

  it('refuses a client-sent salt field and a non-object payload, writing nothing', async () => {
    const { engine } = await open();
    await salted(engine);
    const sent = failure(
      await engine.appendNodes({
        threadId: 't',
        nodes: [
          { kind: 'inference', payload: { text: 'ok' } },
          { kind: 'inference', payload: { text: 'forged', [SALT_FIELD]: 'abc' } },
        ],
      }),
    );
    expect(sent).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: `$.nodes[1].payload["${SALT_FIELD}"]` }],
    });
    const scalar = failure(
      await engine.appendNodes({ threadId: 't', nodes: [{ kind: 'inference', payload: 'a pin' }] }),
    );
    expect(scalar).toMatchObject({
      code: 'VALIDATION_FAILED',
      issues: [{ path: '$.nodes[0].payload' }],
    });
    expect(must(await engine.getState('t')).length).toBe(2);
    // An unsalted thread takes the field like any other: it is reserved in salted threads only.
    must(await engine.createThread({ threadId: 'plain' }));
    must(
      await engine.appendNodes({
        threadId: 'plain',
        nodes: [{ kind: 'inference', payload: { [SALT_FIELD]: 'mine' } }],
      }),
    );
  });

  it("a fork's new nodes are salted; deleting a thread removes its secret", async () => {
    const { engine, store, url } = await open();
    await salted(engine, 'src');
    must(await engine.forkThread({ threadId: 'src', newThreadId: 'fork' }));
    const [forked] = must(
      await engine.appendNodes({
        threadId: 'fork',
        nodes: [{ kind: 'inference', payload: { n: 1 } }],
      }),
    ).nodes;
    expect(forked!.payload).toHaveProperty(SALT_FIELD);
    expect(must(await engine.verify('fork', { strict: true })).ok).toBe(true);
    expect(await store.getPayloadSalt('fork')).toBe(await store.getPayloadSalt('src'));
    // The source's row stays while its fork reads its history: its secret does not.
    must(await engine.deleteThread({ threadId: 'src' }));
    expect(await rawSalt(backend, url, 'src')).toBeNull();
    expect(await store.getPayloadSalt('src')).toBeUndefined();
    expect(await rawSalt(backend, url, 'fork')).toMatch(/^[0-9a-f]{64}$/);
    must(await engine.deleteThread({ threadId: 'fork' }));
    expect(await rawSalt(backend, url, 'fork')).toBeUndefined();
    expect(await rawSalt(backend, url, 'src')).toBeUndefined();
  });

  it('with WEFT_ENCRYPTION_KEY the secret is stored sealed, not in plain text', async () => {
    const { engine, store, url } = await open({ encryptionKey: randomBytes(32) });
    await salted(engine);
    const secret = (await store.getPayloadSalt('t'))!;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const stored = (await rawSalt(backend, url, 't'))!;
    expect(stored.startsWith('wenc2:')).toBe(true);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(Buffer.from(secret, 'hex').toString('base64'));
  });
}

describe('payload salt (sqlite)', () => saltSuite(sqliteBackend()));
describeWithPostgres('payload salt (postgres)', () => saltSuite(postgresBackend()));

describe('payload salt through GraphQL', () => {
  it('createThread takes saltPayloads and Thread shows saltedPayloads', async () => {
    const t = await createTestApp({ backend: 'sqlite' });
    try {
      const created = await t.gql(`mutation {
        a: createThread(input: { threadId: "salted", saltPayloads: true }) { __typename }
        b: createThread(input: { threadId: "plain" }) { __typename }
      }`);
      expect(created.errors).toBeUndefined();
      const read = await t.gql(`{
        salted: thread(id: "salted") { saltedPayloads }
        plain: thread(id: "plain") { saltedPayloads }
      }`);
      expect(read.data).toEqual({
        salted: { saltedPayloads: true },
        plain: { saltedPayloads: false },
      });
    } finally {
      await t.close();
    }
  });
});
