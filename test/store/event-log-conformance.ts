/**
 * The event-log store conformance suite (the @statelyai/agent store contract). Every store
 * backend runs it unchanged: `describeEventLogStoreConformance(name, makeStore)`.
 *
 * Round-trip rule checked here: entries read back verbatim, key order included — for every
 * entry, `JSON.stringify(read) === JSON.stringify(appended)` byte for byte, whatever order the
 * writer used (JavaScript enumerates integer-like keys first in both, so that holds for them
 * too). `canonicalJson(read) === canonicalJson(appended)` follows, so hashes over the canonical
 * text are unaffected. The cases named as upstream names them ("a single append reads back
 * verbatim", "metadata round-trips verbatim", "stored entries are isolated from caller
 * mutation") build their entries as upstream does, envelope keys in upstream's order.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import type { Result, WeftError } from '../../src/core/errors.js';
import type { JsonObject } from '../../src/core/json.js';
import type { LogEntry } from '../../src/core/log/index.js';
import type { EventLogStore } from '../../src/store/event-log/index.js';
import { makeAwkwardEntry, makeBatch, makeEntry, newThreadId } from './event-log-fixtures.js';

export interface EventLogStoreFixture {
  store: EventLogStore;
  /**
   * A second store over the same storage through its own connection(s) (e.g. a second Prisma
   * client), so concurrent appends race for real. Defaults to `store`.
   */
  peer?: EventLogStore;
  cleanup: () => Promise<void>;
}

const RACE_REPETITIONS = 20;
const LARGE_BATCH = 5000;

function must<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

function failure<T>(result: Result<T>): WeftError {
  if (result.ok) throw new Error(`expected an error, got ok ${JSON.stringify(result.value)}`);
  return result.error;
}

/** Byte identity of what was read with what was appended; the canonical texts agree too. */
function expectByteIdentical(read: LogEntry[], appended: LogEntry[]): void {
  expect(read.length).toBe(appended.length);
  read.forEach((entry, i) => {
    expect(JSON.stringify(entry)).toBe(JSON.stringify(appended[i]));
    expect(canonicalJson(entry)).toBe(canonicalJson(appended[i]));
  });
}

/** An entry as upstream's conformance suite builds one: envelope keys in its order. */
function upstreamEntry(index: number, type: string, metadata?: JsonObject): LogEntry {
  return {
    schemaVersion: 1,
    id: `evt_${index}`,
    index,
    recordedAt: '2026-01-01T00:00:00.000Z',
    machineId: 'conformance',
    machineVersion: 'v1',
    event: { type, seq: index },
    ...(metadata !== undefined ? { metadata } : {}),
  };
}

export function describeEventLogStoreConformance(
  name: string,
  makeStore: () => Promise<EventLogStoreFixture>,
): void {
  describe(`event-log store conformance: ${name}`, () => {
    let fixture: EventLogStoreFixture;
    let store: EventLogStore;
    beforeEach(async () => {
      fixture = await makeStore();
      store = fixture.store;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    describe('unknown threads', () => {
      it('have length 0 and read as []', async () => {
        const threadId = newThreadId();
        expect(await store.length(threadId)).toBe(0);
        expect(await store.read(threadId)).toEqual([]);
        expect(await store.read(threadId, { from: 3 })).toEqual([]);
      });

      it('are appendable at index 0', async () => {
        const threadId = newThreadId();
        const entries = makeBatch(0, 3);
        expect(must(await store.append({ threadId, expectedIndex: 0, entries }))).toEqual({
          length: 3,
        });
        expect(await store.length(threadId)).toBe(3);
        expect(await store.read(threadId)).toEqual(entries);
      });
    });

    describe('append', () => {
      it('continues the log at the returned length, one batch after another', async () => {
        const threadId = newThreadId();
        must(await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 2, 'a') }));
        const second = await store.append({
          threadId,
          expectedIndex: 2,
          entries: makeBatch(2, 3, 'b'),
        });
        expect(must(second)).toEqual({ length: 5 });
        const read = await store.read(threadId);
        expect(read.map((e) => e.index)).toEqual([0, 1, 2, 3, 4]);
        expect(read.map((e) => e.id)).toEqual(['a-0', 'a-1', 'b-2', 'b-3', 'b-4']);
      });

      it('keeps threads apart (same entry ids in two threads are fine)', async () => {
        const [a, b] = [newThreadId('a'), newThreadId('b')];
        must(await store.append({ threadId: a, expectedIndex: 0, entries: makeBatch(0, 2) }));
        must(await store.append({ threadId: b, expectedIndex: 0, entries: makeBatch(0, 1) }));
        expect(await store.length(a)).toBe(2);
        expect(await store.length(b)).toBe(1);
        expect(await store.read(b)).toEqual(makeBatch(0, 1));
      });

      it('refuses a stale expectedIndex with CONFLICT {threadId, expectedIndex, actualIndex}', async () => {
        const threadId = newThreadId();
        must(await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 2) }));
        for (const expectedIndex of [0, 1, 3, 10]) {
          const error = failure(
            await store.append({
              threadId,
              expectedIndex,
              entries: makeBatch(expectedIndex, 1, 'x'),
            }),
          );
          expect(error).toMatchObject({
            code: 'CONFLICT',
            threadId,
            expectedIndex,
            actualIndex: 2,
          });
        }
        expect(await store.length(threadId)).toBe(2);
        expect((await store.read(threadId)).map((e) => e.id)).toEqual(['e-0', 'e-1']);
      });

      it('refuses a non-zero expectedIndex on an unknown thread with CONFLICT actualIndex 0', async () => {
        const threadId = newThreadId();
        const error = failure(
          await store.append({ threadId, expectedIndex: 1, entries: makeBatch(1, 1) }),
        );
        expect(error).toMatchObject({ code: 'CONFLICT', expectedIndex: 1, actualIndex: 0 });
        expect(await store.length(threadId)).toBe(0);
      });

      it('tells a writer replaying an already-landed batch that it is stale (CONFLICT before duplicate ids)', async () => {
        const threadId = newThreadId();
        const entries = makeBatch(0, 2);
        must(await store.append({ threadId, expectedIndex: 0, entries }));
        const error = failure(await store.append({ threadId, expectedIndex: 0, entries }));
        expect(error).toMatchObject({ code: 'CONFLICT', actualIndex: 2 });
      });

      it('requires entries[i].index === expectedIndex + i', async () => {
        const threadId = newThreadId();
        must(await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 1) }));
        const cases: LogEntry[][] = [
          [makeEntry(2, 'x')], // gap
          [makeEntry(0, 'x')], // behind
          [makeEntry(1, 'x'), makeEntry(3, 'x')], // gap inside the batch
          [makeEntry(1, 'x'), makeEntry(1, 'y')], // repeated index
        ];
        for (const entries of cases) {
          const error = failure(await store.append({ threadId, expectedIndex: 1, entries }));
          expect(error.code).toBe('VALIDATION_FAILED');
          expect(error.message).toMatch(/index must be/);
        }
        expect(await store.length(threadId)).toBe(1);
      });

      it('refuses bad input as VALIDATION_FAILED and writes nothing', async () => {
        const threadId = newThreadId();
        const bad: Array<{ threadId: string; expectedIndex: number; entries: LogEntry[] }> = [
          { threadId: '', expectedIndex: 0, entries: makeBatch(0, 1) },
          { threadId, expectedIndex: -1, entries: makeBatch(0, 1) },
          { threadId, expectedIndex: 0.5, entries: makeBatch(0, 1) },
          { threadId, expectedIndex: 0, entries: [] },
          // the last entry of the batch is invalid: the valid ones must not land either
          {
            threadId,
            expectedIndex: 0,
            entries: [
              makeEntry(0),
              makeEntry(1, 'e', { event: { type: 'noted', value: Number.NaN } }),
            ],
          },
          { threadId, expectedIndex: 0, entries: [makeEntry(0, 'e', { id: '' })] },
          { threadId, expectedIndex: 0, entries: [makeEntry(0, 'e', { recordedAt: 'yesterday' })] },
          {
            threadId,
            expectedIndex: 0,
            entries: [{ ...makeEntry(0), extra: 1 } as unknown as LogEntry],
          },
        ];
        for (const input of bad) {
          expect(failure(await store.append(input)).code).toBe('VALIDATION_FAILED');
        }
        expect(await store.length(threadId)).toBe(0);
        expect(await store.read(threadId)).toEqual([]);
        // No trace of the thread: it is still unknown to fork.
        const fork = await store.fork({ threadId, newThreadId: newThreadId('f') });
        expect(failure(fork).code).toBe('NOT_FOUND');
      });

      it('refuses an entry id repeated within the batch', async () => {
        const threadId = newThreadId();
        const entries = [makeEntry(0, 'e', { id: 'same' }), makeEntry(1, 'e', { id: 'same' })];
        const error = failure(await store.append({ threadId, expectedIndex: 0, entries }));
        expect(error.code).toBe('VALIDATION_FAILED');
        expect(error.message).toMatch(/"same" appears twice/);
        expect(await store.length(threadId)).toBe(0);
      });

      it('refuses an entry id already in the thread, atomically', async () => {
        const threadId = newThreadId();
        must(await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 3) }));
        const entries = [
          makeEntry(3, 'new'),
          makeEntry(4, 'e', { id: 'e-1' }),
          makeEntry(5, 'new'),
        ];
        const error = failure(await store.append({ threadId, expectedIndex: 3, entries }));
        expect(error.code).toBe('VALIDATION_FAILED');
        expect(error).toMatchObject({
          issues: [
            { path: '$.entries[1].id', message: expect.stringMatching(/"e-1" already exists/) },
          ],
        });
        expect(await store.length(threadId)).toBe(3);
        // The thread still takes a clean batch at 3.
        must(await store.append({ threadId, expectedIndex: 3, entries: makeBatch(3, 1, 'new') }));
        expect(await store.length(threadId)).toBe(4);
      });
    });

    describe('round trip', () => {
      it('a single append reads back verbatim', async () => {
        const threadId = newThreadId();
        const entry = upstreamEntry(0, 'start', { label: 'first' });
        // Upstream's envelope order is not the canonical one: a canonicalising store fails here.
        expect(JSON.stringify(entry)).not.toBe(canonicalJson(entry));
        must(await store.append({ threadId, expectedIndex: 0, entries: [entry] }));
        expect(JSON.stringify(await store.read(threadId))).toBe(JSON.stringify([entry]));
        expect(await store.length(threadId)).toBe(1);
      });

      it('metadata round-trips verbatim', async () => {
        const threadId = newThreadId();
        const metadata = { source: 'user', nested: { attempt: 2 }, tags: ['x', 'y'] };
        must(
          await store.append({
            threadId,
            expectedIndex: 0,
            entries: [upstreamEntry(0, 'e', metadata)],
          }),
        );
        const [read] = await store.read(threadId);
        expect(JSON.stringify(read!.metadata)).toBe(JSON.stringify(metadata));
      });

      it('stored entries are isolated from caller mutation', async () => {
        const threadId = newThreadId();
        const entry = upstreamEntry(0, 'e', { tags: ['a'] });
        must(await store.append({ threadId, expectedIndex: 0, entries: [entry] }));
        (entry.metadata!.tags as string[]).push('mutated-after-append');
        (entry.event as { type: string; seq: number }).seq = 999;
        const read = await store.read(threadId);
        (read[0]!.metadata!.tags as string[]).push('mutated-after-read');
        (read[0]!.event as { type: string; seq: number }).seq = 888;
        const reread = await store.read(threadId);
        expect(JSON.stringify(reread[0]!.metadata)).toBe(JSON.stringify({ tags: ['a'] }));
        expect(JSON.stringify(reread[0]!.event)).toBe(JSON.stringify({ type: 'e', seq: 0 }));
      });

      it('refuses an entry with a non-enumerable property as NON_SERIALIZABLE and writes nothing', async () => {
        const threadId = newThreadId();
        const event = { type: 'HIDDEN' };
        Object.defineProperty(event, 'hidden', { value: true, enumerable: false });
        const entries = [makeEntry(0), makeEntry(1, 'e', { event })];
        const error = failure(await store.append({ threadId, expectedIndex: 0, entries }));
        expect(error).toMatchObject({
          code: 'NON_SERIALIZABLE',
          path: '$.entries[1].event.hidden',
        });
        expect(await store.length(threadId)).toBe(0);
        expect(await store.read(threadId)).toEqual([]);
      });

      it('reads entries back byte-identical to what was appended, in its key order', async () => {
        const threadId = newThreadId();
        const entries = [makeAwkwardEntry(0), makeAwkwardEntry(1, 'other'), makeEntry(2)];
        // The input really is out of canonical order, so a canonicalising store would fail.
        expect(JSON.stringify(entries[0])).not.toBe(canonicalJson(entries[0]));
        must(await store.append({ threadId, expectedIndex: 0, entries }));
        const read = await store.read(threadId);
        expectByteIdentical(read, entries);
        expect(read).toEqual(entries);
        expect(read[0]!.event.payload).toMatchObject({ lone: 'high \ud800 surrogate' });
      });

      it('keeps integer-like keys (which JavaScript enumerates first) and their neighbours', async () => {
        const threadId = newThreadId();
        const entry = makeEntry(0, 'e', {
          event: { type: 'noted', map: { b: 1, '10': 2, '9': 3, a: 4, '01': 5 } },
        });
        must(await store.append({ threadId, expectedIndex: 0, entries: [entry] }));
        const [read] = await store.read(threadId);
        expect(JSON.stringify(read)).toBe(JSON.stringify(entry));
        expect(canonicalJson(read)).toBe(canonicalJson(entry));
        expect(read).toEqual(entry);
      });

      it('keeps RFC 3339 edge values of recordedAt exactly', async () => {
        const threadId = newThreadId();
        const times = [
          '2016-12-31T23:59:60Z', // leap second
          '2016-12-31T23:59:60.500+00:00',
          '0000-01-01T00:00:00Z', // before year 1, which some databases cannot store
          '9999-12-31T23:59:59.999-02:00', // year 10000 in UTC
          '2026-03-01t10:00:00.123456789+14:00', // lowercase t, nanoseconds, far offset
        ];
        const entries = times.map((recordedAt, i) => makeEntry(i, 'e', { recordedAt }));
        must(await store.append({ threadId, expectedIndex: 0, entries }));
        const read = await store.read(threadId);
        expect(read.map((e) => e.recordedAt)).toEqual(times);
        expectByteIdentical(read, entries);
      });

      it('returns fresh objects: callers never share state with the store or each other', async () => {
        const threadId = newThreadId();
        const entries = [makeAwkwardEntry(0)];
        const expected = JSON.stringify(entries[0]);
        must(await store.append({ threadId, expectedIndex: 0, entries }));
        (entries[0]!.event as Record<string, unknown>).type = 'mutated after append';
        const first = await store.read(threadId);
        (first[0]!.event as Record<string, unknown>).type = 'mutated after read';
        const second = await store.read(threadId);
        expect(second[0]).not.toBe(first[0]);
        expect(JSON.stringify(second[0])).toBe(expected);
      });

      it(`round-trips a batch of ${LARGE_BATCH} entries in one atomic append`, async () => {
        const threadId = newThreadId();
        const entries = Array.from({ length: LARGE_BATCH }, (_, i) =>
          i % 100 === 0 ? makeAwkwardEntry(i) : makeEntry(i),
        );
        expect(must(await store.append({ threadId, expectedIndex: 0, entries }))).toEqual({
          length: LARGE_BATCH,
        });
        expect(await store.length(threadId)).toBe(LARGE_BATCH);
        expectByteIdentical(await store.read(threadId), entries);
        // A large batch with one duplicate id at its very end lands nothing.
        const next = makeBatch(LARGE_BATCH, LARGE_BATCH, 'n');
        next[LARGE_BATCH - 1] = makeEntry(2 * LARGE_BATCH - 1, 'e', { id: 'e-7' });
        const error = failure(
          await store.append({ threadId, expectedIndex: LARGE_BATCH, entries: next }),
        );
        expect(error.code).toBe('VALIDATION_FAILED');
        expect(await store.length(threadId)).toBe(LARGE_BATCH);
      });
    });

    describe('read', () => {
      it('returns index >= from, before to (exclusive), at most limit, in order', async () => {
        const threadId = newThreadId();
        must(await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 10) }));
        const indices = async (options: { from?: number; to?: number; limit?: number }) =>
          (await store.read(threadId, options)).map((e) => e.index);
        expect(await indices({})).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        expect(await indices({ from: 7 })).toEqual([7, 8, 9]);
        expect(await indices({ from: 10 })).toEqual([]);
        expect(await indices({ from: 1000 })).toEqual([]);
        expect(await indices({ from: 2, limit: 3 })).toEqual([2, 3, 4]);
        expect(await indices({ from: 8, limit: 5 })).toEqual([8, 9]);
        expect(await indices({ to: 3 })).toEqual([0, 1, 2]);
        expect(await indices({ from: 4, to: 6 })).toEqual([4, 5]);
        expect(await indices({ from: 6, to: 4 })).toEqual([]);
        expect(await indices({ limit: 0 })).toEqual([]);
        expect(await indices({ from: 3, to: 9, limit: 2 })).toEqual([3, 4]);
        expect(
          await indices({ to: Number.MAX_SAFE_INTEGER, limit: Number.MAX_SAFE_INTEGER }),
        ).toHaveLength(10);
      });

      it('throws VALIDATION_FAILED for options that are not integers >= 0', async () => {
        const threadId = newThreadId();
        for (const options of [{ from: -1 }, { to: 1.5 }, { limit: -3 }, { from: Number.NaN }]) {
          await expect(store.read(threadId, options)).rejects.toMatchObject({
            error: { code: 'VALIDATION_FAILED' },
          });
        }
      });
    });

    describe('fork', () => {
      async function seeded(count: number): Promise<{ threadId: string; entries: LogEntry[] }> {
        const threadId = newThreadId('src');
        const entries = Array.from({ length: count }, (_, i) =>
          i % 2 === 0 ? makeAwkwardEntry(i) : makeEntry(i),
        );
        must(await store.append({ threadId, expectedIndex: 0, entries }));
        return { threadId, entries };
      }

      it('copies the whole log by default, byte-identical', async () => {
        const { threadId, entries } = await seeded(4);
        const target = newThreadId('fork');
        expect(must(await store.fork({ threadId, newThreadId: target }))).toEqual({ length: 4 });
        expect(await store.length(target)).toBe(4);
        expectByteIdentical(await store.read(target), entries);
      });

      it('copies the prefix [0, upToIndex) and the fork then lives on its own', async () => {
        const { threadId, entries } = await seeded(5);
        const target = newThreadId('fork');
        expect(must(await store.fork({ threadId, newThreadId: target, upToIndex: 2 }))).toEqual({
          length: 2,
        });
        expectByteIdentical(await store.read(target), entries.slice(0, 2));
        // Appending to the fork continues at 2 and leaves the source alone, and vice versa.
        must(
          await store.append({ threadId: target, expectedIndex: 2, entries: makeBatch(2, 1, 'f') }),
        );
        must(await store.append({ threadId, expectedIndex: 5, entries: makeBatch(5, 1, 's') }));
        expect((await store.read(target)).map((e) => e.id)).toEqual(['awk-0', 'e-1', 'f-2']);
        expect(await store.length(threadId)).toBe(6);
        expectByteIdentical((await store.read(threadId)).slice(0, 5), entries);
      });

      it('copies entry ids: a copied id cannot be appended to the fork again', async () => {
        const { threadId } = await seeded(3);
        const target = newThreadId('fork');
        must(await store.fork({ threadId, newThreadId: target, upToIndex: 2 }));
        const error = failure(
          await store.append({
            threadId: target,
            expectedIndex: 2,
            entries: [makeEntry(2, 'e', { id: 'e-1' })],
          }),
        );
        expect(error.code).toBe('VALIDATION_FAILED');
        // ...but the id that was not copied is free on the fork.
        must(
          await store.append({
            threadId: target,
            expectedIndex: 2,
            entries: [makeEntry(2, 'awk')],
          }),
        );
      });

      it('accepts upToIndex 0 and upToIndex = length', async () => {
        const { threadId, entries } = await seeded(3);
        const empty = newThreadId('empty');
        expect(must(await store.fork({ threadId, newThreadId: empty, upToIndex: 0 }))).toEqual({
          length: 0,
        });
        expect(await store.read(empty)).toEqual([]);
        must(
          await store.append({ threadId: empty, expectedIndex: 0, entries: makeBatch(0, 1, 'x') }),
        );
        const full = newThreadId('full');
        must(await store.fork({ threadId, newThreadId: full, upToIndex: 3 }));
        expectByteIdentical(await store.read(full), entries);
      });

      it('refuses an upToIndex outside [0, length] with VALIDATION_FAILED', async () => {
        const { threadId } = await seeded(3);
        for (const upToIndex of [4, 100, -1, 1.5]) {
          const target = newThreadId('fork');
          const error = failure(await store.fork({ threadId, newThreadId: target, upToIndex }));
          expect(error.code).toBe('VALIDATION_FAILED');
          expect(await store.length(target)).toBe(0);
        }
      });

      it('refuses an unknown source with NOT_FOUND', async () => {
        const source = newThreadId('missing');
        const target = newThreadId('fork');
        const error = failure(await store.fork({ threadId: source, newThreadId: target }));
        expect(error).toMatchObject({ code: 'NOT_FOUND', id: source });
        const atZero = failure(
          await store.fork({ threadId: source, newThreadId: target, upToIndex: 0 }),
        );
        expect(atZero.code).toBe('NOT_FOUND');
        expect(await store.length(target)).toBe(0);
        // The failed fork left no target behind: forking from it is NOT_FOUND too.
        const fromTarget = await store.fork({ threadId: target, newThreadId: newThreadId('x') });
        expect(failure(fromTarget).code).toBe('NOT_FOUND');
      });

      it('refuses a non-empty target and leaves it unchanged', async () => {
        const { threadId } = await seeded(3);
        const target = newThreadId('busy');
        must(
          await store.append({ threadId: target, expectedIndex: 0, entries: makeBatch(0, 1, 'b') }),
        );
        const error = failure(await store.fork({ threadId, newThreadId: target, upToIndex: 1 }));
        expect(error.code).toBe('VALIDATION_FAILED');
        expect(error.message).toMatch(/already has 1 log entries/);
        expect((await store.read(target)).map((e) => e.id)).toEqual(['b-0']);
      });

      it('refuses forking a thread onto itself and empty ids', async () => {
        const { threadId } = await seeded(2);
        for (const input of [
          { threadId, newThreadId: threadId },
          { threadId, newThreadId: '' },
          { threadId: '', newThreadId: newThreadId() },
        ]) {
          expect(failure(await store.fork(input)).code).toBe('VALIDATION_FAILED');
        }
        expect(await store.length(threadId)).toBe(2);
      });
    });

    describe('concurrency', () => {
      it(`two concurrent appends at one index: exactly one wins, ${RACE_REPETITIONS} times`, async () => {
        const peer = fixture.peer ?? store;
        for (let round = 0; round < RACE_REPETITIONS; round++) {
          const threadId = newThreadId(`race${round}`);
          // Odd rounds race on a thread that already has entries, even rounds on a new one.
          const base = round % 2;
          if (base > 0)
            must(
              await store.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 1, 'seed') }),
            );
          const a = makeBatch(base, 2, 'a');
          const b = makeBatch(base, 3, 'b');
          const results = await Promise.all([
            store.append({ threadId, expectedIndex: base, entries: a }),
            peer.append({ threadId, expectedIndex: base, entries: b }),
          ]);
          const winners = results.filter((r) => r.ok);
          expect(winners).toHaveLength(1);
          const aWon = results[0].ok;
          const won = aWon ? a : b;
          const winnerLength = base + won.length;
          expect(results[aWon ? 0 : 1]).toEqual({ ok: true, value: { length: winnerLength } });
          expect(failure(results[aWon ? 1 : 0])).toMatchObject({
            code: 'CONFLICT',
            threadId,
            expectedIndex: base,
            actualIndex: winnerLength,
          });
          const read = await peer.read(threadId);
          expect(read.slice(base)).toEqual(won);
          expect(await store.length(threadId)).toBe(winnerLength);
        }
      });

      it('eight concurrent appends at one index: exactly one wins, the log has no gaps', async () => {
        const peer = fixture.peer ?? store;
        const threadId = newThreadId('crowd');
        const writers = Array.from({ length: 8 }, (_, w) => (w % 2 === 0 ? store : peer));
        const results = await Promise.all(
          writers.map((s, w) =>
            s.append({ threadId, expectedIndex: 0, entries: makeBatch(0, 1 + (w % 3), `w${w}`) }),
          ),
        );
        const wins = results.flatMap((r, w) => (r.ok ? [w] : []));
        expect(wins).toHaveLength(1);
        const length = must(results[wins[0]!]!).length;
        for (const r of results) {
          if (!r.ok) expect(r.error).toMatchObject({ code: 'CONFLICT', actualIndex: length });
        }
        const read = await store.read(threadId);
        expect(read.map((e) => e.index)).toEqual(Array.from({ length }, (_, i) => i));
        expect(new Set(read.map((e) => e.id.split('-')[0])).size).toBe(1);
      });

      it('sequential writers that reload on CONFLICT build one gap-free log', async () => {
        const peer = fixture.peer ?? store;
        const threadId = newThreadId('retry');
        const writer = async (s: EventLogStore, tag: string, count: number) => {
          for (let n = 0; n < count; ) {
            const at = await s.length(threadId);
            const result = await s.append({
              threadId,
              expectedIndex: at,
              entries: [makeEntry(at, `${tag}${n}`)],
            });
            if (result.ok) n++;
            else expect(result.error.code).toBe('CONFLICT');
          }
        };
        await Promise.all([writer(store, 'a', 10), writer(peer, 'b', 10)]);
        const read = await store.read(threadId);
        expect(read.map((e) => e.index)).toEqual(Array.from({ length: 20 }, (_, i) => i));
        expect(new Set(read.map((e) => e.id)).size).toBe(20);
      });
    });
  });
}
