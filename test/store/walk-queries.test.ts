/**
 * The stored-graph walks (walk-queries.ts) against the in-memory walks of core/graph/walk.ts, on
 * random DAGs on SQLite and Postgres: for every node, both directions, several depths, limits
 * and kinds filters, the same ids in the same order.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { walkAncestors, walkDescendants } from '../../src/core/graph/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { createReadQueries } from '../../src/store/read-model/queries.js';
import {
  type Backend,
  must,
  openEngine,
  postgresBackend,
  sqliteBackend,
} from '../engine/support.js';
import { createRandom } from '../events/support.js';
import { describeWithPostgres } from '../support/services.js';

const KINDS = ['goal', 'inference', 'tool_call', 'tool_result', 'answer'] as const;

function suite(backend: Backend) {
  afterAll(() => backend.cleanup());

  it('walks like the in-memory graph on random DAGs', async () => {
    const seed = Number(process.env.WEFT_TEST_SEED ?? Date.now() % 1_000_000);
    const random = createRandom(seed);
    const engine = await openEngine(backend);
    const weft = createPrisma(engine.url);
    const q = createReadQueries(weft);
    try {
      for (let g = 0; g < 3; g++) {
        const threadId = `g${g}`;
        must(await engine.createThread({ threadId }));
        const ids: string[] = [];
        for (let batch = 0; batch < 6; batch++) {
          const nodes = Array.from({ length: 1 + Math.floor(random() * 8) }, (_, i) => {
            const parents =
              ids.length === 0
                ? []
                : [
                    ...new Set(
                      Array.from(
                        { length: Math.floor(random() * 3) },
                        () => ids[Math.floor(random() * ids.length)]!,
                      ),
                    ),
                  ];
            return {
              kind: KINDS[Math.floor(random() * KINDS.length)]!,
              payload: { g, batch, i, r: random() },
              parents,
            };
          });
          const written = must(await engine.appendNodes({ threadId, nodes }));
          ids.push(...written.nodes.map((n) => n.id));
        }
        const state = must(await engine.getState(threadId));
        for (const id of ids) {
          for (const options of [
            {},
            { depth: 1 },
            { depth: 3, kinds: ['goal', 'answer'] as const },
            { limit: 2 },
          ]) {
            for (const direction of ['ancestors', 'descendants'] as const) {
              const walk = direction === 'ancestors' ? walkAncestors : walkDescendants;
              const expected = walk(state.graph, id, options).map((n) => n.id);
              const actual = await q.walk({ threadId, id, direction, ...options });
              expect(
                actual,
                `seed ${seed}, ${threadId} ${id} ${direction} ${JSON.stringify(options)}`,
              ).toEqual(expected);
            }
          }
        }
      }
      expect(await q.walk({ threadId: 'g0', id: 'cw_unknown', direction: 'ancestors' })).toEqual(
        [],
      );
    } finally {
      await q.close();
      await weft.prisma.$disconnect();
      await engine.close();
    }
  });
}

describe('stored-graph walks (SQLite)', () => suite(sqliteBackend()));
describeWithPostgres('stored-graph walks (Postgres)', () => suite(postgresBackend()));
