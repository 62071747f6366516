/**
 * The one fold of stored thread entries into state: what the engine does when it loads or time
 * travels, what a fork or an import projects, and what the event hub re-derives effects with. It
 * owns the policy every one of them follows:
 *
 * 1. entries are contiguous from the starting state's length (VALIDATION_FAILED otherwise);
 * 2. recorded node ids are trusted (not recomputed from content) only when the caller allows it,
 *    hashes are checked, and every entry is signed: the hash chain then commits to every byte of
 *    each entry, so a payload changed after signing fails at its index. A log from elsewhere
 *    (`trust: false`) or with an unsigned entry has every id recomputed and checked
 *    (NODE_ID_MISMATCH);
 * 3. each entry is applied, and its `verification.stateHash`, where it has one (`present`, the
 *    default) or on every entry (`strict`), must be the recomputed one (VERIFICATION_FAILED
 *    {index, entryId}).
 *
 * Built on the log's generic `replay`. Pure.
 */
import { ok, type Result } from '../errors.js';
import type { LogEntry } from '../log/entry.js';
import { type ReplayOptions, type ReplayStep, replay, type VerifyMode } from '../log/replay.js';
import { createThreadMachine, type ThreadEffect, type ThreadMachineOptions } from './apply.js';
import type { ThreadState } from './state.js';

/** One applied and verified entry: the state before and after it, and the effects it owes. */
export type ThreadFoldStep = ReplayStep<ThreadState, ThreadEffect>;

export interface ThreadFoldOptions {
  /**
   * The machine's options (prices, memory and import limits). Their `trustRecordedIds` is not
   * used as given: `false` refuses the trust like `trust: false`, anything else leaves the
   * decision to the fold.
   */
  machine?: ThreadMachineOptions;
  /**
   * The state to fold onto (a cached state, a restored snapshot): `entries[0].index` must be its
   * length. Default: the empty thread.
   */
  from?: ThreadState;
  /** The stored canonical text of each entry, aligned with `entries` (see ReplayOptions.texts). */
  texts?: readonly string[];
  /** Default `present`. With `none` recorded ids are never trusted: nothing would check them. */
  verify?: VerifyMode;
  /**
   * Whether recorded ids may be trusted at all. Default true: a log this server wrote. `false`
   * for a log from elsewhere, whose author could have signed anything.
   */
  trust?: boolean;
  /**
   * Called after each entry is applied and verified. Setting it makes the machine build every
   * entry's effects: leave it unset when only the state is wanted.
   */
  onEntry?: (step: ThreadFoldStep) => void;
}

/**
 * Whether a fold of `entries` takes their recorded node ids as given: only when `trust` allows
 * it, hashes are checked, and every entry carries its state hash.
 */
export function trustsRecordedIds(
  entries: readonly LogEntry[],
  verify: VerifyMode,
  trust = true,
): boolean {
  return (
    trust && verify !== 'none' && entries.every((e) => e.verification?.stateHash !== undefined)
  );
}

/**
 * Folds `entries` onto `options.from` (default: the empty thread) under the policy above and
 * returns the state after the last one, or the first failure: VALIDATION_FAILED for an entry out
 * of place, the machine's error for an entry that does not apply (its message prefixed with the
 * entry), VERIFICATION_FAILED {index, entryId} for a state hash that is not the recomputed one.
 */
export function foldThreadLog(
  entries: readonly LogEntry[],
  options: ThreadFoldOptions = {},
): Result<ThreadState> {
  const verify = options.verify ?? 'present';
  const trust = options.trust !== false && options.machine?.trustRecordedIds !== false;
  const machine = createThreadMachine({
    ...options.machine,
    trustRecordedIds: trustsRecordedIds(entries, verify, trust),
  });
  const replayOptions: ReplayOptions<ThreadState, LogEntry['event'], ThreadEffect> = { verify };
  if (options.from !== undefined) {
    replayOptions.from = { state: options.from, index: options.from.length };
  }
  if (options.texts !== undefined) replayOptions.texts = options.texts;
  if (options.onEntry !== undefined) replayOptions.onStep = options.onEntry;
  const replayed = replay(machine, entries, replayOptions);
  return replayed.ok ? ok(replayed.value.state) : replayed;
}
