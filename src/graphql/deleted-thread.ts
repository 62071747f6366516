/**
 * A subscription to one thread ends when the thread is deleted: after the events committed
 * before, one event whose field fails with THREAD_DELETED, then the end (the events layer ends
 * the stream with ThreadDeletedError).
 */
import { GraphQLError } from 'graphql';
import { ThreadDeletedError, withDirect } from '../events/index.js';

const DELETED = Symbol('thread deleted');
type Deleted = { [DELETED]: string };

/**
 * `source`, with its ThreadDeletedError turned into one last marker event naming the thread by
 * `threadId`, the id the subscriber gave: the error itself names the storage key, which would
 * show another tenant's thread by that id. Not a generator: a generator parked on an idle source
 * would hold `return()` until the next event, and the server ends idle subscriptions (revoked
 * keys, slow consumers, disconnects) by `return()`.
 */
export function endingOnDeletion<T>(
  source: AsyncIterable<T>,
  threadId: string,
): AsyncIterableIterator<T> {
  const it = source[Symbol.asyncIterator]();
  let ended = false;
  // Values pass unchanged (a deletion comes as a failure, which direct mode never takes).
  return withDirect(
    {
      // A promise step, not an async function's several: this runs for every event delivered.
      next(): Promise<IteratorResult<T>> {
        if (ended) return Promise.resolve({ done: true, value: undefined });
        return it.next().then(undefined, (error: unknown) => {
          if (!(error instanceof ThreadDeletedError)) throw error;
          ended = true;
          const message = `thread ${threadId} was deleted: the subscription ended`;
          return { done: false, value: { [DELETED]: message } as unknown as T };
        });
      },
      return(value?: unknown) {
        ended = true;
        return it.return?.(value) ?? Promise.resolve({ done: true, value: undefined });
      },
      throw(error?: unknown) {
        ended = true;
        return it.throw?.(error) ?? Promise.reject(error);
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    },
    it,
  );
}

/** `resolve`, failing with THREAD_DELETED on the marker event. */
export function orDeleted<T, A extends unknown[], R>(
  resolve: (event: T, ...rest: A) => R,
): (event: T, ...rest: A) => R {
  return (event, ...rest) => {
    if (typeof event === 'object' && event !== null && DELETED in event) {
      throw new GraphQLError((event as Deleted)[DELETED], {
        extensions: { code: 'THREAD_DELETED' },
      });
    }
    return resolve(event, ...rest);
  };
}
