/**
 * The event-log store contract (types.ts) on the production thread store: an append is a commit
 * through the same writer, write script and transaction as the engine's (read-model/writer.ts),
 * and a read goes through the same log reader (read-model/log-reads.ts), which opens sealed
 * entries and splices packed ones. So the conformance suite tests the code the engine runs.
 *
 * What the contract adds to the engine's use of the log: an unknown thread is appendable at
 * index 0 (a neutral thread row is created with the first entries, and of an existing row only
 * the log length changes), and entries read back with the key order they were appended in (the
 * text as appended is kept beside the canonical one where the two differ).
 *
 * Races: the store reads the length before it commits and refuses a stale `expectedIndex` with
 * CONFLICT; a writer that took the index in between makes the commit's entry insert violate the
 * `(thread_id, log_index)` key, which the writer reports as a conflict (the length is re-read).
 * The length never decreases, so a commit at an index the pre-check saw free either lands next
 * to the last entry or collides with the one that took it: no gap is possible.
 */
import { canonicalJson } from '../../core/canonical.js';
import { err, ok, type Result } from '../../core/errors.js';
import { checkAppend, type LogEntry } from '../../core/log/index.js';
import type { ReadModelChanges, ThreadRow, ThreadStore } from '../read-model/index.js';
import { DEFAULT_TENANT } from '../tables/index.js';
import {
  checkForkInput,
  checkThreadId,
  forkOutOfRange,
  forkTargetNotEmpty,
  getReadWindow,
  unknownForkSource,
} from './input-checks.js';
import type { AppendInput, EventLogStore, ForkInput } from './types.js';

export interface LogStoreOptions {
  /** Clock for the created_at/updated_at of thread rows. Default: `new Date()`. */
  now?: () => Date;
}

const MIN_TIME = Date.parse('0001-01-01T00:00:00.000Z');
const MAX_TIME = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The `recorded_at` column value of an RFC 3339 `recordedAt`. The column is an index for
 * queries; the entry text stays the truth. So the time is normalised to UTC milliseconds, a leap
 * second (`…:60`) maps to the start of the next second, and instants outside years 0001–9999,
 * which Postgres cannot store, are clamped into that range.
 */
export function toRecordedAt(recordedAt: string): Date {
  let time = Date.parse(recordedAt);
  if (Number.isNaN(time)) {
    time = Date.parse(recordedAt.replace(/([Tt]\d{2}:\d{2}:)60/, '$159')) + 1000;
  }
  return new Date(Math.min(MAX_TIME, Math.max(MIN_TIME, time)));
}

/** The neutral thread row the log store writes: its length and fork origin, nothing of a state. */
const neutralRow = (
  threadId: string,
  logLength: number,
  at: Date,
  fork?: { from: string; upTo: number; tenantId: string },
): ThreadRow => ({
  id: threadId,
  tenantId: fork?.tenantId ?? DEFAULT_TENANT,
  createdAt: at,
  updatedAt: at,
  metadata: '{}',
  nodeTypes: '[]',
  allowDynamicNodeTypes: false,
  logLength,
  stateHash: '',
  frontier: '[]',
  forkedFromId: fork?.from ?? null,
  forkedUpToIndex: fork?.upTo ?? null,
  // The event-log contract's fork copies its prefix: every row is the thread's own.
  baseThreadId: null,
  baseLogLength: null,
  baseNodeCount: null,
  deletedAt: null,
  expiresAt: null,
  payloadSalt: null,
  // Unknown: the spend is the thread machine's, and this row is written without one.
  spendInputTokens: null,
  spendOutputTokens: null,
  spendCostUsd: null,
  spendCalls: null,
});

/** The event-log store on `store` (which the caller keeps and closes). */
export function createLogStore(store: ThreadStore, options: LogStoreOptions = {}): EventLogStore {
  const now = options.now ?? (() => new Date());

  /** Commits entries (already checked) at `expectedIndex`, keeping their appended texts. */
  const commit = async (
    threadId: string,
    expectedIndex: number,
    entries: readonly LogEntry[],
    appended: readonly string[],
    fork?: { from: string; upTo: number; tenantId: string },
  ): Promise<Result<void>> => {
    const texts = entries.map((entry) => canonicalJson(entry));
    const changes: ReadModelChanges = {
      threadId,
      created: expectedIndex === 0,
      entries: entries.map((entry, i) => ({
        threadId,
        index: entry.index,
        entryId: entry.id,
        type: entry.event.type,
        recordedAt: toRecordedAt(entry.recordedAt),
        entry: texts[i]!,
      })),
      thread: neutralRow(threadId, expectedIndex + entries.length, now(), fork),
      nodes: [],
      nodeParents: [],
      nodeFlags: [],
      resourceHeads: [],
      runs: [],
      runSpend: [],
      approvals: [],
      logOnly: { verbatim: appended.map((text, i) => (text === texts[i] ? null : text)) },
    };
    return store.commit(changes);
  };

  /** checkAppend against the stored state: CONFLICT first, then ids already in the thread. */
  const explain = async (input: AppendInput, length: number): Promise<Result<never> | null> => {
    const ids =
      length === input.expectedIndex
        ? await store.findEntryIds(
            input.threadId,
            input.entries.map((e) => e.id),
          )
        : new Set<string>();
    const checked = checkAppend({
      threadId: input.threadId,
      currentLength: length,
      expectedIndex: input.expectedIndex,
      entries: input.entries,
      hasEntryId: (id) => ids.has(id),
      validateEntries: false,
    });
    return checked.ok ? null : checked;
  };

  return {
    async append(input) {
      const id = checkThreadId(input.threadId);
      if (!id.ok) return id;
      const length = (await store.getLogLength(input.threadId)) ?? 0;
      const checked = checkAppend({
        threadId: input.threadId,
        currentLength: length,
        expectedIndex: input.expectedIndex,
        entries: input.entries,
        hasEntryId: () => false,
      });
      if (!checked.ok) return checked;
      const refused = await explain(input, length);
      if (refused !== null) return refused;
      const appended = input.entries.map((entry) => JSON.stringify(entry));
      const committed = await commit(input.threadId, input.expectedIndex, input.entries, appended);
      if (committed.ok) return ok({ length: input.expectedIndex + input.entries.length });
      if (committed.error.code !== 'CONFLICT') return committed;
      // Lost a race, or (same length) an entry id another writer just added.
      const actual = (await store.getLogLength(input.threadId)) ?? 0;
      return (await explain(input, actual)) ?? committed;
    },

    async read(threadId, readOptions) {
      const window = getReadWindow(threadId, readOptions);
      const texts = await store.readLog(threadId, window);
      return texts.map((t) => JSON.parse(t.appended) as LogEntry);
    },

    async length(threadId) {
      return (await store.getLogLength(threadId)) ?? 0;
    },

    async fork(input: ForkInput) {
      const shape = checkForkInput(input);
      if (!shape.ok) return shape;
      const sourceLength = await store.getLogLength(input.threadId);
      if (sourceLength === undefined) return unknownForkSource(input.threadId);
      const upTo = input.upToIndex ?? sourceLength;
      if (upTo > sourceLength) return forkOutOfRange(upTo, sourceLength);
      const targetLength = (await store.getLogLength(input.newThreadId)) ?? 0;
      if (targetLength > 0) return forkTargetNotEmpty(input.newThreadId, targetLength);
      const texts = await store.readLog(input.threadId, { from: 0, to: upTo, limit: upTo });
      const tenantId = (await store.getThreadTenant(input.threadId)) ?? DEFAULT_TENANT;
      const fork = { from: input.threadId, upTo, tenantId };
      const committed = await commit(
        input.newThreadId,
        0,
        texts.map((t) => JSON.parse(t.text) as LogEntry),
        texts.map((t) => t.appended),
        fork,
      );
      if (committed.ok) return ok({ length: upTo });
      if (committed.error.code !== 'CONFLICT') return committed;
      // Another writer filled the target while this fork copied into it.
      const existing = (await store.getLogLength(input.newThreadId)) ?? 0;
      return existing > 0 ? forkTargetNotEmpty(input.newThreadId, existing) : err(committed.error);
    },
  };
}
