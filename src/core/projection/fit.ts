import { err, ok, type Result } from '../errors.js';
import { MAX_LEVEL } from './render.js';
import { isMandatoryBits, isRemovableBits } from './select.js';
import { linesUnits } from './tokens.js';
import type { TokenCounter } from './types.js';
import {
  contextLines,
  focusLineOf,
  type RenderedView,
  renderView,
  type ViewContext,
} from './view.js';

/*
 * Fitting. The candidate views, in the order they are tried:
 *   A. shrink level 0 with every selected node, then without the removable nodes (closure and
 *      relevance picks), oldest first, one at a time;
 *   B. the remaining nodes (mandatory and protected query matches) at shrink levels 1 … 4;
 *   C. at level 4, without the protected query matches, oldest first, one at a time.
 * The first candidate whose additive estimate and exact count are both ≤ the target wins. When
 * none does, the last candidate — the mandatory part, fully shrunk — is returned if its exact
 * count is ≤ maxPromptTokens; otherwise PROJECTION_OVERFLOW names that count and the ceiling.
 * Estimates are summed per line (tokens.ts), so a candidate costs O(1) after the first of its
 * level and only candidates that pass the estimate are rendered.
 */

export interface Fitted extends RenderedView {
  focus: number[];
  level: number;
  tokens: number;
  /** Exact tokens of the last candidate (the mandatory part, fully shrunk). */
  requiredTokens: number;
  /** Selected sequences left out to fit. */
  trimmed: number[];
}

export function fitView(
  context: ViewContext,
  counter: TokenCounter,
  targetTokens: number,
  maxPromptTokens: number,
): Result<Fitted> {
  const { bits, order } = context.selection;
  const nl = counter.newlineUnits;
  const lineUnits = new Map<number, number>();
  const unitsOf = (seq: number, level: number): number => {
    const key = seq * (MAX_LEVEL + 1) + level;
    let units = lineUnits.get(key);
    if (units === undefined) {
      units = counter.lineUnits(focusLineOf(context, seq, level)) + nl;
      lineUnits.set(key, units);
    }
    return units;
  };
  const fixedUnits = (level: number): number => {
    const lines = contextLines(context, level);
    return linesUnits(counter, [...lines.head, ...lines.tail]);
  };
  const minimal = () => order.filter((seq) => isMandatoryBits(bits.get(seq)!));
  const attempt = (units: number, level: number, focus: () => number[]): Fitted | undefined => {
    if (counter.toTokens(units) > targetTokens) return undefined;
    const shown = focus();
    const view = renderView(context, shown, level);
    const tokens = counter.count(view.prompt);
    if (tokens > targetTokens) return undefined;
    return { ...view, focus: shown, level, tokens, requiredTokens: 0, trimmed: [] };
  };
  const finish = (fitted: Fitted): Result<Fitted> => {
    const required = counter.count(renderView(context, minimal(), MAX_LEVEL).prompt);
    const shown = new Set(fitted.focus);
    return ok({ ...fitted, requiredTokens: required, trimmed: order.filter((s) => !shown.has(s)) });
  };

  // A. level 0, trimming removable nodes oldest first.
  const removable = order.filter((seq) => isRemovableBits(bits.get(seq)!));
  let units = fixedUnits(0);
  for (const seq of order) units += unitsOf(seq, 0);
  const removed = new Set<number>();
  const withoutRemoved = () => order.filter((seq) => !removed.has(seq));
  let fitted = attempt(units, 0, withoutRemoved);
  for (let i = 0; fitted === undefined && i < removable.length; i++) {
    const seq = removable[i]!;
    removed.add(seq);
    units -= unitsOf(seq, 0);
    fitted = attempt(units, 0, withoutRemoved);
  }
  if (fitted !== undefined) return finish(fitted);

  // B. shrink levels 1 … MAX_LEVEL.
  const kept = withoutRemoved();
  for (let level = 1; level <= MAX_LEVEL; level++) {
    units = fixedUnits(level);
    for (const seq of kept) units += unitsOf(seq, level);
    fitted = attempt(units, level, () => kept);
    if (fitted !== undefined) return finish(fitted);
  }

  // C. dropping protected query matches, oldest first.
  const protectedMatches = kept.filter((seq) => !isMandatoryBits(bits.get(seq)!));
  for (const seq of protectedMatches) {
    removed.add(seq);
    units -= unitsOf(seq, MAX_LEVEL);
    fitted = attempt(units, MAX_LEVEL, withoutRemoved);
    if (fitted !== undefined) return finish(fitted);
  }

  const focus = minimal();
  const view = renderView(context, focus, MAX_LEVEL);
  const tokens = counter.count(view.prompt);
  if (tokens > maxPromptTokens) {
    return err({
      code: 'PROJECTION_OVERFLOW',
      message:
        `the mandatory part of this view needs ${tokens} tokens even fully shrunk, above ` +
        `maxPromptTokens ${maxPromptTokens}: raise maxPromptTokens to at least ${tokens}, or ` +
        'reduce the frontier and current resources of the thread',
      requiredTokens: tokens,
      maxPromptTokens,
    });
  }
  return finish({ ...view, focus, level: MAX_LEVEL, tokens, requiredTokens: tokens, trimmed: [] });
}
