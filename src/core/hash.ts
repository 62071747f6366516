import { createHash } from 'node:crypto';

/** SHA-256 of a UTF-8 string as lowercase hex. Pure (hashing is computation, not I/O). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
