/**
 * The peer benchmark's verdict on "write time per turn flat" judges WeftSaver's own share — the
 * CPU per turn above the same graph on a saver storing nothing — and prints the total beside it.
 * Fed figures, not measurements: what it concludes from them, not how fast anything is.
 */
import { describe, expect, it } from 'vitest';
import { flatVerdict, type SideResult } from '../../bench/peers/report.js';
import { NO_STORAGE, ON_WEFT_SAVER } from '../../bench/peers/side.js';

const run = (
  system: SideResult['system'],
  backend: SideResult['backend'],
  firstCpu: number,
  lastCpu: number,
  turns = 1000,
): SideResult => ({
  system,
  backend,
  turns,
  history: 'turns',
  writeMs: undefined,
  bytes: undefined,
  latestMs: undefined,
  coldLatestMs: undefined,
  timeTravelMs: undefined,
  forkMs: undefined,
  perTurn: {
    span: 100,
    first: { wallMs: firstCpu, cpuMs: firstCpu },
    last: { wallMs: lastCpu, cpuMs: lastCpu },
  },
});

describe('flat write time verdict', () => {
  it('judges the own share, not the total that includes LangGraph’s growth', () => {
    // Total 1,200 → 1,700 ms (1.42×); floor 400 → 800 (2×); own 800 → 900 (1.13×).
    const [line] = flatVerdict([
      run(ON_WEFT_SAVER, 'sqlite', 1200, 1700),
      run(NO_STORAGE, 'sqlite', 400, 800),
    ]);
    expect(line).toContain("WeftSaver's own 1.13× — met (within 1.2×)");
    expect(line).toContain('total 1.42×');
    expect(line).toContain('LangGraph nothing stored 2.00×');
  });

  it('marks a miss when the own share grows past the bound', () => {
    const lines = flatVerdict([
      run(ON_WEFT_SAVER, 'postgres', 2000, 3000),
      run(NO_STORAGE, 'postgres', 400, 800),
    ]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("WeftSaver's own 1.38× — MISSED (over 1.2×)");
  });

  it('does not judge without a floor taken at the same size', () => {
    const lines = flatVerdict([
      run(ON_WEFT_SAVER, 'sqlite', 1200, 1700),
      run(NO_STORAGE, 'sqlite', 40, 80, 100),
    ]);
    expect(lines).toEqual([
      '1,000 turns sqlite (CPU per turn, 101–200 / 901–1,000): total 1.42×; not judged: no run without storage at this size',
    ]);
  });
});
