import { WeftFailure } from '../errors.js';
import {
  CURRENT_STATE_SCHEMA_VERSION,
  DEFAULT_MAX_MEMORY_VALUE_BYTES,
  type LessonProvenanceEntry,
  toValidationIssues,
  type WorkflowState,
  WorkflowStateSchema,
} from './schema.js';

type RawState = Record<string, unknown>;

const SUBGRAPH_RESUME_PREFIX = '_subgraph_resume_';

/**
 * v1 → v2: engine-owned `_` keys move out of `memory` into first-class fields. Unknown `_` keys
 * stay in memory: a migration never destroys data it does not understand (the reserved-key rule
 * applies to new writes only).
 */
function migrateV1(raw: RawState): RawState {
  const memory: RawState = isPlainObject(raw.memory) ? { ...raw.memory } : {};
  const lifted: RawState = {};
  const lift = (memoryKey: string, field: string) => {
    if (!Object.hasOwn(memory, memoryKey)) return;
    lifted[field] = memory[memoryKey];
    delete memory[memoryKey];
  };
  lift('_taint_registry', 'taint_registry');
  lift('_lesson_provenance', 'lesson_provenance');
  lift('_pending_approval', 'pending_approval');
  lift('_policy_approved', 'policy_approvals');
  lift('_subgraph_stack', 'subgraph_stack');
  lift('_swarm_handoff_count', 'swarm_handoff_count');

  const checkpoints: RawState = isPlainObject(raw.subgraph_checkpoints)
    ? { ...raw.subgraph_checkpoints }
    : {};
  for (const key of Object.keys(memory)) {
    if (key.startsWith(SUBGRAPH_RESUME_PREFIX) && key.length > SUBGRAPH_RESUME_PREFIX.length) {
      checkpoints[key.slice(SUBGRAPH_RESUME_PREFIX.length)] = memory[key];
      delete memory[key];
    }
  }
  if (Object.keys(checkpoints).length > 0) lifted.subgraph_checkpoints = checkpoints;

  // A v1 snapshot may lack one of the two timestamps; the other is the best evidence we have.
  const created = raw.created_at ?? raw.updated_at ?? raw.started_at;
  const updated = raw.updated_at ?? raw.created_at ?? raw.started_at;
  return {
    ...raw,
    ...(created !== undefined ? { created_at: created } : {}),
    ...(updated !== undefined ? { updated_at: updated } : {}),
    memory,
    ...lifted,
    state_schema_version: 2,
  };
}

/** Migrations by source version; each returns the next version's raw shape. */
const MIGRATIONS: Readonly<Record<number, (raw: RawState) => RawState>> = { 1: migrateV1 };

/**
 * cycgraph spells two of our fields differently; snapshots of either version may carry them:
 * `_cost_alert_thresholds_fired` (fractions 0.5…1) and memory drops stamped `timestamp`.
 */
function normaliseForeignSpellings(raw: RawState): RawState {
  const out: RawState = { ...raw };
  if (Object.hasOwn(out, '_cost_alert_thresholds_fired')) {
    const fired = out._cost_alert_thresholds_fired;
    delete out._cost_alert_thresholds_fired;
    if (out.budget_thresholds_fired === undefined && Array.isArray(fired)) {
      out.budget_thresholds_fired = fired.map((f) =>
        typeof f === 'number' && f <= 1 ? Math.round(f * 100) : f,
      );
    }
  }
  if (Array.isArray(out.memory_drops)) {
    out.memory_drops = out.memory_drops.map((drop) => {
      if (!isPlainObject(drop) || !Object.hasOwn(drop, 'timestamp')) return drop;
      const { timestamp, ...rest } = drop;
      return {
        bytes: 0,
        limit: DEFAULT_MAX_MEMORY_VALUE_BYTES,
        ...rest,
        at: rest.at ?? timestamp,
      };
    });
  }
  return out;
}

/**
 * Parses a persisted run state at a load boundary: migrates older schema versions up to
 * CURRENT_STATE_SCHEMA_VERSION (a missing version means v1), fills defaults, and validates with
 * WorkflowStateSchema. Pure. Throws WeftFailure SCHEMA_VERSION_UNSUPPORTED for a snapshot from a
 * newer engine and VALIDATION_FAILED for anything malformed (never a partial repair).
 */
export function hydrateWorkflowState(raw: unknown): WorkflowState {
  const json = toJsonShape(raw);
  if (!isPlainObject(json)) {
    throw invalid([{ path: '$', message: 'a workflow state must be a JSON object' }]);
  }
  const declared = json.state_schema_version;
  let version = declared === undefined ? 1 : declared;
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw invalid([
      {
        path: '$.state_schema_version',
        message: 'state_schema_version must be a positive integer',
      },
    ]);
  }
  if (version > CURRENT_STATE_SCHEMA_VERSION) {
    throw new WeftFailure({
      code: 'SCHEMA_VERSION_UNSUPPORTED',
      version,
      supported: CURRENT_STATE_SCHEMA_VERSION,
      message: `Workflow state schema version ${version} is newer than this Weft build supports (${CURRENT_STATE_SCHEMA_VERSION}). Upgrade Weft before loading this run.`,
    });
  }
  let candidate: RawState = json;
  while (version < CURRENT_STATE_SCHEMA_VERSION) {
    const migrate = MIGRATIONS[version];
    if (migrate === undefined) {
      throw invalid([
        { path: '$.state_schema_version', message: `no migration from version ${version}` },
      ]);
    }
    candidate = migrate(candidate);
    version++;
  }
  const parsed = WorkflowStateSchema.safeParse(normaliseForeignSpellings(candidate));
  if (!parsed.success) throw invalid(toValidationIssues(parsed.error));
  return parsed.data;
}

function invalid(issues: { path: string; message: string }[]): WeftFailure {
  const first = issues[0];
  return new WeftFailure({
    code: 'VALIDATION_FAILED',
    message: `Invalid workflow state${first ? `: ${first.path}: ${first.message}` : ''}. The snapshot was not loaded.`,
    issues,
  });
}

/** Dates (from an in-memory cycgraph state) become ISO strings; everything else is kept. */
function toJsonShape(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? value : value.toISOString();
  if (Array.isArray(value)) return value.map(toJsonShape);
  if (isPlainObject(value)) {
    const out: RawState = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) out[key] = toJsonShape(item);
    }
    return out;
  }
  return value;
}

function isPlainObject(value: unknown): value is RawState {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Entry order: retrieved_at, then entry id (code-unit order) — stable across replays. */
function sortedLessonEntries(state: WorkflowState): Array<[string, LessonProvenanceEntry]> {
  return Object.entries(state.lesson_provenance).sort(([idA, a], [idB, b]) => {
    if (a.retrieved_at !== b.retrieved_at) return a.retrieved_at < b.retrieved_at ? -1 : 1;
    return idA < idB ? -1 : idA > idB ? 1 : 0;
  });
}

/** The run's lesson-provenance records, oldest first (deterministic order). Pure. */
export function getLessonProvenance(state: WorkflowState): LessonProvenanceEntry[] {
  return sortedLessonEntries(state).map(([, entry]) => entry);
}

/**
 * The fact ids injected into prompts during the run, deduplicated, in first-occurrence order
 * over `getLessonProvenance`. Pure.
 */
export function getInjectedFactIds(state: WorkflowState): string[] {
  const seen = new Set<string>();
  for (const entry of getLessonProvenance(state)) for (const id of entry.fact_ids) seen.add(id);
  return [...seen];
}
