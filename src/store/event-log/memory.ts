import { ok, type Result } from '../../core/errors.js';
import { checkAppend, type LogEntry } from '../../core/log/index.js';
import {
  checkForkInput,
  checkThreadId,
  forkOutOfRange,
  forkTargetNotEmpty,
  getReadWindow,
  unknownForkSource,
} from './input-checks.js';
import type { AppendInput, EventLogStore, ForkInput, ReadOptions } from './types.js';

interface StoredThread {
  /** The JSON text of each entry as appended (`JSON.stringify`: the caller's key order), by index. */
  texts: string[];
  ids: Set<string>;
}

/**
 * The reference event-log store: the contract in its plainest form, and the baseline every
 * other store is checked against. Entries are kept as the JSON text they were appended as and
 * parsed on every read, so they read back verbatim and callers never share objects with the
 * store or with each other. Each method does its
 * work without awaiting, so an append is atomic with respect to every other call.
 */
export function createMemoryEventLogStore(): EventLogStore {
  const threads = new Map<string, StoredThread>();

  return {
    async append(input: AppendInput): Promise<Result<{ length: number }>> {
      const id = checkThreadId(input.threadId);
      if (!id.ok) return id;
      const thread = threads.get(input.threadId);
      const checked = checkAppend({
        threadId: input.threadId,
        currentLength: thread?.texts.length ?? 0,
        expectedIndex: input.expectedIndex,
        entries: input.entries,
        hasEntryId: (entryId) => thread?.ids.has(entryId) ?? false,
      });
      if (!checked.ok) return checked;
      const texts = input.entries.map((entry) => JSON.stringify(entry));
      const target = thread ?? { texts: [], ids: new Set<string>() };
      target.texts.push(...texts);
      for (const entry of input.entries) target.ids.add(entry.id);
      threads.set(input.threadId, target);
      return ok({ length: target.texts.length });
    },

    async read(threadId: string, options?: ReadOptions): Promise<LogEntry[]> {
      const { from, to, limit } = getReadWindow(threadId, options);
      const texts = threads.get(threadId)?.texts ?? [];
      const end = Math.min(to, texts.length, from + limit);
      const out: LogEntry[] = [];
      for (let i = from; i < end; i++) out.push(JSON.parse(texts[i]!) as LogEntry);
      return out;
    },

    async length(threadId: string): Promise<number> {
      return threads.get(threadId)?.texts.length ?? 0;
    },

    async fork(input: ForkInput): Promise<Result<{ length: number }>> {
      const shape = checkForkInput(input);
      if (!shape.ok) return shape;
      const source = threads.get(input.threadId);
      if (source === undefined) return unknownForkSource(input.threadId);
      const upTo = input.upToIndex ?? source.texts.length;
      if (upTo > source.texts.length) return forkOutOfRange(upTo, source.texts.length);
      const existing = threads.get(input.newThreadId)?.texts.length ?? 0;
      if (existing > 0) return forkTargetNotEmpty(input.newThreadId, existing);
      const texts = source.texts.slice(0, upTo);
      const ids = new Set(texts.map((text) => (JSON.parse(text) as LogEntry).id));
      threads.set(input.newThreadId, { texts, ids });
      return ok({ length: upTo });
    },
  };
}
