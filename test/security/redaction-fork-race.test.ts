/**
 * Review item 2: a fork racing `redactNodes` must not keep the payload. On SQLite and Postgres,
 * in one process (no restart), many times: a thread's secret node is redacted while the same
 * thread — and a fork made of it earlier — are forked at the same time. Afterwards no thread of
 * the lineage holds the secret in its state (the engine's cached one included), its projection,
 * its node payloads, its stored events, or the event hub's pages and derived state: whichever of
 * the two commands won, the fork either shares the redaction or was made after it.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Result } from '../../src/core/errors.js';
import { getNodeBySequence } from '../../src/core/graph/index.js';
import type { ThreadState } from '../../src/core/thread/index.js';
import type { Engine } from '../../src/engine/index.js';
import type { EventHub } from '../../src/events/index.js';
import { createReads, type Reads } from '../../src/reads/index.js';
import { type Backend, must, postgresBackend, sqliteBackend } from '../engine/support.js';
import { openNode } from '../events/support.js';
import { describeWithPostgres } from '../support/services.js';

const SECRET = 'ssn 078-05-1120';
const ROUNDS = 24;

const payloads = (state: ThreadState) =>
  Array.from(
    { length: state.graph.count },
    (_, i) => getNodeBySequence(state.graph, i + 1)?.payload,
  );

function raceSuite(backend: Backend) {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(() => backend.cleanup());

  async function open() {
    const url = await backend.freshUrl();
    const node = await openNode(url);
    const reads = createReads(node.engine, { databaseUrl: url });
    closers.push(
      () => node.close(),
      () => reads.close(),
    );
    return { engine: node.engine, hub: node.hub, reads };
  }

  /** Every place a thread's content can be read from in this process, as one text. */
  async function everythingOf(engine: Engine, hub: EventHub, reads: Reads, threadId: string) {
    const state = must(await engine.getState(threadId));
    const projection = must(await reads.projection(threadId, { maxNodes: 500 }));
    const nodes = await reads.nodePage({ threadId, take: 500 });
    const events = await reads.events(threadId, -1, 500);
    const entries = must(await engine.readEntries(threadId));
    const page = await hub.read(threadId, 0, state.length);
    const derived = await hub.latestState(threadId);
    return JSON.stringify([
      payloads(state),
      projection,
      nodes.map((n) => n.payload),
      events,
      entries,
      page,
      payloads(derived),
    ]);
  }

  it(`redacting while forking leaves the secret in no fork (${ROUNDS} rounds)`, async () => {
    const { engine, hub, reads } = await open();
    const leaks: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const source = `src-${round}`;
      must(await engine.createThread({ threadId: source }));
      const [goal] = must(
        await engine.appendNodes({
          threadId: source,
          nodes: [{ kind: 'goal', payload: { text: 'file the form' } }],
        }),
      ).nodes;
      const [secret] = must(
        await engine.appendNodes({
          threadId: source,
          nodes: [
            { kind: 'inference', payload: { text: `${SECRET} #${round}` }, parents: [goal!.id] },
          ],
        }),
      ).nodes;
      must(
        await engine.appendNodes({
          threadId: source,
          nodes: [{ kind: 'answer', payload: { text: 'filed' }, parents: [secret!.id] }],
        }),
      );
      // A fork made before: the race then also forks a fork (its history held by the source).
      must(await engine.forkThread({ threadId: source, newThreadId: `early-${round}` }));
      // Warm every cache the reads below go through, as a busy server would have them.
      await everythingOf(engine, hub, reads, source);
      await everythingOf(engine, hub, reads, `early-${round}`);

      const forks = [`a-${round}`, `b-${round}`, `c-${round}`];
      const redact = () =>
        engine.redactNodes({ threadId: source, nodeIds: [secret!.id], reason: 'erasure request' });
      const fork = (threadId: string, newThreadId: string) => () =>
        engine.forkThread({ threadId, newThreadId });
      const commands: Array<() => Promise<Result<unknown>>> = [
        fork(source, forks[0]!),
        fork(`early-${round}`, forks[1]!),
        fork(source, forks[2]!),
      ];
      // The redaction starts first, in the middle or last, round by round.
      commands.splice(round % (commands.length + 1), 0, redact);
      for (const result of await Promise.all(commands.map((run) => run()))) must(result);

      for (const threadId of [source, `early-${round}`, ...forks]) {
        const seen = await everythingOf(engine, hub, reads, threadId);
        if (seen.includes(SECRET)) leaks.push(`round ${round}: ${threadId} holds the secret`);
        // Made before the redaction (and sharing its entry) or after it (its log includes the
        // source's): either way the thread's own log records it.
        const report = must(await engine.verify(threadId));
        if (!report.ok || report.redactedNodes?.some((n) => !n.recorded) !== false) {
          leaks.push(`round ${round}: ${threadId} does not record the redaction`);
        }
      }
    }
    expect(leaks).toEqual([]);
  });
}

describe('redaction racing forks [sqlite]', () => raceSuite(sqliteBackend()));
describeWithPostgres('redaction racing forks', () => raceSuite(postgresBackend()));
