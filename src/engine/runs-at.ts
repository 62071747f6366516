/**
 * Time travel for runs: the runs of a thread as of a log length, each with the index of the
 * last entry that changed it (see core/thread/runs-at.ts).
 */
import { err, ok, type Result } from '../core/errors.js';
import type { LogEntry } from '../core/log/index.js';
import { runsAsOf } from '../core/thread/runs-at.js';
import { checkIndex, invalid } from './checks.js';
import type { Runtime } from './engine.js';
import { answeredAs, locateThread } from './tenancy.js';
import type { RunsAt } from './types.js';

/**
 * The runs after the first `index` entries of `threadId` (as `tenant` names it). It replays the
 * whole prefix, not the nearest snapshot plus a tail as `stateAt` does: a snapshot holds each
 * run's state but not which entry last changed it.
 */
export async function runsAt(
  rt: Runtime,
  tenant: string | undefined,
  threadId: string,
  index: number,
): Promise<Result<RunsAt>> {
  const checked = checkIndex(index, '$.index');
  if (!checked.ok) return checked;
  const at = await locateThread(rt.tenants, threadId, tenant);
  if (!at.ok) return at;
  const length = (await rt.store.getLogLength(at.value.key)) ?? 0;
  if (index > length) {
    return err(invalid('$.index', `thread ${at.value.id} has ${length} entries, not ${index}`));
  }
  const texts = index === 0 ? [] : await rt.store.readEntryTexts(at.value.key, 0, index);
  const runs = runsAsOf(
    texts.map((text) => JSON.parse(text) as LogEntry),
    { machine: rt.machineOptions, texts },
  );
  if (!runs.ok) return answeredAs(runs, at.value);
  return ok({ threadId: at.value.id, index, runs: runs.value });
}
