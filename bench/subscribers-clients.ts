/**
 * The subscribers of `npm run bench -- subscribers`, in a process of their own (forked by
 * subscribers.ts, driven over IPC): the server's figures are then the server's, as they are in
 * production, where the subscribers are browsers and dashboards on other machines, not sharing
 * its event loop. Each request names an operation; each reply carries the request's id.
 * - `subscribe`: opens `count` subscriptions over sockets of `perSocket` (`mix`: the bench's
 *   mix of threadEvents, runStatusChanged and threadActivity; `activity`: threadActivity only).
 * - `samples`: what arrived since the last `samples`: the count, and for every seventh
 *   threadEvents subscriber the (thread, index, arrival time) of each event, arrival in the
 *   wall-clock milliseconds both processes share (performance.timeOrigin + now()), and the
 *   CPU this process used meanwhile.
 * - `close`: disposes every client.
 */
import { performance } from 'node:perf_hooks';
import { type Client, createClient } from 'graphql-ws';
import { WebSocket } from 'ws';

const THREAD_EVENTS = 'subscription ($t: ID!) { threadEvents(threadId: $t) { index } }';
const RUN_STATUS = 'subscription ($t: ID!) { runStatusChanged(threadId: $t) { status logIndex } }';
const ACTIVITY = 'subscription { threadActivity { threadId index cursor } }';

export type ClientRequest =
  | {
      op: 'subscribe';
      url: string;
      count: number;
      perSocket: number;
      threads: number;
      mix: 'mix' | 'activity';
    }
  | { op: 'samples' }
  | { op: 'close' };

export interface Samples {
  received: number;
  /** Flattened (thread number, index, arrival ms) triples. */
  arrivals: number[];
  errors: string[];
  /** This process's CPU since the last `samples`, in cores busy. */
  cores: number;
}

/** The subscription of the `i`th subscriber of the mix over `threads` threads. */
function pick(
  i: number,
  threads: number,
  mix: 'mix' | 'activity',
): { query: string; variables?: Record<string, unknown> } {
  if (mix === 'activity') return { query: ACTIVITY };
  const t = `t${i % threads}`;
  // Each thread gets every kind: the kind goes by the round of threads, not the thread.
  const slot = Math.floor(i / threads) % 100;
  if (slot < 2) return { query: ACTIVITY };
  return { query: slot % 2 === 0 ? THREAD_EVENTS : RUN_STATUS, variables: { t } };
}

const clients: Client[] = [];
let received = 0;
let arrivals: number[] = [];
let errors: string[] = [];
const now = () => performance.timeOrigin + performance.now();

function subscribe(request: Extract<ClientRequest, { op: 'subscribe' }>): void {
  let socketClient: Client | undefined;
  for (let i = 0; i < request.count; i++) {
    if (i % request.perSocket === 0) {
      socketClient = createClient({
        url: request.url.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: false,
      });
      clients.push(socketClient);
    }
    const { query, variables } = pick(i, request.threads, request.mix);
    const thread = query === THREAD_EVENTS && i % 7 === 0 ? i % request.threads : -1;
    socketClient!.subscribe(
      { query, ...(variables === undefined ? {} : { variables }) },
      {
        next: (result) => {
          received++;
          if (thread < 0) return;
          const index = (result.data as { threadEvents?: { index: number } } | undefined)
            ?.threadEvents?.index;
          if (index !== undefined) arrivals.push(thread, index, now());
        },
        error: (error) => {
          if (errors.length < 10)
            errors.push(String((error as Error)?.message ?? JSON.stringify(error)));
        },
        complete: () => undefined,
      },
    );
  }
}

function serve(): void {
  let cpuFrom = process.cpuUsage();
  let cpuAt = performance.now();
  process.on('message', (message: ClientRequest & { id: number }) => {
    const reply = (body: object) => process.send?.({ id: message.id, ...body });
    switch (message.op) {
      case 'subscribe':
        subscribe(message);
        return reply({});
      case 'samples': {
        const used = process.cpuUsage(cpuFrom);
        const cores = (used.user + used.system) / 1000 / (performance.now() - cpuAt);
        cpuFrom = process.cpuUsage();
        cpuAt = performance.now();
        const out: Samples = { received, arrivals, errors, cores };
        received = 0;
        arrivals = [];
        errors = [];
        return reply(out);
      }
      case 'close':
        for (const client of clients.splice(0)) void client.dispose();
        return reply({});
    }
  });
  process.on('disconnect', () => process.exit(0));
}

serve();
