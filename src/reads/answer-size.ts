/**
 * A bound on answers that are one JSON value and grow with the payloads they hold (a thread's
 * `state`): such an answer is written by one JSON.stringify, which holds the event loop for as
 * long as the text is long (about 20 ms per MB) and cannot be cut into turns. An answer past the
 * bound is refused with ANSWER_TOO_LARGE, which names the paged fields that give the same data.
 * Its length is counted in time slices, and only up to the bound.
 */
import { err, ok, type Result } from '../core/errors.js';
import { jsonLengthSteps } from '../core/json-size.js';
import { drive, timeSlices } from '../store/read-model/index.js';

/** The longest JSON text (in characters, about bytes) such an answer may have: 4 MiB. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * `value` when its JSON text is at most `maxBytes` long; else ANSWER_TOO_LARGE for `field`,
 * whose message points to `paged`.
 */
export async function withinAnswerBound<T>(
  value: T,
  field: string,
  paged: string,
  maxBytes = MAX_ANSWER_BYTES,
): Promise<Result<T>> {
  const length = await drive(jsonLengthSteps(value, maxBytes), timeSlices());
  if (length <= maxBytes) return ok(value);
  return err({
    code: 'ANSWER_TOO_LARGE',
    message: `${field} is more than the ${maxBytes} bytes of JSON one answer holds: ${paged}`,
    field,
    maxBytes,
    paged,
  });
}
