/**
 * The subscribers of section 3, in a process of their own (so that reading the replays costs
 * this process's CPU, not the event loop of the server and its probe). Speaks graphql-transport-ws
 * over `ws`: READERS sockets subscribe to `threadEvents(threadId, afterIndex: -1)` and count the
 * events they receive; PAUSED sockets subscribe the same way and then stop reading (`pause()`:
 * the kernel buffers fill and the server's writes back up). Prints `started` once every socket
 * has subscribed, progress lines, then one JSON line with the tally; exits by itself after
 * DEADLINE_MS whatever happened.
 *
 * Env: WEFT_REPLAY_SPEC = {"url","threadId","readers","paused","expected","deadlineMs"} and
 * optionally "afterIndex" (default -1: the whole log; the warm-up replays only its end).
 */
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';

interface Spec {
  url: string;
  threadId: string;
  readers: number;
  paused: number;
  expected: number;
  deadlineMs: number;
  afterIndex?: number;
}

const SUBSCRIBE = `subscription ($threadId: ID!, $afterIndex: Int!) {
  threadEvents(threadId: $threadId, afterIndex: $afterIndex) { index type }
}`;

const spec = JSON.parse(process.env.WEFT_REPLAY_SPEC ?? '{}') as Spec;
const started = performance.now();
const counts: number[] = Array.from({ length: spec.readers }, () => 0);
const finishedAt: number[] = [];
const errors: string[] = [];
const sockets: WebSocket[] = [];

/** Opens one socket and subscribes; resolves once the subscribe message is sent. */
function open(reader: number | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(spec.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
    sockets.push(ws);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: {} })));
    ws.on('error', (error) => {
      errors.push(error.message);
      reject(error);
    });
    ws.on('message', (data: Buffer) => {
      const text = data.toString();
      if (text.includes('"connection_ack"')) {
        ws.send(
          JSON.stringify({
            id: '1',
            type: 'subscribe',
            payload: {
              query: SUBSCRIBE,
              variables: { threadId: spec.threadId, afterIndex: spec.afterIndex ?? -1 },
            },
          }),
        );
        if (reader === undefined) ws.pause(); // never reads again
        resolve();
        return;
      }
      if (reader === undefined) return;
      if (text.startsWith('{"id":"1","type":"next"') || text.includes('"type":"next"')) {
        if (++counts[reader]! === spec.expected) {
          finishedAt[reader] = performance.now() - started;
          if (finishedAt.filter((t) => t !== undefined).length === spec.readers) finish();
        }
      } else if (text.includes('"type":"error"') || text.includes('"type":"complete"')) {
        errors.push(text.slice(0, 200));
      }
    });
  });
}

let done = false;
let progress: NodeJS.Timeout | undefined;
function finish(): void {
  if (done) return;
  done = true;
  clearInterval(progress);
  const total = counts.reduce((a, b) => a + b, 0);
  process.stdout.write(
    `${JSON.stringify({
      received: total,
      expected: spec.expected * spec.readers,
      ms: performance.now() - started,
      finishedMs: finishedAt,
      errors: errors.slice(0, 5),
    })}\n`,
  );
  for (const ws of sockets) ws.terminate();
  setTimeout(() => process.exit(0), 100);
}

await Promise.all([
  ...Array.from({ length: spec.readers }, (_, i) => open(i)),
  ...Array.from({ length: spec.paused }, () => open(undefined)),
]);
process.stdout.write('started\n');
progress = setInterval(() => {
  const total = counts.reduce((a, b) => a + b, 0);
  process.stdout.write(`progress ${total}\n`);
}, 5_000);
progress.unref();
setTimeout(finish, spec.deadlineMs).unref();
