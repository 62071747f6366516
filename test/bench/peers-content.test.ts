/**
 * The peer benchmark compares like with like: fed the same seeded turns, Weft's engine and
 * LangGraph's checkpointers read back the same conversation — latest, by a fresh client, as of
 * the middle turn, and in a fork there — on SQLite and on Postgres.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareViews, sampleTurns, turnMessagesOf } from '../../bench/peers/content.js';
import { openLangGraph } from '../../bench/peers/langgraph.js';
import type { Backend, Side } from '../../bench/peers/side.js';
import { openWeft } from '../../bench/peers/weft.js';
import {
  type ConversationView,
  expectedView,
  generateWorkload,
  MEMORY_EVERY,
  type Turn,
} from '../../bench/peers/workload.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';

const TURNS = 10;
const MID = 5;

interface Reads {
  latest: ConversationView;
  fresh: ConversationView;
  middle: ConversationView;
  fork: ConversationView;
}

/** Writes the turns turn by turn (or compacted) and reads everything back through the side. */
async function readBack(side: Side, turns: Turn[], compacted = false): Promise<Reads> {
  let mark: unknown;
  if (compacted) {
    await side.writeCompacted!(turns.slice(0, MID));
    mark = await side.mark();
    await side.writeCompacted!(turns.slice(MID));
  } else {
    for (const turn of turns) {
      await side.writeTurn(turn);
      if (turn.n === MID) mark = await side.mark();
    }
  }
  const latest = side.view(await side.readLatest());
  const reader = await side.coldReader();
  const fresh = side.view(await reader.read());
  await reader.close();
  const middle = side.view(await side.readAt(mark));
  // Last: a LangGraph fork is a new checkpoint of the same thread, and so its new latest state.
  const readFork = await side.fork(mark);
  return { latest, fresh, middle, fork: side.view(await readFork()) };
}

function expectWorkload(reads: Reads, turns: Turn[]): void {
  const latest = expectedView(turns);
  const middle = expectedView(turns.slice(0, MID));
  expect(reads.latest).toEqual(latest);
  expect(reads.fresh).toEqual(latest);
  expect(reads.middle).toEqual(middle);
  expect(reads.fork).toEqual(middle);
}

function contentSuite(backend: Backend, location: (name: string) => Promise<string>): void {
  const turns = generateWorkload(TURNS);
  const reads = new Map<string, Reads>();

  async function run(system: 'Weft' | 'LangGraph', compacted = false): Promise<Reads> {
    const key = `${system}${compacted ? ' compacted' : ''}`;
    const known = reads.get(key);
    if (known !== undefined) return known;
    const where = await location(key.replace(' ', '-'));
    const side =
      system === 'Weft'
        ? await openWeft({ backend, location: where })
        : await openLangGraph({ backend, location: where });
    try {
      const got = await readBack(side, turns, compacted);
      reads.set(key, got);
      return got;
    } finally {
      await side.close();
    }
  }

  it('Weft reads back the workload: latest, fresh client, middle turn and fork', async () => {
    expectWorkload(await run('Weft'), turns);
  });

  it('LangGraph reads back the workload: latest, fresh client, middle turn and fork', async () => {
    expectWorkload(await run('LangGraph'), turns);
  });

  it('both sides read the same messages for every sampled turn, and the same memory', async () => {
    const weft = await run('Weft');
    const peer = await run('LangGraph');
    for (const n of sampleTurns(TURNS)) {
      expect(turnMessagesOf(weft.latest, n)).toEqual(turnMessagesOf(peer.latest, n));
    }
    expect(weft.latest.memory).toEqual(peer.latest.memory);
    expect(Object.keys(weft.latest.memory).length).toBeGreaterThan(0);
    expect(compareViews('weft vs langgraph', weft.middle, peer.middle, sampleTurns(MID))).toBe(
      undefined,
    );
  });

  it('LangGraph with the history compacted into two invokes reads back the same states', async () => {
    expectWorkload(await run('LangGraph', true), turns);
  });
}

describe('peer benchmark content [sqlite]', () => {
  const root = mkdtempSync(join(tmpdir(), 'weft-peers-test-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  contentSuite('sqlite', async (name) => join(root, `${name}.db`));
});

describeWithPostgres('peer benchmark content', () => {
  const databases: TestDatabase[] = [];
  afterAll(() => Promise.all(databases.map((db) => db.drop())));
  contentSuite('postgres', async () => {
    const db = await createTestDatabase();
    databases.push(db);
    return db.url;
  });
});

describe('peer benchmark workload and check', () => {
  it('is deterministic per seed and shaped like an agent conversation', () => {
    const turns = generateWorkload(40);
    expect(generateWorkload(40)).toEqual(turns);
    expect(generateWorkload(40, 8)).not.toEqual(turns);
    // A prefix of a longer conversation: every size measures the same turns.
    expect(generateWorkload(80).slice(0, 40)).toEqual(turns);
    for (const turn of turns) {
      const inferences = turn.steps.filter((s) => s.type === 'inference');
      const results = turn.steps.flatMap((s) => (s.type === 'tool_result' ? [s.result] : []));
      expect(inferences.length).toBeGreaterThanOrEqual(1);
      expect(inferences.length).toBeLessThanOrEqual(2);
      expect(results.length).toBe(
        inferences.reduce(
          (n, s) => n + (s.type === 'inference' ? s.inference.toolCalls.length : 0),
          0,
        ),
      );
      for (const result of results) {
        expect(result.content.length).toBeGreaterThanOrEqual(1024);
        expect(result.content.length).toBeLessThanOrEqual(4096);
      }
      expect(turn.memory !== undefined).toBe(turn.n % MEMORY_EVERY === 0);
    }
  });

  it('the check names the first turn that differs, a memory difference and a missing message', () => {
    const turns = generateWorkload(TURNS);
    const expected = expectedView(turns);
    const samples = sampleTurns(TURNS);
    expect(compareViews('same', structuredClone(expected), expected, samples)).toBe(undefined);

    const changed = structuredClone(expected);
    const tool = changed.messages.findIndex((m) => m.role === 'tool');
    changed.messages[tool] = { ...changed.messages[tool]!, content: 'different output' } as never;
    expect(compareViews('changed', changed, expected, samples)?.detail).toMatch(/^turn 1 differs/);

    const forgot = structuredClone(expected);
    const key = Object.keys(forgot.memory)[0]!;
    forgot.memory[key] = 'something else';
    expect(compareViews('memory', forgot, expected, samples)?.detail).toMatch(/^memory differs/);

    const shorter = structuredClone(expected);
    // Drop a message of a turn the sample does not cover: only the full comparison sees it.
    const unsampled = [...Array(TURNS).keys()].map((i) => i + 1).find((n) => !samples.includes(n));
    expect(unsampled).toBeDefined();
    const first = shorter.messages.indexOf(turnMessagesOf(shorter, unsampled!)[1]!);
    shorter.messages.splice(first, 1);
    expect(compareViews('shorter', shorter, expected, samples)?.detail).toMatch(
      /messages read back, expected/,
    );
  });
});
