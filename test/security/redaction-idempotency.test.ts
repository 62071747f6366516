/**
 * Review item 3: an idempotent retry must not write erased data back. On SQLite and Postgres:
 * `appendNodes` under an idempotency key → `redactNodes` → the same request again answers the
 * original receipt (the redacted node, its payload a tombstone), writes nothing (entries, nodes
 * and idempotency records counted) and the secret is stored nowhere afterwards. The same key
 * with a different request is IDEMPOTENCY_KEY_REUSED before and after the redaction; the same
 * holds for `remember` and for a fork's key; and the same content sent without its key (or under
 * a new one) names the redacted node and is refused with VALIDATION_FAILED, writing nothing.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Result } from '../../src/core/errors.js';
import { createSequentialIds, createSimulatedClock } from '../../src/core/ports.js';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { createPrisma } from '../../src/store/prisma/index.js';
import { rawQuery } from '../../src/store/prisma/raw.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import {
  type Backend,
  failure,
  footprint,
  must,
  postgresBackend,
  sqliteBackend,
} from '../engine/support.js';
import { describeWithPostgres } from '../support/services.js';

const SSN = '078-05-1120';
const REASON = 'erasure request 7';

function retrySuite(backend: Backend) {
  const opened: Engine[] = [];
  afterEach(async () => {
    for (const engine of opened.splice(0)) await engine.close();
  });
  afterAll(() => backend.cleanup());

  async function open() {
    const url = await backend.freshUrl();
    const engine = createEngine({
      store: openThreadStore(url),
      clock: createSimulatedClock('2026-03-01T00:00:00.000Z', 1000),
      ids: createSequentialIds('id'),
    });
    opened.push(engine);
    return { engine, url };
  }

  /** Every stored byte (SQLite: the file and its WAL) or text column (Postgres) of the database. */
  async function storedText(url: string): Promise<string> {
    if (url.startsWith('file:')) {
      const path = url.slice('file:'.length);
      let all = readFileSync(path).toString('latin1');
      try {
        all += readFileSync(`${path}-wal`).toString('latin1');
      } catch {}
      return all;
    }
    const weft = createPrisma(url);
    try {
      const tables = (await rawQuery(
        weft,
        `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`,
      )) as Array<{ tablename: string }>;
      const parts: string[] = [];
      for (const { tablename } of tables) {
        const rows = await rawQuery(weft, `SELECT * FROM "${tablename}"`);
        parts.push(
          JSON.stringify(rows, (_k, v) =>
            v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v,
          ),
        );
      }
      return parts.join('\n');
    } finally {
      await weft.prisma.$disconnect();
    }
  }

  /** What a write could have added: rows per table and each thread's log length. */
  async function counts(engine: Engine) {
    const { counts, lengths } = await footprint(engine.store);
    return { counts, lengths };
  }

  // A root node (no parents): the same text appended again is the same node.
  const append = (engine: Engine, threadId: string, key: string, text: string) =>
    engine.appendNodes({
      threadId,
      idempotencyKey: key,
      nodes: [{ kind: 'inference', payload: { text }, parents: [] }],
    });

  /** The answer, with the tombstone's time left out (it is the redaction's). */
  const receipt = <T>(result: Result<T>) => JSON.parse(JSON.stringify(must(result)));

  it('a retry after the redaction answers the original receipt and writes nothing', async () => {
    const { engine, url } = await open();
    must(await engine.createThread({ threadId: 't' }));
    const first = must(await append(engine, 't', 'turn-1', `my ssn is ${SSN}`));
    const [node] = first.nodes;
    expect(failure(await append(engine, 't', 'turn-1', 'something else')).code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );

    must(await engine.redactNodes({ threadId: 't', nodeIds: [node!.id], reason: REASON }));
    const before = await counts(engine);

    const retried = receipt(await append(engine, 't', 'turn-1', `my ssn is ${SSN}`));
    expect(retried).toEqual({
      ...JSON.parse(JSON.stringify(first)),
      nodes: [
        { ...node, payload: { 'weft:redacted': expect.objectContaining({ reason: REASON }) } },
      ],
    });
    // Another request under the key is refused as it was before the redaction.
    expect(failure(await append(engine, 't', 'turn-1', 'something else')).code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(await counts(engine)).toEqual(before);
    expect(JSON.stringify(must(await engine.getState('t')).graph)).not.toContain(SSN);
    await engine.close();
    opened.splice(0);
    expect(await storedText(url)).not.toContain(SSN);
  });

  it('covers remember and keys of forks sharing the node, and refuses the content unkeyed', async () => {
    const { engine, url } = await open();
    must(await engine.createThread({ threadId: 't' }));
    const first = must(await append(engine, 't', 'turn-1', `my ssn is ${SSN}`));
    const memory = {
      threadId: 't',
      idempotencyKey: 'mem-1',
      type: 'memory',
      key: 'ssn',
      content: { ssn: SSN },
    };
    const remembered = must(await engine.remember(memory));
    must(await engine.forkThread({ threadId: 't', newThreadId: 'f' }));
    // Through the fork, a command answered with the source's node: the key is the fork's.
    const viaFork = must(
      await engine.appendNodes({
        threadId: 'f',
        idempotencyKey: 'fork-turn',
        nodes: [{ kind: 'answer', payload: { text: 'noted' }, parents: [first.nodes[0]!.id] }],
      }),
    );

    must(
      await engine.redactNodes({
        threadId: 't',
        nodeIds: [first.nodes[0]!.id, remembered.node.id],
        reason: REASON,
      }),
    );
    const before = await counts(engine);
    const again = must(await append(engine, 't', 'turn-1', `my ssn is ${SSN}`));
    const recalled = must(await engine.remember(memory));
    expect(JSON.stringify([again, recalled])).not.toContain(SSN);
    expect(again.nodes[0]!.id).toBe(first.nodes[0]!.id);
    expect(recalled).toMatchObject({
      node: { id: remembered.node.id },
      logIndex: remembered.logIndex,
    });
    expect(
      must(
        await engine.appendNodes({
          threadId: 'f',
          idempotencyKey: 'fork-turn',
          nodes: [{ kind: 'answer', payload: { text: 'noted' }, parents: [first.nodes[0]!.id] }],
        }),
      ),
    ).toEqual(JSON.parse(JSON.stringify(viaFork)));
    expect(failure(await engine.remember({ ...memory, content: { ssn: 'other' } })).code).toBe(
      'IDEMPOTENCY_KEY_REUSED',
    );
    // Without its key (or under a new one) the same content names the redacted node: refused.
    for (const key of [undefined, 'turn-2']) {
      const refused = failure(
        await engine.appendNodes({
          threadId: 't',
          ...(key === undefined ? {} : { idempotencyKey: key }),
          nodes: [{ kind: 'inference', payload: { text: `my ssn is ${SSN}` }, parents: [] }],
        }),
      );
      expect(refused).toMatchObject({
        code: 'VALIDATION_FAILED',
        issues: [{ path: '$.nodes[0]' }],
      });
    }
    expect(await counts(engine)).toEqual(before);
    await engine.close();
    opened.splice(0);
    expect(await storedText(url)).not.toContain(SSN);
  });

  it('withholds the payload from entries that recorded the node again', async () => {
    const { engine, url } = await open();
    must(await engine.createThread({ threadId: 't' }));
    const first = must(await append(engine, 't', 'turn-1', `my ssn is ${SSN}`));
    // The same content again, under another key and through a fork: answered with the node,
    // recorded in each append's entry.
    const echo = must(await append(engine, 't', 'turn-1-again', `my ssn is ${SSN}`));
    expect(echo.nodes[0]!.id).toBe(first.nodes[0]!.id);
    must(await engine.forkThread({ threadId: 't', newThreadId: 'f' }));
    must(await append(engine, 'f', 'fork-turn', `my ssn is ${SSN}`));
    must(await engine.forkThread({ threadId: 'f', newThreadId: 'g' }));

    must(
      await engine.redactNodes({ threadId: 'f', nodeIds: [first.nodes[0]!.id], reason: REASON }),
    );
    const before = await counts(engine);
    const retried = must(await append(engine, 't', 'turn-1-again', `my ssn is ${SSN}`));
    expect(retried.logLength).toBe(echo.logLength);
    expect(JSON.stringify(retried)).not.toContain(SSN);
    expect(await counts(engine)).toEqual(before);
    for (const threadId of ['t', 'f', 'g']) {
      expect(JSON.stringify(must(await engine.readEntries(threadId)))).not.toContain(SSN);
      const report = must(await engine.verify(threadId));
      expect(report.ok).toBe(true);
      expect(report.redactedNodes?.every((n) => n.recorded)).toBe(true);
    }
    await engine.close();
    opened.splice(0);
    expect(await storedText(url)).not.toContain(SSN);
    // A fresh engine replays every log with the rewritten entries.
    const fresh = createEngine({ store: openThreadStore(url) });
    opened.push(fresh);
    for (const threadId of ['t', 'f', 'g'])
      expect(must(await fresh.verify(threadId)).ok).toBe(true);
  });
}

describe('idempotent retries after a redaction [sqlite]', () => retrySuite(sqliteBackend()));
describeWithPostgres('idempotent retries after a redaction', () => retrySuite(postgresBackend()));
