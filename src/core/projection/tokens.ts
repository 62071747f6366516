import type { TokenCounter } from './types.js';

/*
 * Token estimates are additive over lines, so the compiler can size a candidate view by summing
 * the lines it is made of instead of rendering and counting whole prompts:
 *
 *   estimate(prompt) = toTokens(Σ lineUnits(line) + (lines - 1) × newlineUnits)
 *
 * For `chars` the unit is a UTF-16 code unit and toTokens is ceil(units / 4), which is exactly
 * ceil(prompt.length / 4). For a BPE tokenizer the unit is a token of the line on its own; the
 * rendered prompt has no empty lines and no leading or trailing whitespace on any line, so BPE
 * pre-tokenisation splits it at line breaks and the sum is the count of the whole prompt or
 * (where a line's last punctuation merges with the break) a slight over-estimate. The compiler
 * still counts the chosen prompt exactly before returning it.
 */

/** The default estimate: `ceil(chars / 4)`. */
export const CHARS_TOKEN_COUNTER: TokenCounter = Object.freeze({
  name: 'chars',
  count: (text: string) => Math.ceil(text.length / 4),
  lineUnits: (line: string) => line.length,
  newlineUnits: 1,
  toTokens: (units: number) => Math.ceil(units / 4),
});

/** A line-additive counter over a BPE `countTokens` (one newline = one token). */
export function createBpeTokenCounter(
  name: TokenCounter['name'],
  countTokens: (text: string) => number,
): TokenCounter {
  return Object.freeze({
    name,
    count: countTokens,
    lineUnits: countTokens,
    newlineUnits: 1,
    toTokens: (units: number) => units,
  });
}

/** The additive estimate of a list of lines joined with `\n`. */
export function estimateLines(counter: TokenCounter, lines: readonly string[]): number {
  return counter.toTokens(linesUnits(counter, lines));
}

/** Σ lineUnits + the line breaks between the lines. */
export function linesUnits(counter: TokenCounter, lines: readonly string[]): number {
  let units = lines.length > 1 ? (lines.length - 1) * counter.newlineUnits : 0;
  for (const line of lines) units += counter.lineUnits(line);
  return units;
}
