/**
 * One writer per index across OS processes: two processes (children/race-writer.ts), each one engine with
 * WRITERS concurrent writers, append single nodes to one thread with `expectedIndex` for
 * WEFT_RACE_SECONDS (default 10). Every outcome is reported; the parent then checks that the
 * acknowledged indices are exactly 1..n-1 of the n-entry log (no gap, no duplicate — index 0 is
 * the thread_created entry), that each acknowledged entry holds the acknowledged node, that every
 * failure was a typed CONFLICT whose actualIndex is past the index sent, that the node read
 * model matches the log, and that the log verifies strictly. It also requires conflicts that
 * revealed the other process's writes, so that the cross-process race did happen.
 *
 * On Postgres this is the acceptance test of concurrent writers; the SQLite run (a shorter one) checks the
 * same guarantees across processes sharing one database file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { WeftError } from '../../src/core/errors.js';
import { describeWithPostgres } from '../support/services.js';
import {
  type BackendName,
  engineOn,
  expectSoundLog,
  freshDatabase,
  type LineChild,
  loggedNodes,
  must,
  spawnLineChild,
} from './support.js';

const CHILD = join(import.meta.dirname, 'children', 'race-writer.ts');
const PROCESSES = ['p', 'q'];
const WRITERS = 8;
const SECONDS = Number(process.env.WEFT_RACE_SECONDS ?? 10);
const SQLITE_SECONDS = Number(process.env.WEFT_RACE_SQLITE_SECONDS ?? 5);

const tmpRoot = mkdtempSync(join(tmpdir(), 'weft-race-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

interface AckLine {
  t: 'ack';
  writer: number;
  expectedIndex: number;
  index: number;
  logLength: number;
  node: string;
}

interface ConflictLine {
  t: 'conflict';
  writer: number;
  sentIndex: number;
  error: WeftError;
  revealedOther: boolean;
}

type Line = AckLine | ConflictLine | { t: 'ready' | 'done' | 'error' };

interface Report {
  tag: string;
  acks: AckLine[];
  conflicts: ConflictLine[];
  others: Line[];
  done: boolean;
}

async function race(backend: BackendName, seconds: number) {
  const db = await freshDatabase(backend);
  const engine = engineOn(db.url);
  try {
    const threadId = `race-${backend}`;
    must(await engine.createThread({ threadId }));
    const goFile = join(tmpRoot, `go-${backend}`);
    const children: Array<{ tag: string; child: LineChild }> = PROCESSES.map((tag) => ({
      tag,
      child: spawnLineChild(CHILD, [
        db.url,
        threadId,
        tag,
        String(WRITERS),
        String(seconds * 1000),
        goFile,
      ]),
    }));
    await Promise.all(children.map(({ child }) => child.waitForLine((l) => l === '{"t":"ready"}')));
    writeFileSync(goFile, '');

    const reports: Report[] = [];
    for (const { tag, child } of children) {
      const exit = await child.exited;
      expect(exit, `process ${tag}: ${child.stderr()}`).toEqual({ code: 0, signal: null });
      const lines = child.lines.map((line) => JSON.parse(line) as Line);
      reports.push({
        tag,
        acks: lines.filter((l): l is AckLine => l.t === 'ack'),
        conflicts: lines.filter((l): l is ConflictLine => l.t === 'conflict'),
        others: lines.filter((l) => l.t !== 'ack' && l.t !== 'conflict' && l.t !== 'ready'),
        done: lines.at(-1)?.t === 'done',
      });
    }

    for (const report of reports) {
      // Every non-success was a CONFLICT: no other error, returned or thrown.
      expect(report.others, `process ${report.tag}: only acks and conflicts`).toEqual([
        { t: 'done' },
      ]);
      expect(report.done).toBe(true);
      // Every loser got the typed conflict, naming the thread, the index it sent and a later
      // actual index.
      const untyped = report.conflicts.filter(
        (c) =>
          c.error.code !== 'CONFLICT' ||
          c.error.threadId !== threadId ||
          c.error.expectedIndex !== c.sentIndex ||
          !Number.isInteger(c.error.actualIndex) ||
          c.error.actualIndex <= c.sentIndex,
      );
      expect(untyped, `process ${report.tag}: malformed conflicts`).toEqual([]);
      // A success lands exactly at the index the writer expected.
      const misplaced = report.acks.filter(
        (a) => a.index !== a.expectedIndex || a.logLength !== a.index + 1,
      );
      expect(misplaced, `process ${report.tag}: acks not at their expectedIndex`).toEqual([]);
    }

    const entries = await expectSoundLog(engine, threadId);
    const acks = reports.flatMap((r) => r.acks).sort((a, b) => a.index - b.index);
    // No duplicate and no gap: the acknowledged indices are exactly 1..n-1.
    expect(acks.map((a) => a.index)).toEqual(entries.slice(1).map((e) => e.index));
    // Every acknowledged entry is in the log, holding the acknowledged node and only it.
    const wrong = acks.filter((ack) => {
      const event = entries[ack.index]!.event;
      const nodes = event.nodes as Array<{ id: string }> | undefined;
      return event.type !== 'nodes_appended' || nodes?.length !== 1 || nodes[0]!.id !== ack.node;
    });
    expect(wrong, 'acknowledged entries not in the log as acknowledged').toEqual([]);
    // The node read model holds exactly the acknowledged nodes, each at its entry's index.
    const dump = await engine.store.dumpReadModels([threadId]);
    const rows = dump.node
      .map((row) => `${row.logIndex as number}:${row.id as string}`)
      .sort()
      .join();
    const logged = loggedNodes(entries)
      .map((node) => `${node.index}:${node.id}`)
      .sort()
      .join();
    expect(rows).toBe(logged);
    expect(loggedNodes(entries).map((n) => n.id)).toEqual(acks.map((a) => a.node));

    for (const report of reports) {
      expect(report.acks.length, `process ${report.tag} won some races`).toBeGreaterThan(0);
      expect(report.conflicts.length, `process ${report.tag} lost some races`).toBeGreaterThan(0);
      expect(
        report.conflicts.filter((c) => c.revealedOther).length,
        `process ${report.tag} lost races to the other process`,
      ).toBeGreaterThan(0);
    }
    console.info(
      `[race ${backend}] ${PROCESSES.length} processes × ${WRITERS} writers for ${seconds} s: ` +
        `log length ${entries.length}; ` +
        reports
          .map(
            (r) =>
              `${r.tag}: ${r.acks.length} acks, ${r.conflicts.length} conflicts ` +
              `(${r.conflicts.filter((c) => c.revealedOther).length} revealing the other process)`,
          )
          .join('; '),
    );
  } finally {
    await engine.close();
    await db.drop();
  }
}

describeWithPostgres('two processes × 8 writers with expectedIndex on one thread', () => {
  it(
    `${SECONDS} s: no gap, no duplicate, every ack present, every loser a typed conflict`,
    async () => {
      await race('postgres', SECONDS);
    },
    60_000 + SECONDS * 3000,
  );
});

describe('two processes × 8 writers with expectedIndex on one thread [sqlite]', () => {
  it(
    `${SQLITE_SECONDS} s: no gap, no duplicate, every ack present, every loser a typed conflict`,
    async () => {
      await race('sqlite', SQLITE_SECONDS);
    },
    60_000 + SQLITE_SECONDS * 3000,
  );
});
