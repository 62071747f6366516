/**
 * Child process for the cross-process event-log tests (run with `node --import tsx`):
 * `event-log-child.ts <databaseUrl> <threadId> <tag> <count> <goFile>` prints `ready`, waits
 * until <goFile> exists, then appends <count> single entries to <threadId>, each at the length it
 * just read, retrying after every CONFLICT; prints `{"appended":[ids],"conflicts":n}`.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogStore } from '../../src/store/event-log/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { makeEntry } from './event-log-fixtures.js';

const [url, threadId, tag, countText, goFile] = process.argv.slice(2);
if (!url || !threadId || !tag || !countText || !goFile) {
  throw new Error('usage: event-log-child.ts <databaseUrl> <threadId> <tag> <count> <goFile>');
}
const threads = openThreadStore(url);
const store = createLogStore(threads);
await store.length(threadId); // connect before the start signal
console.log('ready');
while (!existsSync(goFile)) await sleep(2);

const appended: string[] = [];
let conflicts = 0;
while (appended.length < Number(countText)) {
  const at = await store.length(threadId);
  const entry = makeEntry(at, `${tag}${appended.length}`);
  const result = await store.append({ threadId, expectedIndex: at, entries: [entry] });
  if (result.ok) appended.push(entry.id);
  else if (result.error.code === 'CONFLICT') conflicts++;
  else throw new Error(`unexpected ${result.error.code}: ${result.error.message}`);
}
await threads.close();
console.log(JSON.stringify({ appended, conflicts }));
