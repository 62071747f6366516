import type { WeftError } from '../errors.js';
import type { RunEvent } from './events.js';
import { transitionTo } from './lifecycle.js';
import { BUDGET_THRESHOLDS, type Spend, type WorkflowState } from './schema.js';
import { isTerminalStatus } from './status.js';

/** USD per million tokens, by direction. */
export interface ModelPrice {
  input_per_mtok: number;
  output_per_mtok: number;
}
/** Prices by model id. Unknown models cost 0 and are reported with a `usage_unpriced` event. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** A small default table (list prices, USD / 1M tokens); configure your own via RunContext. */
export const DEFAULT_PRICE_TABLE: PriceTable = {
  'gpt-4o': { input_per_mtok: 2.5, output_per_mtok: 10 },
  'gpt-4o-mini': { input_per_mtok: 0.15, output_per_mtok: 0.6 },
  'gpt-4.1': { input_per_mtok: 2, output_per_mtok: 8 },
  'gpt-4.1-mini': { input_per_mtok: 0.4, output_per_mtok: 1.6 },
  o3: { input_per_mtok: 2, output_per_mtok: 8 },
  'o4-mini': { input_per_mtok: 1.1, output_per_mtok: 4.4 },
  'claude-opus-4-20250514': { input_per_mtok: 15, output_per_mtok: 75 },
  'claude-sonnet-4-20250514': { input_per_mtok: 3, output_per_mtok: 15 },
  'claude-3-5-haiku-20241022': { input_per_mtok: 0.8, output_per_mtok: 4 },
  'gemini-2.5-pro': { input_per_mtok: 1.25, output_per_mtok: 10 },
  'gemini-2.5-flash': { input_per_mtok: 0.3, output_per_mtok: 2.5 },
};

export interface UsageInput {
  model: string;
  node_id?: string | undefined;
  input_tokens: number;
  output_tokens: number;
  /** A known cost wins over the price table (e.g. a subgraph that already summed its spend). */
  cost_usd?: number | undefined;
}

/**
 * USD sums are rounded to 1e-12 so that repeated float additions cannot land a hair below a
 * budget the charges exactly reach (0.1 + 0.2 style drift). Deterministic.
 */
export const roundUsd = (usd: number): number => Math.round(usd * 1e12) / 1e12;

/** Cost of one call from the price table. Pure. */
export function computeUsageCost(
  model: string,
  inputTokens: number,
  outputTokens: number,
  prices: PriceTable = DEFAULT_PRICE_TABLE,
): { cost_usd: number; priced: boolean } {
  const price = Object.hasOwn(prices, model) ? prices[model] : undefined;
  if (price === undefined) return { cost_usd: 0, priced: false };
  return {
    cost_usd: roundUsd(
      (inputTokens * price.input_per_mtok + outputTokens * price.output_per_mtok) / 1_000_000,
    ),
    priced: true,
  };
}

/**
 * The largest token total a run, a breakdown entry or a thread may reach (2^31 − 1): totals are
 * served as GraphQL `Int` (32-bit signed) and stored in `integer` columns, so a call that would
 * take one past it is refused before anything is written.
 */
export const MAX_TOKEN_TOTAL = 2_147_483_647;

/** Token counts already charged somewhere (a run, one breakdown entry, a thread). */
export interface TokenTotals {
  input: number;
  output: number;
}

/**
 * VALIDATION_FAILED naming the field when charging `input` / `output` more tokens would take
 * any of `totals` (input, output or their sum) past MAX_TOKEN_TOTAL; undefined when it fits.
 * `paths` name the two fields of the caller's input. Pure.
 */
export function checkTokenRoom(
  totals: ReadonlyArray<TokenTotals | undefined>,
  input: number,
  output: number,
  paths: { input: string; output: string },
): WeftError | undefined {
  for (const total of totals) {
    if (total === undefined) continue;
    const used = total.input + total.output;
    const path =
      used + input > MAX_TOKEN_TOTAL
        ? paths.input
        : used + input + output > MAX_TOKEN_TOTAL
          ? paths.output
          : undefined;
    if (path === undefined) continue;
    const message = `token totals are limited to ${MAX_TOKEN_TOTAL}: ${used} already recorded, this would add ${input + output}`;
    return { code: 'VALIDATION_FAILED', message, issues: [{ path, message }] };
  }
  return undefined;
}

/** The token totals `applyUsage` would charge on `state` for a call of `model` on `nodeId`. */
export function runTokenTotals(
  state: WorkflowState,
  model: string,
  nodeId: string | undefined,
): Array<TokenTotals | undefined> {
  const spend = (s: Spend | undefined) =>
    s === undefined ? undefined : { input: s.input_tokens, output: s.output_tokens };
  const nodeKey = nodeId ?? state.current_node;
  return [
    { input: state.total_input_tokens, output: state.total_output_tokens },
    { input: 0, output: state.total_tokens_used },
    spend(Object.hasOwn(state.model_breakdown, model) ? state.model_breakdown[model] : undefined),
    spend(
      nodeKey !== undefined && Object.hasOwn(state.node_breakdown, nodeKey)
        ? state.node_breakdown[nodeKey]
        : undefined,
    ),
  ];
}

const ZERO_SPEND: Spend = { input_tokens: 0, output_tokens: 0, cost_usd: 0, calls: 0 };

function addSpend(spend: Spend | undefined, input: number, output: number, usd: number): Spend {
  const base = spend ?? ZERO_SPEND;
  return {
    input_tokens: base.input_tokens + input,
    output_tokens: base.output_tokens + output,
    cost_usd: roundUsd(base.cost_usd + usd),
    calls: base.calls + 1,
  };
}

/**
 * Charges one model call: totals, `model_breakdown[model]` and `node_breakdown[node]` (node =
 * `usage.node_id`, else `current_node`, else no node entry), each with `calls + 1`. Usage is a
 * fact, so it is charged in every status — failed attempts and late reports on terminal runs
 * included. Then the budgets (invariant 9) are checked:
 *
 * - USD thresholds 50/75/90/100 % fire once each, ascending, as `budget_threshold_crossed`
 *   events, recorded in `budget_thresholds_fired` (a jump past several fires each in order);
 * - tokens: `budget_exceeded {kind: 'tokens'}` when `total_tokens_used` first goes above
 *   `max_token_budget`; USD: `budget_exceeded {kind: 'usd'}` when `total_cost_usd` first reaches
 *   `budget_usd`;
 * - an exceeded budget fails a non-terminal run (no retry); a terminal run keeps its status.
 *
 * Pure.
 */
export function applyUsage(
  state: WorkflowState,
  usage: UsageInput,
  ctx: { now: string; prices?: PriceTable | undefined },
): { state: WorkflowState; events: RunEvent[] } {
  const priced =
    usage.cost_usd !== undefined
      ? { cost_usd: usage.cost_usd, priced: true }
      : computeUsageCost(usage.model, usage.input_tokens, usage.output_tokens, ctx.prices);
  const usd = priced.cost_usd;
  const { input_tokens: input, output_tokens: output } = usage;
  const nodeKey = usage.node_id ?? state.current_node;

  const next: WorkflowState = {
    ...state,
    total_input_tokens: state.total_input_tokens + input,
    total_output_tokens: state.total_output_tokens + output,
    total_tokens_used: state.total_tokens_used + input + output,
    total_cost_usd: roundUsd(state.total_cost_usd + usd),
    model_breakdown: {
      ...state.model_breakdown,
      [usage.model]: addSpend(state.model_breakdown[usage.model], input, output, usd),
    },
  };
  if (nodeKey !== undefined) {
    next.node_breakdown = {
      ...state.node_breakdown,
      [nodeKey]: addSpend(state.node_breakdown[nodeKey], input, output, usd),
    };
  }

  const recorded: RunEvent = {
    type: 'usage_recorded',
    model: usage.model,
    input_tokens: input,
    output_tokens: output,
    cost_usd: usd,
    priced: priced.priced,
  };
  if (nodeKey !== undefined) recorded.node_id = nodeKey;
  const events: RunEvent[] = [recorded];
  if (!priced.priced) events.push({ type: 'usage_unpriced', model: usage.model });

  const checked = checkBudgets(state, next, ctx.now);
  return { state: checked.state, events: [...events, ...checked.events] };
}

function checkBudgets(
  before: WorkflowState,
  state: WorkflowState,
  now: string,
): { state: WorkflowState; events: RunEvent[] } {
  const events: RunEvent[] = [];
  let next = state;
  const budget = state.budget_usd;
  if (budget !== undefined) {
    const fired = new Set(state.budget_thresholds_fired);
    const newly = BUDGET_THRESHOLDS.filter(
      (percent) =>
        !fired.has(percent) && state.total_cost_usd >= roundUsd((budget * percent) / 100),
    );
    if (newly.length > 0) {
      next = { ...next, budget_thresholds_fired: [...state.budget_thresholds_fired, ...newly] };
      for (const percent of newly) {
        events.push({
          type: 'budget_threshold_crossed',
          percent,
          total_cost_usd: state.total_cost_usd,
          budget_usd: budget,
        });
      }
    }
  }

  // An exceeded budget is reported when it is first crossed, and also whenever it still finds
  // the run active (e.g. a hydrated snapshot that was already over), since that fails the run.
  const active = !isTerminalStatus(next.status);
  const reasons: string[] = [];
  const tokenLimit = state.max_token_budget;
  if (tokenLimit !== undefined && state.total_tokens_used > tokenLimit) {
    if (active || before.total_tokens_used <= tokenLimit) {
      events.push({
        type: 'budget_exceeded',
        kind: 'tokens',
        total: state.total_tokens_used,
        limit: tokenLimit,
      });
    }
    reasons.push(`token budget exceeded: ${state.total_tokens_used} > ${tokenLimit} tokens`);
  }
  if (budget !== undefined && state.total_cost_usd >= budget) {
    if (active || before.total_cost_usd < budget) {
      events.push({
        type: 'budget_exceeded',
        kind: 'usd',
        total: state.total_cost_usd,
        limit: budget,
      });
    }
    reasons.push(`USD budget exhausted: $${state.total_cost_usd} of $${budget}`);
  }
  if (reasons.length > 0 && active) {
    const failed = transitionTo(next, 'failed', now, {
      reason: 'budget_exceeded',
      last_error: `Budget exceeded (${reasons.join('; ')}).`,
    });
    next = failed.state;
    events.push(...failed.events);
  }
  return { state: next, events };
}

/**
 * The refusal for new work on a run whose limits are spent, or undefined while it may go on:
 *
 * - BUDGET_EXCEEDED when `total_tokens_used > max_token_budget` or `total_cost_usd >= budget_usd`
 *   (the conditions that fail a run, invariant 9);
 * - ITERATION_LIMIT_EXCEEDED when `iteration_count > max_iterations` (a dispatch already went
 *   over the limit and failed the run).
 *
 * Usage reports are facts and are never refused (spend is kept, failed attempts included); the
 * engine asks this before a dispatch or an approval, which would start more work. Pure.
 */
export function spentLimitError(state: WorkflowState): WeftError | undefined {
  const runId = state.run_id;
  const reasons: string[] = [];
  const tokens = state.max_token_budget;
  if (tokens !== undefined && state.total_tokens_used > tokens) {
    reasons.push(`${state.total_tokens_used} tokens used of ${tokens}`);
  }
  const usd = state.budget_usd;
  if (usd !== undefined && state.total_cost_usd >= usd) {
    reasons.push(`$${state.total_cost_usd} spent of $${usd}`);
  }
  if (reasons.length > 0) {
    return {
      code: 'BUDGET_EXCEEDED',
      runId,
      message: `Run ${runId} is over its budget (${reasons.join('; ')}): it accepts no more work. Cancel it or start a new run with a larger budget.`,
    };
  }
  if (state.iteration_count > state.max_iterations) {
    return {
      code: 'ITERATION_LIMIT_EXCEEDED',
      runId,
      message: `Run ${runId} went over max_iterations ${state.max_iterations} (${state.iteration_count} dispatches): it accepts no more work. Cancel it or start a new run.`,
    };
  }
  return undefined;
}
