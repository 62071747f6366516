/**
 * Child process of the crash test (run with `node --import tsx`):
 * `crash-writer.ts <databaseUrl> <threadIds,comma-separated> <writersPerThread> <batchSize> <runTag>`.
 *
 * Loads every thread, prints `{"t":"ready"}`, then appends batches of <batchSize> nodes forever
 * from `writersPerThread` concurrent writers per thread, until it is killed. After each
 * acknowledged append (the engine returned success, so the transaction committed) it prints
 * `{"t":"ack","threadId","batch","index","nodes":[ids]}` with a synchronous write to the stdout
 * pipe: once the line is out, the parent knows it, whatever happens to this process next. Any
 * error prints `{"t":"error",…}` and exits 1.
 */
import { createEngine } from '../../../src/engine/index.js';
import { say } from './say.js';

const [url, threadList, writersText, batchText, runTag] = process.argv.slice(2);
if (!url || !threadList || !writersText || !batchText || !runTag) {
  throw new Error(
    'usage: crash-writer.ts <databaseUrl> <threadIds> <writersPerThread> <batchSize> <runTag>',
  );
}
const BATCH_SIZE = Number(batchText);
const threadIds = threadList.split(',');
const writers = Number(writersText);

function fail(message: object): never {
  say({ t: 'error', ...message });
  process.exit(1);
}

const engine = createEngine({ databaseUrl: url });
for (const threadId of threadIds) {
  const loaded = await engine.getState(threadId);
  if (!loaded.ok) fail({ threadId, code: loaded.error.code, message: loaded.error.message });
}
say({ t: 'ready' });

async function writer(threadId: string, w: number): Promise<never> {
  for (let seq = 0; ; seq++) {
    const batch = `${runTag}.${threadId}.${w}.${seq}`;
    const nodes = Array.from({ length: BATCH_SIZE }, (_, part) => ({
      kind: 'system' as const,
      payload: { batch, part, of: BATCH_SIZE },
    }));
    const result = await engine.appendNodes({ threadId, nodes });
    if (!result.ok) {
      fail({ threadId, batch, code: result.error.code, message: result.error.message });
    }
    const { logIndex, nodes: written } = result.value;
    say({ t: 'ack', threadId, batch, index: logIndex, nodes: written.map((n) => n.id) });
  }
}

await Promise.all(
  threadIds.flatMap((threadId) => Array.from({ length: writers }, (_, w) => writer(threadId, w))),
).catch((error: unknown) =>
  fail({ code: 'THROWN', message: error instanceof Error ? error.stack : String(error) }),
);
