/**
 * Review item 5: what redaction does not hide, as docs/security.md says it. A node id is a hash
 * of its kind, parents, payload and resource key (StateWeave's, byte for byte), so after a
 * redaction a low-entropy payload is still recovered offline from what any reader sees: id, kind
 * and parents. A random field in the payload — the documented remedy — is withheld with it, so
 * the same search finds nothing, while the id verified like any other before the redaction.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { getNode } from '../../src/core/graph/index.js';
import { nodeId } from '../../src/core/identity.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { must, sqliteBackend } from '../engine/support.js';

const backend = sqliteBackend();

/** Every four-digit PIN in the payload shape, tried against the node's id. */
function guessPin(
  node: { id: string; kind: string; parents: string[] },
  shape: (pin: string) => unknown,
) {
  for (let n = 0; n < 10_000; n++) {
    const pin = String(n).padStart(4, '0');
    if (nodeId({ kind: node.kind, parents: node.parents, payload: shape(pin) }) === node.id) {
      return pin;
    }
  }
  return undefined;
}

describe('guessing redacted payloads from node ids', () => {
  const engines: Engine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });
  afterAll(() => backend.cleanup());

  async function redacted(payload: Record<string, string>) {
    const engine = createEngine({ store: openThreadStore(await backend.freshUrl()) });
    engines.push(engine);
    must(await engine.createThread({ threadId: 't' }));
    must(
      await engine.appendNodes({
        threadId: 't',
        nodes: [{ kind: 'goal', payload: { text: 'set up the card' } }],
      }),
    );
    const [node] = must(
      await engine.appendNodes({ threadId: 't', nodes: [{ kind: 'inference', payload }] }),
    ).nodes;
    expect(must(await engine.verify('t')).ok).toBe(true);
    must(await engine.redactNodes({ threadId: 't', nodeIds: [node!.id], reason: 'erasure' }));
    // What a reader of the thread sees afterwards.
    const after = getNode(must(await engine.getState('t')).graph, node!.id)!;
    expect(JSON.stringify(after.payload)).not.toContain('4821');
    return { id: after.id, kind: after.kind, parents: [...after.parents] };
  }

  it('recovers a four-digit PIN from the id, kind and parents of its redacted node', async () => {
    const node = await redacted({ text: 'my pin is 4821' });
    expect(guessPin(node, (pin) => ({ text: `my pin is ${pin}` }))).toBe('4821');
  });

  it('finds nothing when the payload held a random field, withheld with it', async () => {
    const node = await redacted({ text: 'my pin is 4821', nonce: randomUUID() });
    expect(guessPin(node, (pin) => ({ text: `my pin is ${pin}` }))).toBeUndefined();
    // Without the withheld nonce no shape of the payload can be tried: the search has no key.
    expect(guessPin(node, (pin) => ({ text: `my pin is ${pin}`, nonce: '' }))).toBeUndefined();
  });
});
