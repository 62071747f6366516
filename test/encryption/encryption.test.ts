/**
 * Encryption at rest: with a key, no payload or memory text reaches the
 * database — not the SQLite file nor its WAL, not any Postgres table — and every read returns the
 * original values; a wrong or missing key is a typed error at open, never garbage; hashes stay
 * over the plaintext (strict verification passes).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { exportAgentState } from '../../src/core/graph/index.js';
import { type Engine, openEngine } from '../../src/engine/index.js';
import { createReads } from '../../src/reads/index.js';
import {
  createFieldCodec,
  EncryptionError,
  PLAIN_CODEC,
  parseEncryptionKey,
} from '../../src/store/crypto/index.js';
import { createTestDatabase, describeWithPostgres } from '../support/services.js';

const MARKER = 'ZQX-secret-marker-7f3a';
const KEY = randomBytes(32);
const OTHER_KEY = randomBytes(32);

function must<T>(result: { ok: true; value: T } | { ok: false; error: { message: string } }): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

/** Writes marker text everywhere payload text goes; returns what must read back. */
async function writeMarkedThread(engine: Engine) {
  const { threadId } = must(await engine.createThread({ metadata: { purpose: 'test' } }));
  // One big append (packed entry), several small ones (entries stored as text), memory, a run.
  const big = Array.from({ length: 12 }, (_, i) => ({
    kind: 'tool_result' as const,
    payload: { i, text: `${MARKER} big ${i} ${'x'.repeat(200)}` },
  }));
  must(await engine.appendNodes({ threadId, nodes: big }));
  for (let i = 0; i < 4; i++) {
    must(
      await engine.appendNodes({
        threadId,
        nodes: [{ kind: 'inference', payload: { text: `${MARKER} small ${i}` } }],
        idempotencyKey: `k-${i}`,
      }),
    );
  }
  must(await engine.remember({ threadId, type: 'memory', key: 'pref', content: `${MARKER} mem` }));
  must(await engine.startRun({ threadId, goal: `${MARKER} goal` }));
  const state = must(await engine.getState(threadId));
  return { threadId, length: state.length, nodes: exportAgentState(state.graph).nodes };
}

async function checkReads(
  engine: Engine,
  databaseUrl: string,
  expected: Awaited<ReturnType<typeof writeMarkedThread>>,
) {
  const state = must(await engine.getState(expected.threadId));
  expect(exportAgentState(state.graph).nodes).toEqual(expected.nodes);
  // Time travel through a snapshot and the stored entries.
  const middle = must(await engine.stateAt(expected.threadId, 3));
  expect(middle.agentState.nodes).toEqual(expected.nodes.slice(0, 13));
  expect(must(await engine.verify(expected.threadId, { strict: true })).ok).toBe(true);
  // The API's read queries open the payload columns too.
  const reads = createReads(engine, { databaseUrl });
  try {
    const keys = expected.nodes.map((n) => ({ threadId: expected.threadId, id: n.id }));
    const views = await reads.nodes(keys);
    expect(views.map((v) => v?.payload)).toEqual(expected.nodes.map((n) => n.payload));
  } finally {
    await reads.close();
  }
  // A retried idempotent command answers from its stored (sealed) response.
  const retried = must(
    await engine.appendNodes({
      threadId: expected.threadId,
      nodes: [{ kind: 'inference', payload: { text: `${MARKER} small 0` } }],
      idempotencyKey: 'k-0',
    }),
  );
  expect(JSON.stringify(retried)).toContain(`${MARKER} small 0`);
}

async function expectOpenFails(
  databaseUrl: string,
  encryptionKey: Uint8Array | undefined,
  code: string,
) {
  const error = await openEngine(databaseUrl, { storeOptions: { encryptionKey } }).then(
    async (engine) => {
      await engine.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EncryptionError);
  expect((error as EncryptionError).code).toBe(code);
}

describe('field codec', () => {
  it('round-trips text and bytes, and refuses a wrong key or altered bytes', () => {
    const codec = createFieldCodec(KEY);
    const sealed = codec.sealText(`{"a":"${MARKER}"}`);
    expect(sealed).not.toContain(MARKER);
    expect(codec.openText(sealed)).toBe(`{"a":"${MARKER}"}`);
    const bytes = codec.sealBytes(Buffer.from([0, 1, 2, 3]));
    expect([...codec.openBytes(bytes)]).toEqual([0, 1, 2, 3]);
    const other = createFieldCodec(OTHER_KEY);
    expect(() => other.openText(sealed)).toThrow(/does not decrypt/);
    const altered = `${sealed.slice(0, -4)}AAA=`;
    expect(() => codec.openText(altered)).toThrow(EncryptionError);
    expect(() => PLAIN_CODEC.openText(sealed)).toThrow(/no encryption key is configured/);
    // Plain values written before encryption was turned on read as they are.
    expect(codec.openText('{"a":1}')).toBe('{"a":1}');
  });

  it('parses 32-byte keys as hex or base64 and rejects anything else', () => {
    expect(parseEncryptionKey(KEY.toString('hex'))).toEqual(KEY);
    expect(parseEncryptionKey(KEY.toString('base64'))).toEqual(KEY);
    expect(() => parseEncryptionKey('short')).toThrow(/32 bytes/);
    expect(() => parseEncryptionKey(randomBytes(16).toString('base64'))).toThrow(/16 bytes/);
  });
});

describe('encryption at rest [sqlite]', () => {
  const root = mkdtempSync(join(tmpdir(), 'weft-encryption-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('keeps marker text out of the file and WAL, reads it back, and refuses wrong or missing keys', async () => {
    const url = `file:${join(root, 'sealed.db')}`;
    const options = { storeOptions: { encryptionKey: KEY }, snapshots: { entries: 2 } };
    const engine = await openEngine(url, options);
    let expected: Awaited<ReturnType<typeof writeMarkedThread>>;
    try {
      expected = await writeMarkedThread(engine);
      // Every file of the database (main, -wal, -shm) while the engine is still open.
      for (const name of readdirSync(root).filter((n) => n.startsWith('sealed.db'))) {
        expect(readFileSync(join(root, name)).includes(MARKER), name).toBe(false);
      }
      await checkReads(engine, url, expected);
    } finally {
      await engine.close();
    }
    for (const name of readdirSync(root).filter((n) => n.startsWith('sealed.db'))) {
      expect(readFileSync(join(root, name)).includes(MARKER), name).toBe(false);
    }

    // A fresh engine with the key replays from the stored (sealed) entries.
    const again = await openEngine(url, options);
    try {
      await checkReads(again, url, expected);
    } finally {
      await again.close();
    }
    await expectOpenFails(url, OTHER_KEY, 'ENCRYPTION_KEY_MISMATCH');
    await expectOpenFails(url, undefined, 'ENCRYPTION_KEY_MISSING');
  });

  it('a plaintext database keeps working without a key', async () => {
    const url = `file:${join(root, 'plain.db')}`;
    const engine = await openEngine(url, { snapshots: { entries: 2 } });
    try {
      const expected = await writeMarkedThread(engine);
      await checkReads(engine, url, expected);
      expect(readFileSync(join(root, 'plain.db-wal')).includes(MARKER)).toBe(true);
    } finally {
      await engine.close();
    }
  });
});

describeWithPostgres('encryption at rest [postgres]', () => {
  it('keeps marker text out of every table, reads it back, and refuses wrong or missing keys', async () => {
    const db = await createTestDatabase();
    try {
      const options = { storeOptions: { encryptionKey: KEY }, snapshots: { entries: 2 } };
      const engine = await openEngine(db.url, options);
      try {
        const expected = await writeMarkedThread(engine);
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          const tables = (
            await client.query<{ tablename: string }>(
              `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`,
            )
          ).rows.map((r) => r.tablename);
          expect(tables).toContain('node');
          let dumped = 0;
          for (const table of tables) {
            const rows = (
              await client.query<{ t: string }>(`SELECT t::text AS t FROM "${table}" t`)
            ).rows;
            dumped += rows.length;
            const text = rows.map((r) => r.t).join('\n');
            // bytea columns print as hex: look for the marker's hex too.
            expect(text.includes(MARKER), table).toBe(false);
            expect(text.includes(Buffer.from(MARKER).toString('hex')), table).toBe(false);
          }
          expect(dumped).toBeGreaterThan(20);
        } finally {
          await client.end();
        }
        await checkReads(engine, db.url, expected);
      } finally {
        await engine.close();
      }
      await expectOpenFails(db.url, OTHER_KEY, 'ENCRYPTION_KEY_MISMATCH');
      await expectOpenFails(db.url, undefined, 'ENCRYPTION_KEY_MISSING');
    } finally {
      await db.drop();
    }
  });
});
