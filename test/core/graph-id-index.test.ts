import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CausalNode } from '../../src/core/graph/index.js';
import { IdIndex } from '../../src/core/graph/store.js';

/** Just enough of a node for the index, which reads only `id`. */
const nodeWithId = (id: string) => ({ id }) as CausalNode;

describe('IdIndex (id → sequence of a graph store)', () => {
  it('answers like a Map through growth, and truncated() keeps only the prefix', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 12 }), { maxLength: 300 }),
        fc.array(fc.string({ maxLength: 12 }), { maxLength: 30 }),
        fc.nat(),
        (ids, probes, cut) => {
          const nodes = ids.map(nodeWithId);
          const index = new IdIndex();
          const model = new Map<string, number>();
          ids.forEach((id, i) => {
            index.add(id, i + 1);
            model.set(id, i + 1);
          });
          for (const id of [...ids, ...probes]) expect(index.get(nodes, id)).toBe(model.get(id));
          const count = ids.length === 0 ? 0 : cut % (ids.length + 1);
          const prefix = index.truncated(count);
          for (const id of [...ids, ...probes]) {
            const seq = model.get(id);
            expect(prefix.get(nodes, id)).toBe(seq !== undefined && seq <= count ? seq : undefined);
          }
          // The prefix keeps growing on its own without disturbing the original.
          const extra = `${ids.join('')}-new`;
          prefix.add(extra, count + 1);
          const branchNodes = [...nodes.slice(0, count), nodeWithId(extra)];
          expect(prefix.get(branchNodes, extra)).toBe(count + 1);
          expect(index.get(nodes, extra)).toBeUndefined();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('finds ids of the content-id form among 20,000 and misses absent ones', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `cw_${i.toString(16).padStart(24, '0')}`);
    const nodes = ids.map(nodeWithId);
    const index = new IdIndex();
    for (let i = 0; i < ids.length; i++) index.add(ids[i]!, i + 1);
    for (let i = 0; i < ids.length; i += 97) expect(index.get(nodes, ids[i]!)).toBe(i + 1);
    expect(index.get(nodes, 'cw_ffffffffffffffffffffffff')).toBeUndefined();
    expect(index.get(nodes, '')).toBeUndefined();
  });
});
