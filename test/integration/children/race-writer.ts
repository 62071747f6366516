/**
 * Child process of the cross-process writer race (run with `node --import tsx`):
 * `race-writer.ts <databaseUrl> <threadId> <tag> <writers> <durationMs> <goFile>`.
 *
 * Opens one engine (as one server process would), loads the thread, prints `{"t":"ready"}`,
 * waits until <goFile> exists, then runs <writers> concurrent writers for <durationMs>. Each
 * writer appends one node at a time with `expectedIndex` = the last log length it knows: the
 * length after its own last success, or the `actualIndex` of its last CONFLICT. Every outcome is
 * one line on stdout:
 * - `{"t":"ack","writer","expectedIndex","index","logLength","node"}` after a success;
 * - `{"t":"conflict","writer","sentIndex","error","revealedOther"}` after a CONFLICT, with the
 *   whole error value (the parent checks its typed shape); `revealedOther` is true when
 *   `actualIndex` is beyond every length this process had seen, i.e. the other process wrote it;
 * - `{"t":"error",…}` for anything else (returned or thrown).
 * Ends with `{"t":"done"}` and exit code 0 after closing the engine.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEngine } from '../../../src/engine/index.js';
import { say } from './say.js';

const args = process.argv.slice(2);
if (args.length !== 6 || args.some((arg) => arg === '')) {
  throw new Error(
    'usage: race-writer.ts <databaseUrl> <threadId> <tag> <writers> <durationMs> <goFile>',
  );
}
const [url, threadId, tag, writersText, durationText, goFile] = args as [
  string,
  string,
  string,
  string,
  string,
  string,
];

const engine = createEngine({ databaseUrl: url });
const loaded = await engine.getState(threadId);
if (!loaded.ok) {
  say({ t: 'error', code: loaded.error.code, message: loaded.error.message });
  process.exit(1);
}
let processKnown = loaded.value.length;
say({ t: 'ready' });
while (!existsSync(goFile)) await sleep(2);
const deadline = Date.now() + Number(durationText);

async function writer(w: number): Promise<void> {
  let known = processKnown;
  for (let seq = 0; Date.now() < deadline; seq++) {
    const node = { kind: 'system' as const, payload: { tag, writer: w, seq } };
    try {
      const result = await engine.appendNodes({ threadId, expectedIndex: known, nodes: [node] });
      if (result.ok) {
        const { logIndex, logLength, nodes } = result.value;
        say({
          t: 'ack',
          writer: w,
          expectedIndex: known,
          index: logIndex,
          logLength,
          node: nodes[0]?.id,
        });
        known = logLength;
        processKnown = Math.max(processKnown, logLength);
      } else if (result.error.code === 'CONFLICT') {
        const revealedOther = result.error.actualIndex > processKnown;
        say({ t: 'conflict', writer: w, sentIndex: known, error: result.error, revealedOther });
        known = result.error.actualIndex;
        processKnown = Math.max(processKnown, known);
      } else {
        say({ t: 'error', writer: w, sentIndex: known, error: result.error });
        // Reload, so that one odd answer does not stop this writer.
        known = (await engine.store.getLogLength(threadId)) ?? known;
      }
    } catch (error) {
      say({
        t: 'error',
        writer: w,
        sentIndex: known,
        thrown: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      known = (await engine.store.getLogLength(threadId)) ?? known;
    }
  }
}

await Promise.all(Array.from({ length: Number(writersText) }, (_, w) => writer(w)));
await engine.close();
say({ t: 'done' });
