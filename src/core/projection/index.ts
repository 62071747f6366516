/**
 * The projection compiler: a bounded, deterministic, explainable prompt view of a
 * causal graph for one model call. `compileProjection(graphOrThreadState, input, options)`.
 * Real tokenizers live in ./gpt-tokenizer.ts, which is not re-exported (it is slow to load).
 */
export { clusterId } from './clusters.js';
export { compileProjection, roundScore } from './compile.js';
export { callKey } from './facts.js';
export { DEFAULT_RECENT_NODES, type ResolvedInput, resolveProjectionInput } from './input.js';
export { MAX_LEVEL, SHRINK_LEVELS, type ShrinkLevel } from './render.js';
export { AUTHORITY, RECENCY_SCALE, SCORE_WEIGHTS } from './select.js';
export { CHARS_TOKEN_COUNTER, createBpeTokenCounter, estimateLines } from './tokens.js';
export * from './types.js';
