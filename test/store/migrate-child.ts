/**
 * Child process for the concurrent-migration tests (run with `node --import tsx`):
 * `migrate-child.ts <databaseUrl> <goFile>` prints `ready`, waits until <goFile> exists (so that
 * sibling processes start migrating together, not one boot time apart), migrates once and prints
 * the result as JSON.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { migrate } from '../../src/store/migrate/index.js';

const [url, goFile] = process.argv.slice(2);
if (url === undefined || goFile === undefined) {
  throw new Error('usage: migrate-child.ts <databaseUrl> <goFile>');
}
console.log('ready');
while (!existsSync(goFile)) await sleep(2);
const result = await migrate(url);
console.log(JSON.stringify({ applied: result.applied, known: result.known }));
