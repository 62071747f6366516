/**
 * What redaction leaves, as docs/security.md says it, on SQLite:
 * - the same content sent again without its idempotency key names the redacted node, and is
 *   refused, only with the same parents; once the frontier moved, a node with default parents is
 *   another node, and it is written again, payload and all;
 * - in WAL mode the redaction's zeroed pages go to the WAL first: until a checkpoint the main
 *   database file still holds the payload, and `PRAGMA wal_checkpoint(TRUNCATE)` removes it from
 *   the file and the WAL.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/index.js';
import { migrate } from '../../src/store/migrate/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { failure, must } from '../engine/support.js';

const SECRET = 'residue-secret-5f1c9e';
const root = mkdtempSync(join(tmpdir(), 'weft-residue-'));
const engines: Engine[] = [];
afterAll(async () => {
  for (const engine of engines.splice(0)) await engine.close();
  rmSync(root, { recursive: true, force: true });
});

async function open(name: string): Promise<{ engine: Engine; path: string }> {
  const path = join(root, `${name}.db`);
  await migrate(`file:${path}`);
  const engine = createEngine({ store: openThreadStore(`file:${path}`) });
  engines.push(engine);
  return { engine, path };
}

const holds = (file: string) =>
  existsSync(file) && readFileSync(file).toString('latin1').includes(SECRET);

/** A checkpoint that copies every committed page into the main file and empties the WAL. */
function checkpoint(path: string): void {
  const db = new Database(path);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

describe('what a redaction leaves on SQLite', () => {
  it('the same content without its key: refused with the same parents, written again after the frontier moved', async () => {
    const { engine } = await open('resend');
    must(await engine.createThread({ threadId: 't' }));
    const goal = must(
      await engine.appendNodes({ threadId: 't', nodes: [{ kind: 'goal', payload: 'g' }] }),
    ).nodes[0]!;
    const secret = { kind: 'inference' as const, payload: { text: SECRET } };
    const written = must(
      await engine.appendNodes({ threadId: 't', idempotencyKey: 'k1', nodes: [secret] }),
    ).nodes[0]!;
    must(await engine.redactNodes({ threadId: 't', nodeIds: [written.id], reason: 'erasure' }));

    const same = await engine.appendNodes({
      threadId: 't',
      nodes: [{ ...secret, parents: [goal.id] }],
    });
    expect(failure(same).code).toBe('VALIDATION_FAILED');

    // The frontier is now the redacted node: default parents make another node of it.
    const again = must(await engine.appendNodes({ threadId: 't', nodes: [secret] })).nodes[0]!;
    expect(again.id).not.toBe(written.id);
    expect(again.payload).toEqual({ text: SECRET });
  });

  it('the main file keeps the payload until a checkpoint; wal_checkpoint(TRUNCATE) removes it', async () => {
    const { engine, path } = await open('checkpoint');
    must(await engine.createThread({ threadId: 't' }));
    const written = must(
      await engine.appendNodes({
        threadId: 't',
        nodes: [{ kind: 'inference', payload: { text: SECRET } }],
      }),
    ).nodes[0]!;
    // As SQLite's automatic checkpoint would, sooner or later: the payload is in the main file.
    checkpoint(path);
    expect(holds(path)).toBe(true);

    must(await engine.redactNodes({ threadId: 't', nodeIds: [written.id], reason: 'erasure' }));
    // The zeroed pages are in the WAL; the main file still has the old ones.
    expect(holds(path)).toBe(true);

    checkpoint(path);
    expect(holds(path)).toBe(false);
    expect(holds(`${path}-wal`)).toBe(false);
  });
});
