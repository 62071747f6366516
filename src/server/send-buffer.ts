/**
 * What a subscriber's connection may hold unsent, and what happens to one that does not read.
 *
 * - **Back-pressure for replays.** Each WebSocket and each SSE response is a Transport
 *   (src/events/types.ts): congested above a high-water mark of unsent bytes, drained at a
 *   low-water mark. A replay reads no further page from the store, and hands over no further
 *   event, while its connection is congested, so a replay buffers at most about one high-water
 *   mark however long the log is.
 * - **A bound for everything else.** Live events are written as they come (one subscriber must
 *   not hold back the others). A connection that holds more than `maxBytes` unsent when the next
 *   message is due is a slow consumer: a WebSocket is closed with SLOW_CONSUMER_CLOSE, an SSE
 *   response ends with one SLOW_CONSUMER error event. Its operations end at once (their hub
 *   listeners with them); the client resumes from the last event it received, the usual way.
 *
 * "Unsent" is, for a WebSocket, ws's `bufferedAmount` (frames not yet written to the TCP socket);
 * for SSE, the events executed but not yet taken by the response, plus the response's own
 * `writableLength`.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { WebSocket } from 'ws';
import type { Delivery, Transport } from '../events/types.js';

/**
 * The close code of a WebSocket closed as a slow consumer. graphql-ws's own codes (4400, 4401,
 * 4403, 4406, 4408, 4409, 4429, 4500, 4504, and 4499 on its client) do not include it, and its
 * client retries it like any non-fatal close.
 */
export const SLOW_CONSUMER_CLOSE = 4413;
/** The error code of the last event of an SSE response ended as a slow consumer. */
export const SLOW_CONSUMER = 'SLOW_CONSUMER';
/** Unsent bytes a connection may hold before it is closed as a slow consumer. */
export const DEFAULT_MAX_SEND_BUFFER_BYTES = 8 * 1024 * 1024;

export type SlowTransport = 'websocket' | 'sse';

export interface SendBufferOptions {
  /** Default DEFAULT_MAX_SEND_BUFFER_BYTES. */
  maxBytes?: number;
  /** Called once per connection closed (or SSE response ended) as a slow consumer. */
  onSlowConsumer?: (transport: SlowTransport) => void;
}

export interface SendBuffers {
  readonly maxBytes: number;
  /** Connections closed as slow consumers so far, per transport (for /metrics). */
  readonly closed: Readonly<Record<SlowTransport, number>>;
  /**
   * Bounds a WebSocket's sends and returns it as a Transport; `endOperations` ends its
   * operations when it is closed as a slow consumer.
   */
  watchSocket(socket: WebSocket, endOperations: () => void): Transport;
  /** The yoga plugin that paces and bounds SSE responses. */
  readonly plugin: Plugin;
}

const KIB = 1024;

/** Replays pause above `high` unsent bytes and go on at `low`: both well under the bound. */
function waterMarks(maxBytes: number): { high: number; low: number } {
  // `low` stays above a TCP socket's own high-water mark (16 KiB), so that a connection above
  // it has a 'drain' to come.
  const high = Math.max(64 * KIB, Math.min(1024 * KIB, Math.floor(maxBytes / 4)));
  return { high, low: Math.max(32 * KIB, Math.floor(high / 4)) };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createSendBuffers(options: SendBufferOptions = {}): SendBuffers {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_SEND_BUFFER_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new Error(`the send buffer bound must be a positive integer of bytes, not ${maxBytes}`);
  }
  const marks = waterMarks(maxBytes);
  const closed: Record<SlowTransport, number> = { websocket: 0, sse: 0 };
  const slow = (transport: SlowTransport) => {
    closed[transport]++;
    options.onSlowConsumer?.(transport);
  };
  /** Each SSE delivery's response buffer, for the result hook to find. */
  const responses = new WeakMap<Delivery, ResponseBuffer>();

  return {
    maxBytes,
    closed,
    watchSocket: (socket, endOperations) =>
      watchSocket(socket, maxBytes, marks, () => {
        slow('websocket');
        endOperations();
      }),
    plugin: {
      onContextBuilding({ context, extendContext }) {
        if (!streamRequested(context)) return;
        const res = (context as { res?: unknown }).res;
        // In process (yoga.fetch) there is no socket to pace by; the key checks are still per page.
        if (!isNodeResponse(res))
          return extendContext({ delivery: { itemsAt: undefined } } as never);
        const buffer = new ResponseBuffer(res, maxBytes, marks, () => slow('sse'));
        const delivery: Delivery = { transport: buffer, itemsAt: undefined };
        responses.set(delivery, buffer);
        extendContext({ delivery } as never);
      },
      onSubscribe() {
        return {
          onSubscribeResult({ args, result, setResult }) {
            const delivery = (args.contextValue as { delivery?: Delivery }).delivery;
            const buffer = delivery === undefined ? undefined : responses.get(delivery);
            if (buffer === undefined || !isAsyncIterable(result)) return;
            setResult(buffer.wrap(result));
          },
        };
      },
    },
  };
}

/**
 * graphql-ws awaits each frame's write callback before it pulls the next event, which makes a
 * replay one event per turn of the event loop (the frames of a turn leave in one write, see
 * coalesceWrites). Here the callback comes once the frame is queued: a replay sends a page per
 * turn, paced by `congested()`, and a connection that does not read is stopped by the bound.
 */
function watchSocket(
  socket: WebSocket,
  maxBytes: number,
  marks: { high: number; low: number },
  onSlow: () => void,
): Transport {
  const raw = (socket as unknown as { _socket?: Duplex })._socket;
  const send = socket.send.bind(socket) as (...args: unknown[]) => void;
  let cut = false;
  socket.send = ((...args: unknown[]) => {
    const callback =
      typeof args[args.length - 1] === 'function'
        ? (args.pop() as (error?: Error) => void)
        : undefined;
    if (!cut && socket.readyState === socket.OPEN && socket.bufferedAmount > maxBytes) {
      cut = true;
      // After the frames already queued: the client reads everything it was sent, then this.
      socket.close(
        SLOW_CONSUMER_CLOSE,
        `${SLOW_CONSUMER}: over ${maxBytes} bytes unsent; resubscribe from your last cursor`,
      );
      // Not from inside graphql-ws's own send: its operations end on the next turn.
      setImmediate(onSlow);
    }
    if (!cut) send(...args);
    callback?.();
  }) as WebSocket['send'];

  const open = () => socket.readyState === socket.OPEN && !cut;
  /** One wait for the whole connection, however many of its operations are waiting. */
  let draining: Promise<void> | undefined;
  const drainOrClose = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        raw?.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      raw?.once('drain', done);
      socket.once('close', done);
    });
  return {
    congested: () => open() && socket.bufferedAmount > marks.high,
    drained() {
      draining ??= (async () => {
        // First the turn that uncorks this turn's frames (coalesceWrites) and writes them.
        await turn();
        while (open() && raw !== undefined && socket.bufferedAmount > marks.low) {
          await drainOrClose();
        }
      })().finally(() => {
        draining = undefined;
      });
      return draining;
    },
  };
}

/**
 * An SSE response's events between execution and the response. graphql-yoga pulls the next
 * event only once the response has drained, which by itself would pace live events too: the
 * subscriber would silently fall behind instead. This buffer pulls every event as it comes,
 * holds those the response has not taken, and ends the response as a slow consumer when it
 * holds more than the bound.
 */
class ResponseBuffer implements Transport {
  private queue: Array<{ value: ExecutionResult; bytes: number }> = [];
  private queued = 0;
  private state: 'open' | 'cut' | 'ended' = 'open';
  private failure: { error: unknown } | undefined;
  private sourceDone = false;
  private pulling = false;
  private wakeReader: (() => void) | undefined;
  private drains: Array<() => void> = [];
  private source: AsyncIterator<ExecutionResult> | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBytes: number,
    private readonly marks: { high: number; low: number },
    private readonly onSlow: () => void,
  ) {
    res.once('close', () => void this.finish());
  }

  private unsent(): number {
    return this.queued + this.res.writableLength;
  }

  congested(): boolean {
    return this.state === 'open' && this.unsent() > this.marks.high;
  }

  drained(): Promise<void> {
    if (this.state !== 'open' || this.unsent() <= this.marks.low) return Promise.resolve();
    return new Promise((resolve) => this.drains.push(resolve));
  }

  wrap(result: AsyncIterable<ExecutionResult>): AsyncIterableIterator<ExecutionResult> {
    this.source = result[Symbol.asyncIterator]();
    return {
      next: () => this.next(),
      return: async () => {
        await this.finish();
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  private async next(): Promise<IteratorResult<ExecutionResult>> {
    if (!this.pulling) {
      this.pulling = true;
      void this.pull();
    }
    for (;;) {
      const first = this.queue.shift();
      if (first !== undefined) {
        this.queued -= first.bytes;
        this.settleDrains();
        return { done: false, value: first.value };
      }
      if (this.state === 'cut') {
        this.state = 'ended';
        return { done: false, value: slowConsumerResult(this.maxBytes) };
      }
      if (this.failure !== undefined) throw this.failure.error;
      if (this.state === 'ended' || this.sourceDone) return { done: true, value: undefined };
      await new Promise<void>((resolve) => {
        this.wakeReader = resolve;
      });
    }
  }

  /** Takes every event as the subscription produces it. */
  private async pull(): Promise<void> {
    const source = this.source!;
    try {
      while (this.state === 'open') {
        const step = await source.next();
        if (this.state !== 'open') return;
        if (step.done === true) {
          this.sourceDone = true;
          break;
        }
        // Judged before this event is added: one event larger than the bound still goes out
        // to a connection that keeps up.
        if (this.unsent() > this.maxBytes) {
          this.cut();
          return;
        }
        this.queue.push(measured(step.value));
        this.queued += this.queue[this.queue.length - 1]!.bytes;
        this.wake();
      }
    } catch (error) {
      this.failure = { error };
    }
    this.wake();
  }

  /** Drops what the client has not taken (it resumes from what it received), and ends. */
  private cut(): void {
    this.state = 'cut';
    this.queue = [];
    this.queued = 0;
    this.onSlow();
    void this.source?.return?.();
    this.settleDrains();
    this.wake();
  }

  private async finish(): Promise<void> {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.queue = [];
    this.queued = 0;
    this.settleDrains();
    this.wake();
    await this.source?.return?.();
  }

  private wake(): void {
    const wake = this.wakeReader;
    this.wakeReader = undefined;
    wake?.();
  }

  private settleDrains(): void {
    if (this.state === 'open' && this.unsent() > this.marks.low) return;
    const drains = this.drains;
    this.drains = [];
    for (const resolve of drains) resolve();
  }
}

/**
 * An event and its size as the response will write it. Its text is computed here once: a result
 * without errors or extensions is handed on as a copy that yoga writes with that text (yoga uses
 * a result's `stringify`); results are shared between subscribers, so they are not changed.
 */
function measured(value: ExecutionResult): { value: ExecutionResult; bytes: number } {
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text);
  if (value.errors !== undefined || value.extensions !== undefined) return { value, bytes };
  return { value: { ...value, stringify: () => text } as ExecutionResult, bytes };
}

function slowConsumerResult(maxBytes: number): ExecutionResult {
  return {
    errors: [
      new GraphQLError(
        `slow consumer: this response held over ${maxBytes} bytes the client had not read, so ` +
          'the subscription ended; resubscribe from the last event you received',
        { extensions: { code: SLOW_CONSUMER, maxSendBufferBytes: maxBytes } },
      ),
    ],
  };
}

function isNodeResponse(value: unknown): value is ServerResponse {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ServerResponse).writableLength === 'number' &&
    typeof (value as ServerResponse).once === 'function'
  );
}

/** An HTTP request asking for a stream (SSE, or yoga's multipart): the ones that subscribe. */
function streamRequested(context: unknown): boolean {
  const accept =
    (
      context as { request?: { headers?: { get?(name: string): string | null } } }
    ).request?.headers?.get?.('accept') ?? '';
  return accept.includes('text/event-stream') || accept.includes('multipart/mixed');
}

function isAsyncIterable(value: unknown): value is AsyncIterable<ExecutionResult> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
  );
}
