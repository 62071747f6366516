/**
 * Child process for the writer-thread test (run with `node --import tsx`):
 * `sqlite-writer-child.ts <databaseUrl>` opens a thread store, commits a thread through an engine,
 * prints `written` and returns without closing anything: the process must still exit by itself
 * (an idle writer thread keeps nothing alive).
 */
import { createEngine } from '../../src/engine/index.js';
import { openThreadStore } from '../../src/store/read-model/index.js';

const [url] = process.argv.slice(2);
if (url === undefined) throw new Error('usage: sqlite-writer-child.ts <databaseUrl>');
const engine = createEngine({ store: openThreadStore(url) });
const created = await engine.createThread({ threadId: 'left-open' });
if (!created.ok) throw new Error(created.error.message);
console.log('written');
