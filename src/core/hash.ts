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
