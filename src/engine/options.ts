/**
 * An engine's options with every default applied, resolved once: the engine runs on them, and
 * whoever must agree with it (the event hub re-deriving effects of entries read from the store)
 * is handed the same object instead of applying the defaults again. Resolving resolved options
 * changes nothing.
 */
import { DEFAULT_IMPORT_LIMITS, type ImportLimits } from '../core/graph/index.js';
import type { ThreadMachineOptions } from '../core/thread/index.js';
import { SLICE_MS } from '../store/read-model/index.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from './checks.js';
import { DEFAULT_SNAPSHOT_POLICY } from './snapshots.js';
import { DEFAULT_CACHE_BYTES } from './thread-cache.js';
import type { EngineOptions, SnapshotPolicy } from './types.js';

/** Attempts of a command that keeps losing races, by default. */
export const DEFAULT_MAX_ATTEMPTS = 30;

export interface ResolvedEngineOptions extends EngineOptions {
  maxPayloadBytes: number;
  /** The thread machine's options, with every import limit set (a payload's from maxPayloadBytes). */
  machineOptions: Omit<ThreadMachineOptions, 'trustRecordedIds'> & {
    importLimits: Required<ImportLimits>;
  };
  cacheBytes: number;
  sliceMs: number;
  maxAttempts: number;
  snapshots: SnapshotPolicy | false;
}

export function resolveEngineOptions(options: EngineOptions = {}): ResolvedEngineOptions {
  const retentionDays = options.retentionDays;
  if (retentionDays !== undefined && !(Number.isFinite(retentionDays) && retentionDays > 0)) {
    throw new RangeError(`createEngine: retentionDays must be a number > 0, not ${retentionDays}`);
  }
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  return {
    ...options,
    maxPayloadBytes,
    machineOptions: {
      ...options.machineOptions,
      importLimits: {
        ...DEFAULT_IMPORT_LIMITS,
        maxPayloadBytes,
        ...options.machineOptions?.importLimits,
      },
    },
    cacheBytes: options.cacheBytes ?? DEFAULT_CACHE_BYTES,
    sliceMs: options.sliceMs ?? SLICE_MS,
    maxAttempts: Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS),
    snapshots:
      options.snapshots === false ? false : { ...DEFAULT_SNAPSHOT_POLICY, ...options.snapshots },
  };
}
