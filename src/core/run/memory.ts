import { canonicalJson } from '../canonical.js';
import type { JsonValue } from '../json.js';
import type { TaintInput } from './actions.js';
import type { RunEvent } from './events.js';
import {
  DEFAULT_MAX_MEMORY_VALUE_BYTES,
  type LessonProvenanceEntry,
  LessonProvenanceEntrySchema,
  MAX_MEMORY_DROPS,
  type MemoryDrop,
  type TaintMetadata,
  TaintMetadataSchema,
  type WorkflowState,
} from './schema.js';

export interface MemoryLimits {
  /** Largest accepted memory value, as UTF-8 bytes of its canonical JSON. Default 64 KiB. */
  maxValueBytes?: number;
}

export interface MemoryMergeContext {
  now: string;
  limits?: MemoryLimits | undefined;
}

/** Where a memory write came from: used for drop records and taint. */
export interface MemoryProvenance {
  node_id?: string | undefined;
  /** Every written key came from this untrusted source. */
  taint?: TaintInput | undefined;
  /** Per-key untrusted sources (wins over `taint`). */
  taint_by_key?: Record<string, TaintInput> | undefined;
  /** Keys read to compute the write; tainted inputs make the written keys `derived`-tainted. */
  input_keys?: readonly string[] | undefined;
}

export interface MemoryMergeResult {
  state: WorkflowState;
  events: RunEvent[];
  /** User keys written, in update order. */
  written: string[];
  dropped: MemoryDrop[];
}

/** Wire keys from cycgraph payloads that route to engine-owned fields instead of memory. */
const TAINT_REGISTRY_KEY = '_taint_registry';
const LESSON_PROVENANCE_KEY = '_lesson_provenance';
const SWARM_HANDOFF_COUNT_KEY = '_swarm_handoff_count';
const SUBGRAPH_RESUME_PREFIX = '_subgraph_resume_';

const encoder = new TextEncoder();

/** UTF-8 size of a value's canonical JSON. Pure. */
export function jsonByteLength(value: unknown): number {
  return encoder.encode(canonicalJson(value)).length;
}

/** Appends to a ring buffer: a new array holding at most the last `cap` items. Pure. */
export function appendBounded<T>(list: readonly T[], items: readonly T[], cap: number): T[] {
  if (items.length === 0) return list as T[];
  const next = [...list, ...items];
  return next.length > cap ? next.slice(next.length - cap) : next;
}

/**
 * THE memory merge: every channel that writes memory (createWorkflowState, update_memory,
 * merge_parallel_results, handoff, request_human_input, resume_from_human) goes through here.
 * Pure; never mutates `state`.
 *
 * - User keys are written last-writer-wins, unless the value's canonical JSON exceeds
 *   `limits.maxValueBytes`: then it is dropped, recorded in `memory_drops` (ring buffer of
 *   `MAX_MEMORY_DROPS`) and reported as a `memory_dropped` event. The call does not fail.
 * - Keys starting with `_` never reach user memory. The cycgraph wire keys are routed to their
 *   engine-owned fields: `_taint_registry` and `_lesson_provenance` merge append-only,
 *   `_swarm_handoff_count` may only grow, `_subgraph_resume_<id>` sets (or, with null, clears)
 *   `subgraph_checkpoints[<id>]`. Every other `_` key, and a malformed wire value, is dropped and
 *   recorded with reason `reserved_key` (fail-closed, but visible).
 * - Taint from `provenance` is registered append-only for the keys actually written, then
 *   derived taint is propagated from tainted `input_keys`.
 */
export function mergeMemory(
  state: WorkflowState,
  updates: Readonly<Record<string, JsonValue>>,
  ctx: MemoryMergeContext,
  provenance: MemoryProvenance = {},
): MemoryMergeResult {
  const limit = ctx.limits?.maxValueBytes ?? DEFAULT_MAX_MEMORY_VALUE_BYTES;
  const events: RunEvent[] = [];
  const written: string[] = [];
  const dropped: MemoryDrop[] = [];
  let next: WorkflowState = state;
  let memory: Record<string, JsonValue> | undefined;

  const drop = (key: string, value: unknown, reason: MemoryDrop['reason']) => {
    const bytes = jsonByteLength(value);
    const record: MemoryDrop = { key, reason, bytes, limit, at: ctx.now };
    if (provenance.node_id !== undefined) record.node_id = provenance.node_id;
    dropped.push(record);
    events.push({ type: 'memory_dropped', key, bytes, limit, reason });
  };

  for (const [key, value] of Object.entries(updates)) {
    if (key.startsWith('_')) {
      const routed = routeReservedKey(next, key, value, ctx.now);
      if (routed === undefined) drop(key, value, 'reserved_key');
      else {
        next = routed.state;
        events.push(...routed.events);
      }
      continue;
    }
    if (jsonByteLength(value) > limit) {
      drop(key, value, 'oversized');
      continue;
    }
    memory ??= { ...next.memory };
    memory[key] = value;
    if (!written.includes(key)) written.push(key);
  }

  if (memory !== undefined) next = { ...next, memory };
  if (dropped.length > 0) {
    next = { ...next, memory_drops: appendBounded(next.memory_drops, dropped, MAX_MEMORY_DROPS) };
  }
  if (written.length > 0) events.push({ type: 'memory_written', keys: written });

  for (const key of written) {
    const source = provenance.taint_by_key?.[key] ?? provenance.taint;
    if (source === undefined) continue;
    const withNode =
      source.node_id === undefined && provenance.node_id !== undefined
        ? { ...source, node_id: provenance.node_id }
        : source;
    const bytes = jsonByteLength(updates[key]);
    const recorded = recordTaint(next, key, { ...withNode, bytes }, ctx.now);
    next = recorded.state;
    events.push(...recorded.events);
  }
  if (provenance.input_keys !== undefined && written.length > 0) {
    const propagated = propagateTaintWithEvents(next, {
      outputKeys: written,
      inputKeys: provenance.input_keys,
      node_id: provenance.node_id,
      now: ctx.now,
    });
    next = propagated.state;
    events.push(...propagated.events);
  }
  return { state: next, events, written, dropped };
}

function routeReservedKey(
  state: WorkflowState,
  key: string,
  value: JsonValue,
  now: string,
): { state: WorkflowState; events: RunEvent[] } | undefined {
  if (key === TAINT_REGISTRY_KEY) {
    if (!isRecord(value)) return undefined;
    let next = state;
    const events: RunEvent[] = [];
    for (const [taintedKey, raw] of Object.entries(value)) {
      const parsed = TaintMetadataSchema.safeParse(raw);
      if (!parsed.success) return undefined;
      const recorded = recordTaint(next, taintedKey, parsed.data, now);
      next = recorded.state;
      events.push(...recorded.events);
    }
    return { state: next, events };
  }
  if (key === LESSON_PROVENANCE_KEY) {
    if (!isRecord(value)) return undefined;
    let next = state;
    const events: RunEvent[] = [];
    for (const [entryId, raw] of Object.entries(value)) {
      const parsed = LessonProvenanceEntrySchema.safeParse(raw);
      if (!parsed.success) return undefined;
      const recorded = recordLessonEntry(next, entryId, parsed.data);
      next = recorded.state;
      events.push(...recorded.events);
    }
    return { state: next, events };
  }
  if (key === SWARM_HANDOFF_COUNT_KEY) {
    if (
      typeof value !== 'number' ||
      !Number.isInteger(value) ||
      value < state.swarm_handoff_count
    ) {
      return undefined;
    }
    return { state: { ...state, swarm_handoff_count: value }, events: [] };
  }
  if (key.startsWith(SUBGRAPH_RESUME_PREFIX) && key.length > SUBGRAPH_RESUME_PREFIX.length) {
    const nodeId = key.slice(SUBGRAPH_RESUME_PREFIX.length);
    const checkpoints = { ...state.subgraph_checkpoints };
    if (value === null) delete checkpoints[nodeId];
    else checkpoints[nodeId] = value;
    return { state: { ...state, subgraph_checkpoints: checkpoints }, events: [] };
  }
  return undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Registers taint for one memory key, append-only: an existing entry is never overwritten or
 * removed (the first provenance of a key wins). `created_at` defaults to `now`. Pure.
 */
export function recordTaint(
  state: WorkflowState,
  key: string,
  input: TaintInput & { bytes?: number | undefined },
  now: string,
): { state: WorkflowState; events: RunEvent[] } {
  if (Object.hasOwn(state.taint_registry, key)) return { state, events: [] };
  const entry: TaintMetadata = { ...stripUndefined(input), created_at: input.created_at ?? now };
  return {
    state: { ...state, taint_registry: { ...state.taint_registry, [key]: entry } },
    events: [{ type: 'taint_recorded', key, source: entry.source }],
  };
}

export interface TaintPropagation {
  outputKeys: readonly string[];
  inputKeys: readonly string[];
  node_id?: string | undefined;
  now: string;
}

/**
 * Marks every output key derived from at least one tainted input as tainted with source
 * `derived` and `derived_from` = the tainted inputs (sorted, deduplicated). Append-only: an output
 * that already carries taint keeps its original entry. Pure; returns `state` itself when nothing
 * is tainted.
 */
export function propagateTaint(state: WorkflowState, propagation: TaintPropagation): WorkflowState {
  return propagateTaintWithEvents(state, propagation).state;
}

export function propagateTaintWithEvents(
  state: WorkflowState,
  { outputKeys, inputKeys, node_id, now }: TaintPropagation,
): { state: WorkflowState; events: RunEvent[] } {
  const tainted = [...new Set(inputKeys)]
    .filter((key) => Object.hasOwn(state.taint_registry, key))
    .sort();
  if (tainted.length === 0) return { state, events: [] };
  let next = state;
  const events: RunEvent[] = [];
  for (const key of outputKeys) {
    const input: TaintInput = { source: 'derived', derived_from: tainted };
    if (node_id !== undefined) input.node_id = node_id;
    const recorded = recordTaint(next, key, input, now);
    next = recorded.state;
    events.push(...recorded.events);
  }
  return { state: next, events };
}

/**
 * Adds one lesson-provenance entry, append-only: an existing `entryId` is kept as it is (a
 * replayed record is a no-op). Pure.
 */
export function recordLessonEntry(
  state: WorkflowState,
  entryId: string,
  entry: LessonProvenanceEntry,
): { state: WorkflowState; events: RunEvent[] } {
  if (Object.hasOwn(state.lesson_provenance, entryId)) return { state, events: [] };
  const clean = stripUndefined(entry);
  return {
    state: { ...state, lesson_provenance: { ...state.lesson_provenance, [entryId]: clean } },
    events: [
      {
        type: 'lessons_recorded',
        entry_id: entryId,
        node_id: clean.node_id,
        fact_ids: clean.fact_ids,
      },
    ],
  };
}

/** Merges a whole registry append-only, in the registry's key order. Pure. */
export function mergeLessonRegistry(
  state: WorkflowState,
  registry: Readonly<Record<string, LessonProvenanceEntry>> | undefined,
): { state: WorkflowState; events: RunEvent[] } {
  let next = state;
  const events: RunEvent[] = [];
  for (const [entryId, entry] of Object.entries(registry ?? {})) {
    const recorded = recordLessonEntry(next, entryId, entry);
    next = recorded.state;
    events.push(...recorded.events);
  }
  return { state: next, events };
}

/** A copy without keys whose value is undefined, so states stay plain JSON. */
export function stripUndefined<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = item;
  return out as T;
}
