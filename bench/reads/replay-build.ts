/**
 * Builds section 3's log in a process of its own and writes it in one transaction, so that the
 * server measured afterwards starts with none of the builder's memory (a 100,000-entry log folded
 * in the core leaves a heap of gigabytes, whose collection would show in the probe's tail).
 * Prints one JSON line `{ "length": n }` on success.
 *
 * Env: WEFT_REPLAY_BUILD = {"url","threadId","length"}.
 */
import { projectLog } from '../../src/engine/index.js';
import { DEFAULT_SNAPSHOT_POLICY } from '../../src/engine/snapshots.js';
import { openThreadStore } from '../../src/store/read-model/index.js';
import { buildLogForProfile } from '../core.js';
import { must } from './common.js';

const spec = JSON.parse(process.env.WEFT_REPLAY_BUILD ?? '{}') as {
  url: string;
  threadId: string;
  length: number;
};
const store = openThreadStore(spec.url);
const entries = buildLogForProfile(spec.length);
const projected = must(projectLog(spec.threadId, entries, {}, DEFAULT_SNAPSHOT_POLICY));
must(await store.commit(projected.changes!));
await store.close();
process.stdout.write(`${JSON.stringify({ length: entries.length })}\n`);
