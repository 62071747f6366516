import { createHash, hash } from 'node:crypto';

/**
 * SHA-256 of a UTF-8 string as lowercase hex. Pure (hashing is computation, not I/O).
 * Uses the one-shot `crypto.hash` (Node ≥ 20.12), which skips the hash object `createHash`
 * builds: cheaper on the small inputs ids and chain hashes are made of.
 */
export const sha256Hex: (text: string) => string =
  typeof hash === 'function'
    ? (text) => hash('sha256', text, 'hex')
    : (text) => createHash('sha256').update(text, 'utf8').digest('hex');

/** SHA-256 fed in parts: `update` each UTF-8 string in order, then `hex()`. Pure computation. */
export interface Sha256Parts {
  update(text: string): void;
  hex(): string;
}

/**
 * An incremental SHA-256: equal to `sha256Hex` of the parts joined, as long as no part ends
 * inside a surrogate pair (callers split text at JSON punctuation or ASCII).
 */
export function sha256Parts(): Sha256Parts {
  const hasher = createHash('sha256');
  return {
    update: (text) => void hasher.update(text, 'utf8'),
    hex: () => hasher.digest('hex'),
  };
}
