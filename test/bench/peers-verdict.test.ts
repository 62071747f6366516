/**
 * The peer benchmark's probe of "write time per turn flat": which turns each of its four graphs
 * writes, in which order, and what it concludes from given costs — not how fast anything is (the
 * writers here are recorders; the bench's are LangGraph graphs in child processes).
 */
import { describe, expect, it } from 'vitest';
import {
  type FlatnessResult,
  flatnessLine,
  measureFlatness,
  median,
  type TurnWriter,
} from '../../bench/peers/flatness.js';

/** A writer that records the turns it writes, in order, and "spends" `cost(n)` ms on turn n. */
function recorder(name: string, log: string[], cost: (n: number) => number = () => 1) {
  const turns: number[] = [];
  const writer: TurnWriter & { turns: number[] } = {
    turns,
    async writeUpTo(n) {
      while (turns.length < n) turns.push(turns.length + 1);
    },
    async writeTimed(n) {
      if (n !== turns.length + 1) throw new Error(`${name}: turn ${n} after ${turns.length}`);
      turns.push(n);
      log.push(`${name}:${n}`);
      return cost(n);
    },
    close: async () => {},
  };
  return writer;
}

const result = (first: number, last: number): FlatnessResult => ({
  span: 100,
  total: 1000,
  first: { median: first, mean: first, totalCpu: first + 4, floorCpu: 4 },
  last: { median: last, mean: last, totalCpu: last + 9, floorCpu: 9 },
});

describe('flatness probe', () => {
  it('writes each thread in order and times the early and late turns side by side', async () => {
    const log: string[] = [];
    // The saver costs 10 ms a turn on the short thread and 12 on the long; the floors 1 and 3.
    const writers = {
      shortSaver: recorder('shortSaver', log, () => 10),
      shortFloor: recorder('shortFloor', log, () => 1),
      longSaver: recorder('longSaver', log, () => 12),
      longFloor: recorder('longFloor', log, () => 3),
    };
    const r = await measureFlatness(writers, 30, 3);
    const range = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(writers.shortSaver.turns).toEqual(range(1, 6));
    expect(writers.shortFloor.turns).toEqual(range(1, 6));
    expect(writers.longSaver.turns).toEqual(range(1, 30));
    expect(writers.longFloor.turns).toEqual(range(1, 30));
    // Rounds alternate which thread goes first; each saver turn follows the same turn on its floor.
    expect(log).toEqual([
      'shortFloor:4',
      'shortSaver:4',
      'longFloor:28',
      'longSaver:28',
      'longFloor:29',
      'longSaver:29',
      'shortFloor:5',
      'shortSaver:5',
      'shortFloor:6',
      'shortSaver:6',
      'longFloor:30',
      'longSaver:30',
    ]);
    expect(r.first).toEqual({ median: 9, mean: 9, totalCpu: 10, floorCpu: 1 });
    expect(r.last).toEqual({ median: 9, mean: 9, totalCpu: 12, floorCpu: 3 });
  });

  it('refuses a run too short to have a warm-up, an early and a late span', async () => {
    const log: string[] = [];
    const writers = {
      shortSaver: recorder('a', log),
      shortFloor: recorder('b', log),
      longSaver: recorder('c', log),
      longFloor: recorder('d', log),
    };
    await expect(measureFlatness(writers, 8, 3)).rejects.toThrow('at least 9 turns');
  });

  it('judges the median own share against 1.2× and prints the totals beside it', () => {
    expect(flatnessLine('sqlite', result(10, 11.5))).toContain('1.15× — met (within 1.2×)');
    const missed = flatnessLine('postgres', result(10, 13));
    expect(missed).toContain('1.30× — MISSED (over 1.2×)');
    expect(missed).toContain('turns 101–200 beside turns 901–1000');
    expect(missed).toContain('LangGraph nothing stored 4.0 ms → 9.0 ms (2.25×)');
    expect(flatnessLine('sqlite', result(-1, 3))).toContain('not judged');
  });

  it('takes the middle of odd and even samples', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});
