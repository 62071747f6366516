import { err, ok, type Result, type ValidationIssue } from '../errors.js';
import { CHARS_TOKEN_COUNTER } from './tokens.js';
import {
  type CompileOptions,
  DEFAULT_MAX_NODES,
  DEFAULT_MAX_PROMPT_TOKENS,
  DEFAULT_TARGET_TOKENS,
  MAX_NODES_LIMIT,
  MAX_PROMPT_TOKENS_LIMIT,
  MAX_QUERY_CHARS,
  type ProjectionInput,
  TOKENIZER_NAMES,
  type TokenCounter,
} from './types.js';

export const DEFAULT_RECENT_NODES = 8;
const MAX_RECENT_NODES = 256;

/** The input with every default applied and every bound checked. */
export interface ResolvedInput {
  query: string;
  targetTokens: number;
  maxPromptTokens: number;
  maxNodes: number;
  counter: TokenCounter;
  omittedLimit: number;
  recentNodes: number;
}

/**
 * Checks a projection request and applies the defaults (ceiling 64,000, target
 * 16,000 clamped to the ceiling, 48 nodes). Every problem is reported at once as
 * VALIDATION_FAILED with a JSON path per issue. Pure.
 */
export function resolveProjectionInput(
  input: ProjectionInput,
  options: CompileOptions = {},
): Result<ResolvedInput> {
  const issues: ValidationIssue[] = [];
  const maxPromptTokens = integer(
    issues,
    '$.maxPromptTokens',
    input.maxPromptTokens,
    DEFAULT_MAX_PROMPT_TOKENS,
    1,
    MAX_PROMPT_TOKENS_LIMIT,
  );
  const target = integer(
    issues,
    '$.projectionTargetTokens',
    input.projectionTargetTokens,
    DEFAULT_TARGET_TOKENS,
    1,
    MAX_PROMPT_TOKENS_LIMIT,
  );
  const maxNodes = integer(
    issues,
    '$.maxNodes',
    input.maxNodes,
    DEFAULT_MAX_NODES,
    1,
    MAX_NODES_LIMIT,
  );
  const recentNodes = integer(
    issues,
    '$options.recentNodes',
    options.recentNodes,
    DEFAULT_RECENT_NODES,
    0,
    MAX_RECENT_NODES,
  );
  const query = input.query ?? '';
  if (typeof query !== 'string') {
    issues.push({ path: '$.query', message: 'query must be a string' });
  } else if (query.length > MAX_QUERY_CHARS) {
    issues.push({
      path: '$.query',
      message: `query is ${query.length} characters; shorten it to at most ${MAX_QUERY_CHARS}`,
    });
  }
  const counter = resolveCounter(issues, input.tokenizer ?? 'chars', options);
  const omittedLimit = options.omittedLimit ?? 0;
  if (!(omittedLimit >= 0) || (Number.isFinite(omittedLimit) && !Number.isInteger(omittedLimit))) {
    issues.push({
      path: '$options.omittedLimit',
      message: 'omittedLimit must be a non-negative integer or Infinity',
    });
  }
  if (issues.length > 0 || counter === undefined) {
    return err({
      code: 'VALIDATION_FAILED',
      message: `invalid projection input: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    });
  }
  return ok({
    query: query as string,
    targetTokens: Math.min(target, maxPromptTokens),
    maxPromptTokens,
    maxNodes,
    counter,
    omittedLimit,
    recentNodes,
  });
}

function integer(
  issues: ValidationIssue[],
  path: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    issues.push({
      path,
      message: `must be an integer from ${min} to ${max} (got ${String(value)})`,
    });
    return fallback;
  }
  return value;
}

function resolveCounter(
  issues: ValidationIssue[],
  name: unknown,
  options: CompileOptions,
): TokenCounter | undefined {
  if (!(TOKENIZER_NAMES as readonly unknown[]).includes(name)) {
    issues.push({
      path: '$.tokenizer',
      message: `unknown tokenizer ${JSON.stringify(name)}; use one of ${TOKENIZER_NAMES.join(', ')}`,
    });
    return undefined;
  }
  const counter = options.tokenCounters?.[name as keyof typeof options.tokenCounters];
  if (counter !== undefined) return counter;
  if (name === 'chars') return CHARS_TOKEN_COUNTER;
  issues.push({
    path: '$.tokenizer',
    message: `tokenizer ${name} is not loaded: pass GPT_TOKEN_COUNTERS from core/projection/gpt-tokenizer.ts as options.tokenCounters`,
  });
  return undefined;
}
