/**
 * projectEntry writes a `nodes_appended` entry's text and its node payloads from one
 * canonicalisation of each payload (a skeleton with marks, payloads spliced in): the texts must
 * be exactly canonicalJson of the entry and of each payload, whatever the payloads hold.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import type { JsonValue } from '../../src/core/json.js';
import {
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  planCreateThread,
  type ThreadState,
} from '../../src/core/thread/index.js';
import { projectEntry } from '../../src/store/read-model/project.js';

const NOW = '2026-03-01T00:00:00.000Z';

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe('projectEntry texts', () => {
  it('equal canonicalJson of the entry and of each payload', () => {
    let state: ThreadState = createThreadMachine().initial;
    const created = must(planCreateThread('t', {}));
    state = must(commitEvent(state, created, { id: 'e0', recordedAt: NOW })).state;
    const payloads: JsonValue[] = [
      { z: 1, a: 'b', m: { y: [3, 2, { q: null, b: true }], a: 'é\u2028"\\' } },
      { payload: { payload: 'nested' }, text: '"payload":{"x":1}' },
      { text: '\u0000weft-payload:0"' },
      'plain string',
      [1, 2.5, 0, 1e21],
      { '\u00e9': 1, e: 2, E: 3, _: 4, '10': 5, '9': 6 },
    ];
    const nodes = payloads.map((payload, i) => ({
      kind: i % 2 === 0 ? ('inference' as const) : ('tool_result' as const),
      payload,
    }));
    const planned = must(planAppendNodes(state, nodes, NOW));
    const committed = must(commitEvent(state, planned, { id: 'e1', recordedAt: NOW }));
    const changes = projectEntry(state, committed.state, committed.effects, committed.entry, 't');
    expect(changes.entries[0]!.entry).toBe(canonicalJson(committed.entry));
    expect(changes.nodes.map((n) => n.payload)).toEqual(payloads.map((p) => canonicalJson(p)));
  });
});
