/**
 * Engine.readEntries's options: `nodePayloads: false` gives the same entries with the payloads
 * kept apart from them (packed) as null and every other field unchanged; `limit` pages through
 * the log, across a fork's shared history too; bad options are refused with a typed error. On
 * SQLite and Postgres, each also encrypted at rest.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/core/log/index.js';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { type Backend, postgresBackend, sqliteBackend } from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';

const must = <T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }): T => {
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

type Event = { type: string; nodes?: Array<{ payload: unknown }> };

/** The entries with every created node's payload replaced by null. */
const withoutPayloads = (entries: LogEntry[]) =>
  entries.map((entry) => {
    const event = entry.event as unknown as Event;
    if (event.nodes === undefined) return entry;
    return {
      ...entry,
      event: { ...event, nodes: event.nodes.map((n) => ({ ...n, payload: null })) },
    };
  });

/** `encrypted`: the store seals entries and payloads at rest (a packed entry is opened, then spliced). */
function suite(name: 'sqlite' | 'postgres', encrypted = false) {
  const backend: Backend = name === 'sqlite' ? sqliteBackend() : postgresBackend();
  let engine: Engine;
  let url: string;
  beforeAll(async () => {
    url = await backend.freshUrl();
    engine = await openEngine(
      url,
      encrypted ? { storeOptions: { encryptionKey: randomBytes(32) } } : {},
    );
  });
  afterAll(async () => {
    await engine.close();
    await backend.cleanup();
  });

  it('reads the entries without the payloads stored apart from them, and pages', async () => {
    const thread = must(await engine.createThread({ threadId: 'log' })).threadId;
    let parent: string[] = [];
    for (let i = 0; i < 6; i++) {
      // Big payloads are stored in their node rows only (packed entries), small ones inline.
      const text = i % 2 === 0 ? `big ${i} ${'x'.repeat(200)}` : `small ${i}`;
      const appended = must(
        await engine.appendNodes({
          threadId: thread,
          nodes: [{ kind: 'inference', parents: parent, payload: { text } }],
        }),
      );
      parent = [appended.nodes[0]!.id];
    }
    const full = must(await engine.readEntries(thread));
    const lean = must(await engine.readEntries(thread, 0, { nodePayloads: false }));
    expect(lean).toHaveLength(full.length);
    // Exactly the big payloads read as null; everything else as the full read has it.
    const payloads = lean.flatMap((e) =>
      ((e.event as unknown as Event).nodes ?? []).map((n) => n.payload),
    );
    expect(payloads.filter((p) => p === null)).toHaveLength(3);
    expect(payloads.filter((p) => p !== null)).toEqual([
      { text: 'small 1' },
      { text: 'small 3' },
      { text: 'small 5' },
    ]);
    expect(withoutPayloads(lean)).toEqual(withoutPayloads(full));

    // Pages of 2 from index 1 give the same entries as one read from there, and stop at the end.
    const fork = must(
      await engine.forkThread({ threadId: thread, upToIndex: 4, newThreadId: 'fork' }),
    );
    must(
      await engine.appendNodes({
        threadId: fork.threadId,
        nodes: [{ kind: 'inference', parents: parent.slice(0, 0), payload: { text: 'after' } }],
      }),
    );
    for (const id of [thread, fork.threadId]) {
      const whole = must(await engine.readEntries(id, 1));
      const pages: LogEntry[] = [];
      for (let from = 1; ; ) {
        const page = must(await engine.readEntries(id, from, { limit: 2 }));
        expect(page.length).toBeLessThanOrEqual(2);
        pages.push(...page);
        if (page.length < 2) break;
        from += page.length;
      }
      expect(pages, id).toEqual(whole);
    }
    if (encrypted) {
      // What was read was sealed: the database opens only with its key.
      await expect(openEngine(url)).rejects.toThrow(/key/i);
    }
  });

  it('refuses a bad page size, naming it', async () => {
    for (const limit of [0, -1, 2.5, Number.NaN, '3' as unknown as number]) {
      const read = await engine.readEntries('log', 0, { limit });
      expect(read.ok).toBe(false);
      if (!read.ok) expect(read.error.message).toContain('$.limit');
    }
  });
}

describe('Engine.readEntries options [sqlite]', () => suite('sqlite'));
describe('Engine.readEntries options [sqlite, encrypted]', () => suite('sqlite', true));
describeWithPostgres('Engine.readEntries options', () => suite('postgres'));
describeWithPostgres('Engine.readEntries options, encrypted', () => suite('postgres', true));
