/**
 * The node rules hold on every path into the graph: an AgentState import (`importState`), a log
 * import (`weft import`, which replays the log), a fork (which replays the prefix it copies) and
 * the live writes (`remember`, `appendNodes`). A semantic node whose type is outside the thread's
 * vocabulary, whose resourceKey is not `semantic:<type>:<key>` of its payload (memory would show
 * the wrong key), or that breaks another rule one of these paths held and another did not, is
 * refused with a typed error naming the node and the field, and nothing is written. Through the
 * server over HTTP on SQLite and Postgres; a log import has no HTTP path, so crafted logs go
 * through the engine entry point `weft import` calls (importThreadLog), with state hashes
 * computed the way an attacker can.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import { type NodeKind, nodeId } from '../../src/core/identity.js';
import type { JsonValue } from '../../src/core/json.js';
import { chainStateHash, GENESIS_STATE_HASH, type LogEntry } from '../../src/core/log/index.js';
import { projectLog } from '../../src/engine/index.js';
import { importThreadLog } from '../../src/engine/transfer.js';
import { createTestApp, type TestApp } from '../api/support.js';
import { postgresAvailable } from '../support/services.js';

const pg = await postgresAvailable();
if (!pg.available) {
  if (process.env.REQUIRE_POSTGRES === '1') throw new Error(`Postgres required: ${pg.reason}`);
  console.warn(`import-rules: Postgres cases skipped (${pg.reason})`);
}

const T = '2026-01-01T00:00:00.000Z';

interface StateNode {
  id: string;
  kind: NodeKind;
  parents: string[];
  payload: JsonValue;
  createdAt: string;
  sequence: number;
  resourceKey?: string;
}

/** AgentState nodes with content ids computed as an honest (or hostile) writer would. */
function builder() {
  const nodes: StateNode[] = [];
  const add = (
    kind: NodeKind,
    payload: JsonValue,
    parents: string[] = [],
    resourceKey?: string,
  ): StateNode => {
    const sorted = [...parents].sort();
    const node: StateNode = {
      id: nodeId({ kind, parents: sorted, payload, resourceKey }),
      kind,
      parents: sorted,
      payload,
      createdAt: T,
      sequence: nodes.length + 1,
      ...(resourceKey === undefined ? {} : { resourceKey }),
    };
    nodes.push(node);
    return node;
  };
  return { nodes, add };
}

const semantic = (type: string, key: string, content: JsonValue) => ({ type, key, content });

/** A goal, then one semantic node built by `make`; the goal is the frontier. */
function stateWith(make: (add: ReturnType<typeof builder>['add'], goal: string) => StateNode) {
  const { nodes, add } = builder();
  const goal = add('goal', 'remember things');
  const target = make(add, goal.id);
  return { state: { version: 1, nodes, frontier: [goal.id] }, target };
}

/** A recorded node (a nodes_appended entry's), id over its content as recorded. */
function recorded(
  kind: NodeKind,
  payload: JsonValue,
  parents: string[],
  resourceKey?: string,
  id?: string,
) {
  return {
    id: id ?? nodeId({ kind, parents, payload, resourceKey }),
    kind,
    parents,
    payload,
    ...(resourceKey === undefined ? {} : { resourceKey }),
  };
}

/**
 * A signed log as an attacker writes it: every state hash computed from the entry itself, the
 * way replay chains them (`{created, entry, runs}` after the previous hash).
 */
function forgeLog(events: Array<{ event: Record<string, unknown>; created: string[] }>) {
  let previous = GENESIS_STATE_HASH;
  return events.map(({ event, created }, index): LogEntry => {
    const unsigned = {
      schemaVersion: 1 as const,
      id: `forged-${index}`,
      index,
      recordedAt: T,
      machineId: 'weft.thread',
      machineVersion: '1',
      event: event as LogEntry['event'],
    };
    previous = chainStateHash(previous, { created, entry: unsigned, runs: {} });
    return { ...unsigned, verification: { stateHash: previous } };
  });
}

const DEFAULT_TYPES = [
  { name: 'memory', description: 'Durable fact or context.' },
  { name: 'preference', description: 'Stable user choice or working style.' },
  { name: 'wisdom', description: 'Reusable evidence-supported lesson.' },
  { name: 'artifact', description: 'Durable output or artifact reference.' },
];

const created = (threadId: string) => ({
  event: {
    type: 'thread_created',
    threadId,
    metadata: null,
    nodeTypes: DEFAULT_TYPES,
    allowDynamicNodeTypes: false,
  },
  created: [],
});

const imported = (threadId: string, state: { nodes: StateNode[] }) => ({
  event: {
    type: 'state_imported',
    threadId,
    metadata: null,
    nodeTypes: DEFAULT_TYPES,
    allowDynamicNodeTypes: false,
    state,
  },
  created: state.nodes.map((n) => n.id),
});

const appended = (nodes: ReturnType<typeof recorded>[]) => ({
  event: { type: 'nodes_appended', nodes },
  created: nodes.map((n) => n.id),
});

const REFUSAL = `__typename
  ... on Error { code message }
  ... on InvalidStateError { nodeId }
  ... on ValidationError { nodeId issues { path message } }`;

const IMPORT = `mutation($input: ImportStateInput!) { importState(input: $input) { ${REFUSAL} } }`;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !pg.available)(`import rules on ${backend}`, () => {
    let t: TestApp;
    let url: string;
    beforeAll(async () => {
      t = await createTestApp({ backend });
      url = await t.app.start();
    });
    afterAll(() => t?.close());

    // biome-ignore lint/suspicious/noExplicitAny: responses are read loosely
    async function gql(query: string, variables: Record<string, unknown> = {}): Promise<any> {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      expect(response.status).toBe(200);
      return response.json();
    }

    async function importState(threadId: string, state: unknown, settings = {}) {
      const res = await gql(IMPORT, { input: { threadId, state, ...settings } });
      expect(res.errors).toBeUndefined();
      return res.data.importState;
    }

    /** Nothing of the thread was written: the API does not know it and the log is empty. */
    async function expectAbsent(threadId: string): Promise<void> {
      const res = await gql('query($id: ID!) { thread(id: $id) { id } }', { id: threadId });
      expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
      expect(await t.engine.store.getLogLength(threadId)).toBeUndefined();
    }

    async function memory(threadId: string) {
      const res = await gql('query($id: ID!) { thread(id: $id) { memory { type key content } } }', {
        id: threadId,
      });
      expect(res.errors).toBeUndefined();
      return res.data.thread.memory;
    }

    it('control: a semantic node in the vocabulary, keyed by its payload, imports and shows in memory', async () => {
      const { state } = stateWith((add, goal) =>
        add('semantic', semantic('memory', 'city', 'Oslo'), [goal], 'semantic:memory:city'),
      );
      expect((await importState('good', state)).__typename).toBe('ImportStateSuccess');
      expect(await memory('good')).toEqual([{ type: 'memory', key: 'city', content: 'Oslo' }]);
    });

    it('importState refuses a semantic node whose type is outside the vocabulary, naming node and field; nothing is written', async () => {
      const { state, target } = stateWith((add, goal) =>
        add('semantic', semantic('secret', 'k', 1), [goal], 'semantic:secret:k'),
      );
      const refused = await importState('bad-type', state);
      expect(refused).toMatchObject({
        __typename: 'InvalidStateError',
        code: 'NODE_SEMANTIC_TYPE_NOT_ALLOWED',
        nodeId: target.id,
      });
      expect(refused.message).toContain('payload.type');
      expect(refused.message).toContain('"secret"');
      await expectAbsent('bad-type');
      // The vocabulary is the import's own: naming the type (or allowing dynamic types) admits it.
      const typed = await importState('typed', state, {
        nodeTypes: [{ name: 'secret', description: 'Kept secret.' }],
      });
      expect(typed.__typename).toBe('ImportStateSuccess');
      expect(await memory('typed')).toEqual([{ type: 'secret', key: 'k', content: 1 }]);
      const dynamic = await importState('dynamic', state, { allowDynamicNodeTypes: true });
      expect(dynamic.__typename).toBe('ImportStateSuccess');
    });

    it('importState refuses a semantic node whose key differs from its resourceKey; nothing is written', async () => {
      const { state, target } = stateWith((add, goal) =>
        add('semantic', semantic('memory', 'owner', 'mallory'), [goal], 'semantic:memory:admin'),
      );
      const refused = await importState('bad-key', state);
      expect(refused).toMatchObject({
        __typename: 'InvalidStateError',
        code: 'NODE_SEMANTIC_INVALID',
        nodeId: target.id,
      });
      expect(refused.message).toContain('resourceKey');
      expect(refused.message).toContain('semantic:memory:owner');
      await expectAbsent('bad-key');
    });

    it('importState refuses every other node rule the live writes hold, naming node and field', async () => {
      type Case = [string, Parameters<typeof stateWith>[0], string, string];
      const cases: Case[] = [
        [
          'a non-semantic node with a semantic: resourceKey',
          (add, goal) => add('resource', { text: 'x' }, [goal], 'semantic:memory:city'),
          'NODE_RESOURCE_KEY_INVALID',
          'resourceKey',
        ],
        [
          'an empty resourceKey',
          (add, goal) => add('resource', { text: 'x' }, [goal], ''),
          'NODE_RESOURCE_KEY_INVALID',
          'resourceKey',
        ],
        [
          'a semantic node without resourceKey',
          (add, goal) => add('semantic', semantic('memory', 'city', 'Oslo'), [goal]),
          'NODE_SEMANTIC_INVALID',
          'resourceKey',
        ],
        [
          'a semantic key that is not in normal form',
          (add, goal) =>
            add(
              'semantic',
              semantic('memory', 'Home City', 'Oslo'),
              [goal],
              'semantic:memory:Home City',
            ),
          'NODE_SEMANTIC_INVALID',
          'payload.key',
        ],
        [
          'a semantic payload with an extra field',
          (add, goal) =>
            add(
              'semantic',
              { ...semantic('memory', 'city', 'Oslo'), note: 1 },
              [goal],
              'semantic:memory:city',
            ),
          'NODE_SEMANTIC_INVALID',
          'payload.note',
        ],
        [
          'a semantic content over 100,000 characters of JSON',
          (add, goal) =>
            add(
              'semantic',
              semantic('memory', 'big', 'x'.repeat(100_001)),
              [goal],
              'semantic:memory:big',
            ),
          'NODE_SEMANTIC_INVALID',
          'payload.content',
        ],
        [
          'a new version of a resource that does not descend from the previous one',
          (add, goal) => {
            add('resource', { v: 1 }, [goal], 'file:a.ts');
            return add('resource', { v: 2 }, [goal], 'file:a.ts');
          },
          'NODE_VERSION_PARENT_MISSING',
          'file:a.ts',
        ],
      ];
      for (const [name, make, code, field] of cases) {
        const { state, target } = stateWith(make);
        const threadId = `case-${cases.findIndex((c) => c[0] === name)}`;
        const refused = await importState(threadId, state);
        expect(refused, name).toMatchObject({
          __typename: 'InvalidStateError',
          code,
          nodeId: target.id,
        });
        expect(refused.message, name).toContain(field);
        await expectAbsent(threadId);
      }
      // A semantic node never enters the frontier.
      const { state, target } = stateWith((add, goal) =>
        add('semantic', semantic('memory', 'city', 'Oslo'), [goal], 'semantic:memory:city'),
      );
      state.frontier.push(target.id);
      const refused = await importState('semantic-head', state);
      expect(refused).toMatchObject({ code: 'FRONTIER_INVALID', nodeId: target.id });
      expect(refused.message).toContain('semantic');
      await expectAbsent('semantic-head');
    });

    it('the live writes refuse the same nodes (remember, appendNodes) and write nothing', async () => {
      const made = await gql(
        'mutation { createThread(input: { threadId: "live" }) { __typename } }',
      );
      expect(made.data.createThread.__typename).toBe('CreateThreadSuccess');
      const remember = await gql(
        `mutation { remember(input: { threadId: "live", type: "secret", key: "k", content: 1 }) { ${REFUSAL} } }`,
      );
      expect(remember.data.remember.code).toBe('SEMANTIC_TYPE_NOT_ALLOWED');
      const append = async (node: Record<string, unknown>) => {
        const res = await gql(
          `mutation($n: [NodeInput!]!) { appendNodes(input: { threadId: "live", nodes: $n }) { ${REFUSAL} } }`,
          { n: [node] },
        );
        expect(res.errors).toBeUndefined();
        return res.data.appendNodes;
      };
      expect((await append({ kind: 'SEMANTIC', payload: semantic('secret', 'k', 1) })).code).toBe(
        'SEMANTIC_TYPE_NOT_ALLOWED',
      );
      const wrongKey = await append({
        kind: 'SEMANTIC',
        payload: semantic('memory', 'owner', 'mallory'),
        resourceKey: 'semantic:memory:admin',
      });
      expect(wrongKey.code).toBe('VALIDATION_FAILED');
      expect(wrongKey.issues[0].path).toContain('resourceKey');
      const reserved = await append({
        kind: 'RESOURCE',
        payload: 1,
        resourceKey: 'semantic:memory:admin',
      });
      expect(reserved.code).toBe('VALIDATION_FAILED');
      expect(reserved.issues[0].path).toContain('resourceKey');
      const read = await gql('{ thread(id: "live") { logLength memory { key } } }');
      expect(read.data.thread).toEqual({ logLength: 1, memory: [] });
    });

    it('a crafted log (weft import) with such nodes is refused, naming node and field; nothing is written', async () => {
      // Control: a forged log that keeps the rules imports, so the hashes are forged correctly.
      const good = stateWith((add, goal) =>
        add('semantic', semantic('memory', 'city', 'Oslo'), [goal], 'semantic:memory:city'),
      );
      const fine = recorded(
        'semantic',
        semantic('memory', 'zip', '0150'),
        [],
        'semantic:memory:zip',
      );
      const control = forgeLog([imported('x', good.state), appended([fine])]);
      const accepted = await importThreadLog(t.engine, 'log-good', control);
      expect(accepted.ok && accepted.value.logLength).toBe(2);
      expect(await memory('log-good')).toEqual([
        { type: 'memory', key: 'city', content: 'Oslo' },
        { type: 'memory', key: 'zip', content: '0150' },
      ]);

      const badType = stateWith((add, goal) =>
        add('semantic', semantic('secret', 'k', 1), [goal], 'semantic:secret:k'),
      );
      const badKey = stateWith((add, goal) =>
        add('semantic', semantic('memory', 'owner', 'mallory'), [goal], 'semantic:memory:admin'),
      );
      const secret = recorded('semantic', semantic('secret', 'k', 1), [], 'semantic:secret:k');
      const admin = recorded(
        'semantic',
        semantic('memory', 'owner', 'mallory'),
        [],
        'semantic:memory:admin',
      );
      // Not in normal form: the live path would store "home-city", so its id cannot be this one.
      const raw = recorded(
        'semantic',
        semantic('memory', 'Home City', 1),
        [],
        'semantic:memory:home-city',
      );
      const v1 = recorded('resource', { v: 1 }, [], 'file:a.ts');
      // Recorded without its previous version as a parent (the live path always adds it).
      const v2 = recorded('resource', { v: 2 }, [], 'file:a.ts');
      const logs: Array<[string, LogEntry[], string, string, string]> = [
        [
          'state_imported, type outside the vocabulary',
          forgeLog([imported('x', badType.state)]),
          'NODE_SEMANTIC_TYPE_NOT_ALLOWED',
          badType.target.id,
          'payload.type',
        ],
        [
          'state_imported, key differs from resourceKey',
          forgeLog([imported('x', badKey.state)]),
          'NODE_SEMANTIC_INVALID',
          badKey.target.id,
          'resourceKey',
        ],
        [
          'nodes_appended, type outside the vocabulary',
          forgeLog([created('x'), appended([secret])]),
          'NODE_SEMANTIC_TYPE_NOT_ALLOWED',
          secret.id,
          'payload.type',
        ],
        [
          'nodes_appended, key differs from resourceKey',
          forgeLog([created('x'), appended([admin])]),
          'NODE_SEMANTIC_INVALID',
          admin.id,
          'resourceKey',
        ],
        [
          'nodes_appended, a semantic payload not in normal form',
          forgeLog([created('x'), appended([raw])]),
          'NODE_SEMANTIC_INVALID',
          raw.id,
          'payload.key',
        ],
        [
          'nodes_appended, parents that are not the ones the append resolves',
          forgeLog([created('x'), appended([v1]), appended([v2])]),
          'NODE_PARENTS_INVALID',
          v2.id,
          'parents',
        ],
      ];
      for (const [name, log, code, node, field] of logs) {
        const threadId = `log-${logs.findIndex((l) => l[0] === name)}`;
        const result = await importThreadLog(t.engine, threadId, log);
        expect(result.ok, name).toBe(false);
        if (result.ok) continue;
        expect(result.error, name).toMatchObject({ code, nodeId: node });
        expect(result.error.message, name).toContain(field);
        await expectAbsent(threadId);
      }
    });

    // A fully signed log's node ids are not taken as recorded on import: the signature proves
    // nothing about a log its author signed.
    it('a crafted log whose node id is not its content hash is refused (NODE_ID_MISMATCH)', async () => {
      const forged = recorded('goal', 'x', [], undefined, `cw_${'0'.repeat(24)}`);
      const result = await importThreadLog(
        t.engine,
        'log-forged-id',
        forgeLog([created('x'), appended([forged])]),
      );
      expect(!result.ok && result.error).toMatchObject({
        code: 'NODE_ID_MISMATCH',
        nodeId: forged.id,
      });
      await expectAbsent('log-forged-id');
    });

    it('a crafted log with text or numbers a live write refuses (a NUL, a lone surrogate, past 2^53) is VALIDATION_FAILED naming the path, nothing written', async () => {
      for (const [name, payload] of [
        ['log-nul', { text: 'a\u0000b' }],
        ['log-surrogate', { text: 'a\ud800b' }],
        ['log-big-number', { n: 2 ** 53 + 2 }],
      ] as const) {
        const node = recorded('goal', payload, []);
        const result = await importThreadLog(
          t.engine,
          name,
          forgeLog([created('x'), appended([node])]),
        );
        expect(!result.ok && result.error, name).toMatchObject({ code: 'VALIDATION_FAILED' });
        expect(!result.ok && result.error.message, name).toMatch(
          /^\$\[1\]\.event\.nodes\[0\]\.payload/,
        );
        await expectAbsent(name);
      }
    });

    it('a fork cannot copy such a node into a new thread', async () => {
      // A thread whose stored log holds a bad node, as a store written before these rules would:
      // the entry is put in place of a good one, hash and all, bypassing replay.
      const good = stateWith((add, goal) =>
        add('semantic', semantic('memory', 'city', 'Oslo'), [goal], 'semantic:memory:city'),
      );
      const bad = stateWith((add, goal) =>
        add('semantic', semantic('memory', 'owner', 'mallory'), [goal], 'semantic:memory:admin'),
      );
      const [goodEntry] = forgeLog([imported('old', good.state)]);
      const [badEntry] = forgeLog([imported('old', bad.state)]);
      const projected = projectLog('old', [goodEntry!]);
      expect(projected.ok).toBe(true);
      if (!projected.ok) return;
      const changes = projected.value.changes!;
      changes.entries[0]!.entry = canonicalJson(badEntry);
      expect((await t.engine.store.commit(changes)).ok).toBe(true);

      const fork = await gql(
        `mutation { forkThread(input: { threadId: "old", newThreadId: "old-fork" }) { ${REFUSAL} } }`,
      );
      expect(fork.errors).toBeUndefined();
      expect(fork.data.forkThread).toMatchObject({
        __typename: 'InvalidStateError',
        code: 'NODE_SEMANTIC_INVALID',
        nodeId: bad.target.id,
      });
      await expectAbsent('old-fork');
    });
  });
}
