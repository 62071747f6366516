import { err, isWeftFailure, ok, type Result, type WeftError } from '../errors.js';
import type { LogEntry, LogEvent } from './entry.js';

/**
 * A deterministic machine folded over a log. `apply` is pure: it returns the next state and the
 * effects the entry owes (as data; replay never executes them) or an error. `stateHash` reads
 * the running hash the state carries (see `chainStateHash`): it must be cheap, because
 * verification calls it after every entry. `stateHash(initial)` is normally GENESIS_STATE_HASH.
 */
export interface LogMachine<S, F = unknown, E extends LogEvent = LogEvent> {
  readonly initial: S;
  /**
   * `text`, when given, is the exact canonical text `entry` was parsed from (see
   * `ReplayOptions.texts`); a machine may hash it instead of re-serialising the entry.
   */
  /**
   * `effects` is false when the caller discards them (a replay that does not collect effects):
   * the machine may then skip building them and return an empty list.
   */
  apply(state: S, entry: LogEntry<E>, text?: string, effects?: boolean): Result<[S, F[]]>;
  stateHash(state: S): string;
}

/**
 * `none`: no hash checks. `present`: check `verification.stateHash` where an entry has one.
 * `strict`: every entry must have one, and it must match.
 */
export type VerifyMode = 'none' | 'present' | 'strict';

export interface ReplayOptions<S, E extends LogEvent = LogEvent, F = unknown> {
  /** Default `present`. */
  verify?: VerifyMode;
  /** Start from a known state (a snapshot) at log length `index`; `entries[0].index` must equal it. */
  from?: { state: S; index: number };
  /** Called after each entry is applied and verified, with the state after it. */
  onEntry?: (state: S, entry: LogEntry<E>) => void;
  /**
   * Called after each entry is applied and verified (after `onEntry`), with the state before and
   * after it and the effects it owes. Setting it makes the machine build every entry's effects:
   * leave it unset when they are not wanted.
   */
  onStep?: (step: ReplayStep<S, F, E>) => void;
  /** Collect the effects of every entry, in log order, into `effects`. Default false. */
  collectEffects?: boolean;
  /**
   * The stored canonical text of each entry, aligned with `entries` — what a store read them
   * from. Lets the machine hash the bytes it already has instead of re-serialising every entry.
   * Each text must be exactly the one its entry was parsed from: the hash is taken over the text
   * while the state is built from the entry.
   */
  texts?: readonly string[];
}

/** One applied and verified entry, as `ReplayOptions.onStep` sees it. */
export interface ReplayStep<S, F, E extends LogEvent = LogEvent> {
  before: S;
  state: S;
  effects: readonly F[];
  entry: LogEntry<E>;
}

export interface ReplayResult<S, F> {
  state: S;
  /** Log length after the replay (`from.index + entries.length`). */
  length: number;
  effects?: F[];
}

interface Failure {
  /** Position in `entries` of the entry that failed, or -1 for a bad `from`. */
  position: number;
  error: WeftError;
}

/**
 * Rebuilds state by folding `entries` through `machine` — the one way derived state is made, so
 * time travel is a replay of a prefix and a snapshot plus the entries after it equals a full
 * replay. Checks, per entry and in this order: `entries[i].index === from.index + i`
 * (VALIDATION_FAILED), `apply` (its error is returned with the entry index prefixed to the
 * message; a thrown WeftFailure is treated the same), then the state hash per `verify`
 * (VERIFICATION_FAILED {index, entryId}). Stops at the first failure. Does not re-validate
 * envelopes: stores do that at append. Pure as long as `machine` and `onEntry` are.
 */
export function replay<S, F, E extends LogEvent = LogEvent>(
  machine: LogMachine<S, F, E>,
  entries: readonly LogEntry<E>[],
  options: ReplayOptions<S, E, F> = {},
): Result<ReplayResult<S, F>> {
  const outcome = fold(machine, entries, options);
  return outcome.ok ? ok(outcome.value) : err(outcome.error.error);
}

/** What `verify` reports; mirrors the GraphQL `VerifyReport`. */
export interface VerifyReport {
  ok: boolean;
  /** Entries replayed and found good (all of them when `ok`). */
  checkedEntries: number;
  /** Log index of the first bad entry. */
  firstBadIndex?: number;
  entryId?: string;
  message?: string;
  /**
   * Nodes whose payloads were redacted (a thread log's machine reports them): their entries are
   * checked against the digest the redaction recorded instead of their withheld content.
   */
  redactedNodes?: Array<{ nodeId: string; index: number; recorded: boolean }>;
}

/**
 * Replays the whole log and reports the first bad entry: a wrong index, an entry the machine
 * rejects, or a state hash that differs from the recomputed one. `strict` (default true)
 * additionally requires a hash on every entry; otherwise entries without one are only replayed.
 * Pure.
 */
export function verifyLog<S, F, E extends LogEvent = LogEvent>(
  machine: LogMachine<S, F, E>,
  entries: readonly LogEntry<E>[],
  options: {
    strict?: boolean;
    from?: { state: S; index: number };
    /** The stored texts of `entries`, as in `ReplayOptions.texts`. */
    texts?: readonly string[];
  } = {},
): VerifyReport {
  const replayOptions: ReplayOptions<S, E, F> = {
    verify: options.strict === false ? 'present' : 'strict',
  };
  if (options.from !== undefined) replayOptions.from = options.from;
  if (options.texts !== undefined) replayOptions.texts = options.texts;
  const outcome = fold(machine, entries, replayOptions);
  if (outcome.ok) return { ok: true, checkedEntries: entries.length };
  const { position, error } = outcome.error;
  const report: VerifyReport = {
    ok: false,
    checkedEntries: Math.max(position, 0),
    message: error.message,
  };
  if (position >= 0) {
    report.firstBadIndex = (options.from?.index ?? 0) + position;
    const entryId = entries[position]?.id;
    if (entryId !== undefined) report.entryId = entryId;
  }
  return report;
}

/**
 * Returns copies of `entries` with `verification.stateHash` set to the hash replay computes —
 * what a writer stamps on entries before appending them. Index and apply checks as in `replay`.
 * Pure; the inputs are not modified.
 */
export function stampStateHashes<S, F, E extends LogEvent = LogEvent>(
  machine: LogMachine<S, F, E>,
  entries: readonly LogEntry<E>[],
  from?: { state: S; index: number },
): Result<{ entries: LogEntry<E>[]; state: S }> {
  const stamped: LogEntry<E>[] = [];
  const options: ReplayOptions<S, E, F> = {
    verify: 'none',
    onEntry: (state, entry) =>
      stamped.push({ ...entry, verification: { stateHash: machine.stateHash(state) } }),
  };
  if (from !== undefined) options.from = from;
  const outcome = fold(machine, entries, options);
  return outcome.ok
    ? ok({ entries: stamped, state: outcome.value.state })
    : err(outcome.error.error);
}

type FoldOutcome<S, F> = { ok: true; value: ReplayResult<S, F> } | { ok: false; error: Failure };

function fold<S, F, E extends LogEvent>(
  machine: LogMachine<S, F, E>,
  entries: readonly LogEntry<E>[],
  options: ReplayOptions<S, E, F>,
): FoldOutcome<S, F> {
  const mode = options.verify ?? 'present';
  const start = options.from?.index ?? 0;
  if (!Number.isSafeInteger(start) || start < 0) {
    const message = `from.index must be an integer >= 0 (got ${String(start)}).`;
    return failAt(-1, {
      code: 'VALIDATION_FAILED',
      message,
      issues: [{ path: '$.from.index', message }],
    });
  }
  let state = options.from === undefined ? machine.initial : options.from.state;
  const effects: F[] | undefined = options.collectEffects === true ? [] : undefined;
  const buildEffects = effects !== undefined || options.onStep !== undefined;

  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const expectedIndex = start + i;
    if (entry.index !== expectedIndex) {
      const message = `Entry at position ${i} has index ${String(entry.index)} but the log expects ${expectedIndex}: entries must be contiguous from ${start}.`;
      return failAt(i, {
        code: 'VALIDATION_FAILED',
        message,
        issues: [{ path: `$[${i}].index`, message }],
      });
    }
    const applied = applySafely(machine, state, entry, options.texts?.[i], buildEffects);
    if (!applied.ok) {
      return failAt(i, {
        ...applied.error,
        message: `Replay failed at entry ${expectedIndex} (${entry.id}): ${applied.error.message}`,
      });
    }
    const [next, owed] = applied.value;
    if (mode !== 'none') {
      const problem = checkHash(machine.stateHash(next), entry, mode);
      if (problem !== null) {
        return failAt(i, {
          code: 'VERIFICATION_FAILED',
          message: problem,
          index: expectedIndex,
          entryId: entry.id,
        });
      }
    }
    const before = state;
    state = next;
    if (effects !== undefined) for (const effect of owed) effects.push(effect);
    options.onEntry?.(state, entry);
    options.onStep?.({ before, state, effects: owed, entry });
  }

  const value: ReplayResult<S, F> = { state, length: start + entries.length };
  if (effects !== undefined) value.effects = effects;
  return { ok: true, value };
}

function failAt(position: number, error: WeftError): { ok: false; error: Failure } {
  return { ok: false, error: { position, error } };
}

function applySafely<S, F, E extends LogEvent>(
  machine: LogMachine<S, F, E>,
  state: S,
  entry: LogEntry<E>,
  text: string | undefined,
  effects: boolean,
): Result<[S, F[]]> {
  try {
    return machine.apply(state, entry, text, effects);
  } catch (thrown) {
    if (isWeftFailure(thrown)) return err(thrown.error);
    throw thrown;
  }
}

function checkHash(computed: string, entry: LogEntry, mode: VerifyMode): string | null {
  const stored = entry.verification?.stateHash;
  if (stored === undefined) {
    if (mode !== 'strict') return null;
    return `Entry ${entry.index} (${entry.id}) has no verification.stateHash; strict verification requires one on every entry (expected ${computed}).`;
  }
  if (stored === computed) return null;
  return `State hash mismatch at entry ${entry.index} (${entry.id}): expected ${computed} (recomputed by replay) but found ${stored} in the log. This entry or the machine version differs from what was recorded.`;
}
