import type { WeftError } from '../core/errors.js';

/**
 * What WeftSaver throws: `code` is Weft's error code (VALIDATION_FAILED, NOT_FOUND, CONFLICT, …)
 * or one of the saver's own (INVALID_CONFIG, APPROVAL_ENDED, ABORTED); `error` the engine's
 * structured error when it came from one.
 */
export class WeftSaverError extends Error {
  override readonly name = 'WeftSaverError';
  constructor(
    readonly code: string,
    message: string,
    readonly error?: WeftError,
  ) {
    super(message);
  }
}

export const fromEngine = (error: WeftError, what: string): WeftSaverError =>
  new WeftSaverError(error.code, `${what}: ${error.message}`, error);
