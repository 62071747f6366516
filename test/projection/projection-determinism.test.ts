import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Result } from '../../src/core/errors.js';
import { exportAgentState, type GraphState } from '../../src/core/graph/index.js';
import { compileProjection, type ProjectionInput } from '../../src/core/projection/index.js';
import { createEngine, type Engine, openEngine } from '../../src/engine/index.js';
import {
  createTestDatabase,
  describeWithPostgres,
  type TestDatabase,
} from '../support/services.js';
import { generateThread } from './generate.js';

/**
 * Acceptance: the same state and input give a byte-identical prompt for 100 generated graphs,
 * whether the state was built in memory or loaded through the engine from SQLite or Postgres.
 * Three in four threads are imported as AgentState; every fourth is written by appending its
 * nodes, so its state is rebuilt by replaying appended entries. The reading engine is a fresh
 * one (empty cache), so each state really comes from the database.
 */

const GRAPHS = 100;

interface Case {
  threadId: string;
  graph: GraphState;
  batches: ReturnType<typeof generateThread>['batches'];
  input: ProjectionInput;
  prompt: string;
}

const QUERIES = ['', 'deploy schema', 'retry cache', 'config read file'];

function cases(): Case[] {
  return Array.from({ length: GRAPHS }, (_, i) => {
    const seed = i + 1;
    const { graph, batches } = generateThread({ seed, nodes: 15 + ((seed * 37) % 220) });
    const input: ProjectionInput = {
      query: QUERIES[seed % QUERIES.length]!,
      projectionTargetTokens: seed % 3 === 0 ? 600 + seed * 10 : 16_000,
      maxNodes: 16 + (seed % 40),
    };
    return { threadId: `proj-${seed}`, graph, batches, input, prompt: mustPrompt(graph, input) };
  });
}

function mustPrompt(graph: GraphState, input: ProjectionInput): string {
  const result = compileProjection(graph, input);
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value.prompt;
}

function must<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value;
}

async function writeAll(engine: Engine, all: Case[]): Promise<void> {
  for (const [i, c] of all.entries()) {
    if (i % 4 === 3) {
      must(await engine.createThread({ threadId: c.threadId }));
      // Drafts default their parents to the frontier after the earlier drafts of the same call,
      // so chunking the batches builds the same graph with fewer commits.
      const drafts = c.batches.flat();
      for (let at = 0; at < drafts.length; at += 60) {
        must(await engine.appendNodes({ threadId: c.threadId, nodes: drafts.slice(at, at + 60) }));
      }
    } else {
      must(await engine.importState({ threadId: c.threadId, state: exportAgentState(c.graph) }));
    }
  }
}

async function expectSamePrompts(url: string, all: Case[]): Promise<void> {
  const reader = createEngine({ databaseUrl: url });
  try {
    for (const c of all) {
      const state = must(await reader.getState(c.threadId));
      expect(state.graph.count).toBe(c.graph.count);
      expect(state.graph).not.toBe(c.graph);
      expect(mustPrompt(state.graph, c.input), c.threadId).toBe(c.prompt);
      const viaState = compileProjection(state, c.input);
      expect(viaState.ok && viaState.value.prompt).toBe(c.prompt);
    }
  } finally {
    await reader.close();
  }
}

describe('projection determinism across storage', () => {
  const all = cases();

  it('is byte-identical when compiled again from fresh objects in memory', () => {
    for (const c of all) expect(mustPrompt(c.graph, c.input)).toBe(c.prompt);
    expect(new Set(all.map((c) => c.prompt)).size).toBe(GRAPHS);
  });

  describe('sqlite', () => {
    let root: string;
    let url: string;
    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'weft-projection-'));
      url = `file:${join(root, 'projection.db')}`;
      const writer = await openEngine(url);
      try {
        await writeAll(writer, all);
      } finally {
        await writer.close();
      }
    }, 300_000);
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('gives the same prompt for 100 graphs loaded from a SQLite file', async () => {
      await expectSamePrompts(url, all);
    }, 300_000);
  });

  describeWithPostgres('postgres', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
      const writer = await openEngine(db.url);
      try {
        await writeAll(writer, all);
      } finally {
        await writer.close();
      }
    }, 300_000);
    afterAll(() => db?.drop());

    it('gives the same prompt for 100 graphs loaded from Postgres', async () => {
      await expectSamePrompts(db.url, all);
    }, 300_000);
  });
});
