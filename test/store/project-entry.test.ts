/**
 * projectEntry writes a `nodes_appended` entry's text and its node payloads from one
 * canonicalisation of each payload (a skeleton with marks, payloads spliced in): the texts must
 * be exactly canonicalJson of the entry and of each payload, whatever the payloads hold.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import type { JsonValue } from '../../src/core/json.js';
import { joinParts } from '../../src/core/thread/entry-text.js';
import {
  commitEvent,
  createThreadMachine,
  planAppendNodes,
  planCreateThread,
  type ThreadState,
} from '../../src/core/thread/index.js';
import { openPackedEntry, packEntry } from '../../src/store/read-model/packed-entry.js';
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
    // What a commit hands over gives the same rows.
    expect(committed.text).toBe(canonicalJson(committed.entry));
    expect(committed.parts).toBeDefined();
    expect(joinParts(committed.parts!)).toBe(committed.text);
    const fromCommit = projectEntry(
      state,
      committed.state,
      committed.effects,
      committed.entry,
      't',
      committed.text,
      committed.parts,
    );
    expect(fromCommit.entries[0]!.entry).toBe(changes.entries[0]!.entry);
    expect(fromCommit.nodes).toEqual(changes.nodes);
  });

  it('pack from parts exactly as from the text, also when a recorded node created nothing', () => {
    let state: ThreadState = createThreadMachine().initial;
    state = must(
      commitEvent(state, must(planCreateThread('t', {})), { id: 'e0', recordedAt: NOW }),
    ).state;
    const big = (n: number) => ({ n, text: 'x'.repeat(600), quote: '"payload":' });
    const first = must(planAppendNodes(state, [{ kind: 'inference', payload: big(1) }], NOW));
    state = must(commitEvent(state, first, { id: 'e1', recordedAt: NOW })).state;
    // The first node again (same content, same parents: it exists), then two new ones.
    const again = { kind: 'inference' as const, payload: big(1), parents: [] as string[] };
    const planned = must(
      planAppendNodes(
        state,
        [again, { kind: 'inference', payload: big(1) }, { kind: 'tool_result', payload: big(2) }],
        NOW,
      ),
    );
    const committed = must(commitEvent(state, planned, { id: 'e2', recordedAt: NOW }));
    const changes = projectEntry(
      state,
      committed.state,
      committed.effects,
      committed.entry,
      't',
      committed.text,
      committed.parts,
    );
    const created = changes.nodes.map((n) => ({ sequence: n.sequence, payload: n.payload }));
    expect(created.length).toBeLessThan(3);
    const fromText = packEntry(committed.text, created);
    const fromParts = packEntry(committed.text, created, committed.parts);
    expect(fromText).not.toBeNull();
    expect(Buffer.from(fromParts!).equals(Buffer.from(fromText!))).toBe(true);
    const opened = openPackedEntry(fromParts!);
    const bySequence = new Map(created.map((c) => [c.sequence, c.payload]));
    expect(opened.join((s) => bySequence.get(s))).toBe(committed.text);
  });
});
