/** The content check: what each side reads back must be the workload, message for message. */
import type { ConversationView, ViewMessage } from './workload.js';

/** The messages of turn `n` (1-based): from its user goal up to the next one. */
export function turnMessagesOf(view: ConversationView, n: number): ViewMessage[] {
  const out: ViewMessage[] = [];
  let turn = 0;
  for (const message of view.messages) {
    if (message.role === 'user') turn++;
    if (turn === n) out.push(message);
    else if (turn > n) break;
  }
  return out;
}

/** Turn numbers to compare: the first, the middle, the last and a few seeded others. */
export function sampleTurns(count: number, seed = 11): number[] {
  const picks = new Set([1, Math.max(1, Math.floor(count / 2)), count]);
  let x = seed;
  while (picks.size < Math.min(count, 8)) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    picks.add(1 + (x % count));
  }
  return [...picks].sort((a, b) => a - b);
}

export interface Mismatch {
  what: string;
  detail: string;
}

/**
 * Compares a read-back with the expected view: the sample turns one by one (so a failure names
 * the turn), the memory, then the whole conversation. Returns the first difference.
 */
export function compareViews(
  what: string,
  actual: ConversationView,
  expected: ConversationView,
  samples: readonly number[],
): Mismatch | undefined {
  for (const n of samples) {
    const a = JSON.stringify(turnMessagesOf(actual, n));
    const e = JSON.stringify(turnMessagesOf(expected, n));
    if (a !== e) return { what, detail: `turn ${n} differs: got ${clip(a)}, expected ${clip(e)}` };
  }
  const am = JSON.stringify(sortKeys(actual.memory));
  const em = JSON.stringify(sortKeys(expected.memory));
  if (am !== em) return { what, detail: `memory differs: got ${clip(am)}, expected ${clip(em)}` };
  if (actual.messages.length !== expected.messages.length) {
    return {
      what,
      detail: `${actual.messages.length} messages read back, expected ${expected.messages.length}`,
    };
  }
  for (let i = 0; i < expected.messages.length; i++) {
    const a = JSON.stringify(actual.messages[i]);
    const e = JSON.stringify(expected.messages[i]);
    if (a !== e)
      return { what, detail: `message ${i} differs: got ${clip(a)}, expected ${clip(e)}` };
  }
  return undefined;
}

const sortKeys = (record: Record<string, string>) =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

const clip = (text: string) => (text.length > 160 ? `${text.slice(0, 160)}…` : text);
