/**
 * Real token counts through gpt-tokenizer (pure JS; o200k for GPT-4o-class models, cl100k for
 * GPT-4/3.5). Not re-exported from the projection barrel: evaluating the two encodings' rank
 * tables takes one to two seconds, which every importer of the core would pay. Load this module
 * lazily (`await import(...)`) where a request first asks for a real tokenizer, and pass
 * `GPT_TOKEN_COUNTERS` as `CompileOptions.tokenCounters`.
 */
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { createBpeTokenCounter } from './tokens.js';
import type { TokenCounter, TokenizerName } from './types.js';

/** Special-token text such as `<|endoftext|>` in a payload is counted as text, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

export const O200K_TOKEN_COUNTER: TokenCounter = createBpeTokenCounter('o200k', (text) =>
  countO200k(text, AS_TEXT),
);

export const CL100K_TOKEN_COUNTER: TokenCounter = createBpeTokenCounter('cl100k', (text) =>
  countCl100k(text, AS_TEXT),
);

export const GPT_TOKEN_COUNTERS: Readonly<Partial<Record<TokenizerName, TokenCounter>>> =
  Object.freeze({ o200k: O200K_TOKEN_COUNTER, cl100k: CL100K_TOKEN_COUNTER });
