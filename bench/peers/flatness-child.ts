/**
 * One graph of the flatness probe (flatness.ts) in a process of its own: LangGraph on WeftSaver
 * (`saver`) or on a saver that stores nothing (`floor`), writing the seeded workload's turns as
 * its parent asks. A timed turn's CPU time is the process's since it last answered, so work its
 * garbage collector does between turns is charged to this graph's next turn, not lost.
 */
import type { ChildReply, ChildRequest } from './flatness.js';
import { openLangGraph } from './langgraph.js';
import type { Backend } from './side.js';
import { generateWorkload } from './workload.js';

/** Turns of the warm-up conversation every child writes first. */
const WARM_UP_TURNS = 200;

const [role, backend, location, totalArg] = process.argv.slice(2) as [
  'saver' | 'floor',
  Backend,
  string,
  string,
];
const turns = generateWorkload(Number(totalArg));
const open = (threadId: string) =>
  openLangGraph(
    role === 'saver'
      ? { backend, location, weftSaver: true, threadId }
      : { backend: 'sqlite', location: '', referenceSaver: true, threadId },
  );
// Every process first writes the same conversation on a thread of its own, so the short thread's
// early turns are not the process's first (its code compiled, its connections open) while the
// long thread's late turns come after hundreds.
const warmUp = await open('warm-up');
for (const turn of turns.slice(0, WARM_UP_TURNS)) await warmUp.writeTurn(turn);
await warmUp.close();
const side = await open('measured');
let written = 0;
let since = process.cpuUsage();
let queue = Promise.resolve();

const write = async (n: number) => {
  while (written < n) await side.writeTurn(turns[written++]!);
};

const handle = async (request: ChildRequest): Promise<ChildReply> => {
  if (request.op === 'close') {
    await side.close();
    return { id: request.id };
  }
  if (request.op === 'timed' && request.n !== written + 1) {
    return { id: request.id, error: `asked for turn ${request.n} after turn ${written}` };
  }
  await write(request.n);
  if (request.op === 'upTo') return { id: request.id };
  const used = process.cpuUsage(since);
  return { id: request.id, cpuMs: (used.user + used.system) / 1000 };
};

process.on('message', (request: ChildRequest) => {
  queue = queue.then(async () => {
    let reply: ChildReply;
    try {
      reply = await handle(request);
    } catch (error) {
      reply = { id: request.id, error: error instanceof Error ? error.message : String(error) };
    }
    since = process.cpuUsage();
    process.send!(reply, () => {
      if (request.op === 'close') process.disconnect();
    });
  });
});
