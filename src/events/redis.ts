import { Redis } from 'ioredis';
import type { RedisFanoutOptions } from './types.js';

/** What one instance tells the others after a commit: "thread t now has n entries". */
export interface WakeUp {
  threadId: string;
  /** Index of the commit's first entry. */
  first: number;
  logLength: number;
  /** The sending hub, which has already delivered the commit to its own listeners. */
  origin: string;
  /** The thread was deleted (first and logLength are 0). */
  deleted?: true;
  /** Entries before `first` were rewritten (a redaction): what is cached of them is stale. */
  rewritten?: true;
}

/** The cross-instance half of a hub. Redis carries wake-ups only: the log stays the truth. */
export interface Fanout {
  /** Resolves once the subscription is confirmed by Redis; rejects when it cannot be. */
  readonly ready: Promise<void>;
  send(wake: WakeUp): void;
  /** Called after a reconnect: wake-ups sent while disconnected are lost and must be repaired. */
  onResync(callback: () => void): void;
  close(): Promise<void>;
}

export const DEFAULT_CHANNEL = 'weft:commits';

/** The code of the error `ready` rejects with when Redis cannot be subscribed to in time. */
export const REDIS_UNAVAILABLE = 'REDIS_UNAVAILABLE';

/**
 * Wake-ups over ioredis pub/sub on one channel, subscribed once when the hub opens (and
 * awaited), so a subscriber's "attach live, then replay" never races a subscription that Redis
 * has not confirmed yet — which a subscribe per topic on first use would.
 */
export function createRedisFanout(
  options: RedisFanoutOptions,
  onWake: (wake: WakeUp) => void,
  onError: (error: unknown) => void,
): Fanout {
  const channel = options.channel ?? DEFAULT_CHANNEL;
  const publisher = new Redis(options.url, { lazyConnect: false });
  const subscriber = new Redis(options.url, { lazyConnect: false });
  const resyncs: Array<() => void> = [];
  let connectedOnce = false;
  let closing = false;

  // Until the first subscription is confirmed, connection errors (one per retry) are what `ready`
  // rejects with, once: kept, not reported, so a start against a Redis that is down fails in one
  // line rather than a stack trace per retry.
  let lastError: unknown;
  const report = (error: unknown) => {
    if (closing) return;
    if (connectedOnce) onError(error);
    else lastError = error;
  };
  publisher.on('error', report);
  subscriber.on('error', report);
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    const wake = parseWakeUp(message);
    if (wake === undefined) {
      report(new Error(`ignored a malformed wake-up on Redis channel ${channel}: ${message}`));
      return;
    }
    onWake(wake);
  });
  subscriber.on('ready', () => {
    // ioredis re-subscribes by itself after a reconnect; what was published meanwhile is gone.
    if (connectedOnce) for (const resync of resyncs) resync();
    connectedOnce = true;
  });

  const readyTimeoutMs = options.readyTimeoutMs ?? 5_000;
  const where = redactUrl(options.url);
  const unavailable = (message: string) =>
    Object.assign(new Error(withoutPassword(message, options.url)), { code: REDIS_UNAVAILABLE });
  let timer: NodeJS.Timeout | undefined;
  const ready = Promise.race([
    // Redis answering with an error (a refused login, a command it does not allow) is as fatal
    // as no answer; the reply error itself carries the command's arguments, the password too.
    subscriber.subscribe(channel).then(
      () => undefined,
      (error: unknown) => {
        throw unavailable(refusal(error, where));
      },
    ),
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            unavailable(
              `cannot subscribe to Redis at ${where} within ${readyTimeoutMs} ms` +
                (lastError instanceof Error ? ` (${lastError.message})` : '') +
                ': check REDIS_URL and that Redis is running',
            ),
          ),
        readyTimeoutMs,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  ready.catch(() => {
    // Stop the reconnect loop: the caller learns from `ready` and may open a new hub.
    closing = true;
    subscriber.disconnect();
    publisher.disconnect();
  });

  return {
    ready,
    send(wake) {
      const message = JSON.stringify({
        t: wake.threadId,
        f: wake.first,
        n: wake.logLength,
        o: wake.origin,
        ...(wake.deleted === true ? { d: 1 } : {}),
      });
      publisher.publish(channel, message).catch(report);
    },
    onResync(callback) {
      resyncs.push(callback);
    },
    async close() {
      closing = true;
      // QUIT lets queued publishes go out; a client that is not connected would wait forever.
      await Promise.allSettled(
        [subscriber, publisher].map((client) =>
          client.status === 'ready' ? client.quit() : Promise.resolve(),
        ),
      );
      subscriber.disconnect();
      publisher.disconnect();
    },
  };
}

function parseWakeUp(message: string): WakeUp | undefined {
  try {
    const raw = JSON.parse(message) as Record<string, unknown>;
    const { t, f, n, o } = raw;
    if (typeof t !== 'string' || typeof o !== 'string') return undefined;
    if (raw.d === 1) return { threadId: t, first: 0, logLength: 0, origin: o, deleted: true };
    if (!Number.isSafeInteger(f) || !Number.isSafeInteger(n)) return undefined;
    if ((f as number) < 0 || (n as number) <= (f as number)) return undefined;
    return { threadId: t, first: f as number, logLength: n as number, origin: o };
  } catch {
    return undefined;
  }
}

/** What Redis at `where` answered instead of confirming the subscription, and what to do. */
function refusal(error: unknown, where: string): string {
  const message = error instanceof Error ? error.message : String(error);
  // WRONGPASS: no such user or a wrong password; NOAUTH: a password is required.
  if (/^(WRONGPASS|NOAUTH)\b/.test(message)) {
    return `Redis at ${where} refused the login (${message}): fix the user or password in REDIS_URL`;
  }
  return `cannot subscribe to Redis at ${where} (${message}): check REDIS_URL and that Redis is running`;
}

/** `message` with the password of `url` masked wherever it appears. */
function withoutPassword(message: string, url: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    return message;
  }
  return password === '' ? message : message.split(password).join('***');
}

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
