/**
 * Weft's library entry. The binding names — canonicalJson, nodeId,
 * validateAgentState, canTransitionStatus, isTerminalStatus, hydrateWorkflowState — plus the pure
 * core they come from, and the engine for embedding Weft on a database (`openEngine(url)`
 * migrates and opens; `createEngine(options)` opens on a migrated database or a given store),
 * the deadline scheduler and the projection compiler (`compileProjection`), and
 * `openEngineWithEvents` for an engine whose commits wake a server's subscribers through Redis.
 */
export { canonicalJson } from './core/canonical.js';
export * from './core/errors.js';
export * from './core/graph/index.js';
export { nodeIdentityText } from './core/identity.js';
export type { JsonObject, JsonPrimitive, JsonValue } from './core/json.js';
export * from './core/log/index.js';
export * from './core/ports.js';
export * from './core/projection/index.js';
export * from './core/run/index.js';
export * from './core/thread/index.js';
export {
  type CommittedEvent,
  createEngine,
  type DeadlineSweep,
  type Engine,
  type EngineOptions,
  openEngine,
  type Publisher,
  type RetentionSweep,
  type RetentionSweeper,
  type RetentionSweeperOptions,
  startDeadlineScheduler,
  startRetentionSweeper,
} from './engine/index.js';
export {
  type EventedEngine,
  type EventedEngineOptions,
  openEngineWithEvents,
} from './server/root.js';
