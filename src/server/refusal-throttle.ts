/**
 * Slows down a client that keeps getting refused. A refusal (401, 403, 400 …) is cheap to make,
 * but a client that sends them back to back as fast as they come keeps the event loop busy for
 * everyone else: a few such loops doubled other clients' latency. So each remote address has a
 * bucket of refusals (a burst, refilled at a steady rate); while it has some, refusals are
 * answered at once, as before. Once it is empty, each further refusal is still answered, with the
 * same status and body, but only after a delay, which bounds what a client waiting for its
 * answers (any HTTP client) can make the server do. Successful requests never wait and never
 * spend the bucket, so an ordinary client that makes a mistake now and then never notices.
 *
 * Answers held at once are capped (beyond that they go out without the delay), so holding them
 * cannot become a memory attack of its own, and at most 10,000 addresses are remembered.
 */

export interface RefusalThrottleOptions {
  /** Refusals answered at once before the delay starts. */
  burst: number;
  /** Refusals per second the bucket refills by. */
  perSecond: number;
  /** How long a refusal beyond the bucket is held; 0 turns the throttle off. */
  delayMs: number;
  /** Answers held at once, across addresses. */
  maxHeld?: number;
  now?: () => number;
}

export interface RefusalThrottle {
  readonly enabled: boolean;
  /** The delay before answering a refusal to `address`: 0, or delayMs once its bucket is empty. */
  delayFor(address: string): number;
  /** Refusals delayed so far (for /metrics). */
  readonly delayed: number;
  /** Answers held now. */
  readonly held: number;
  /** Runs `send` now, or after the delay `address` has earned. */
  answer(address: string, send: () => void): void;
  /** Sends every held answer now (the server is stopping). */
  close(): void;
}

/** Status codes that are refusals of what the client sent (not "not found", not server errors). */
const REFUSALS: ReadonlySet<number> = new Set([
  400, 401, 403, 405, 406, 408, 411, 413, 414, 415, 422, 429, 431,
]);

export const isRefusal = (status: number): boolean => REFUSALS.has(status);

const DEFAULT_MAX_HELD = 1_000;
/** Addresses remembered at most; the oldest is forgotten first. */
const MAX_ADDRESSES = 10_000;

export function createRefusalThrottle(options: RefusalThrottleOptions): RefusalThrottle {
  const { burst, perSecond, delayMs } = options;
  const maxHeld = options.maxHeld ?? DEFAULT_MAX_HELD;
  const now = options.now ?? (() => performance.now());
  const buckets = new Map<string, { tokens: number; at: number }>();
  const timers = new Map<NodeJS.Timeout, () => void>();
  let delayed = 0;

  const delayFor = (address: string): number => {
    if (delayMs === 0) return 0;
    const t = now();
    const bucket = buckets.get(address) ?? { tokens: burst, at: t };
    bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.at) / 1000) * perSecond);
    bucket.at = t;
    // Re-inserted, so the map's order is least recently refused first: that one is forgotten
    // first when there are too many (it is the likeliest to be full again).
    buckets.delete(address);
    buckets.set(address, bucket);
    if (buckets.size > MAX_ADDRESSES) buckets.delete(buckets.keys().next().value!);
    if (bucket.tokens < 1) return delayMs;
    bucket.tokens -= 1;
    return 0;
  };

  return {
    enabled: delayMs > 0,
    delayFor,
    get delayed() {
      return delayed;
    },
    get held() {
      return timers.size;
    },
    answer(address, send) {
      const wait = delayFor(address);
      if (wait === 0 || timers.size >= maxHeld) {
        send();
        return;
      }
      delayed++;
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, wait);
      timers.set(timer, send);
    },
    close() {
      for (const [timer, send] of timers) {
        clearTimeout(timer);
        send();
      }
      timers.clear();
    },
  };
}
