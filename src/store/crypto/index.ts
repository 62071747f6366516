/**
 * Encryption at rest (optional): the columns that hold payload text — node payloads (memory
 * content included), log entry bodies (text or packed), snapshots, run goals and states, stored
 * idempotency responses — are sealed with AES-256-GCM under one 32-byte key from the environment.
 * Hashes and content ids stay over the plaintext: encryption is a property of the stored bytes,
 * never of the canonical texts (readers get the exact text back).
 *
 * Sealed text is `wenc1:` + base64(iv ‖ tag ‖ ciphertext) — canonical JSON never starts with
 * `w`, so plaintext written before encryption was turned on still reads as is. Sealed bytes (a
 * packed entry) start with SEALED_BYTE (packed bodies start with 0 or 1). A database that has
 * held sealed data is marked (the `weft_setting` row `encryption_key_id`, a fingerprint of the
 * key — not the key): opening it without the key, or with another one, fails at once.
 *
 * Decryption is authenticated: a wrong key or altered bytes never yield garbage, only
 * ENCRYPTION_KEY_MISMATCH / ENCRYPTION_DATA_DAMAGED.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

export type EncryptionErrorCode =
  | 'ENCRYPTION_KEY_INVALID'
  | 'ENCRYPTION_KEY_MISSING'
  | 'ENCRYPTION_KEY_MISMATCH';

/** A failure of encryption at rest, with a code operators can act on. */
export class EncryptionError extends Error {
  constructor(
    readonly code: EncryptionErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'EncryptionError';
  }
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const TEXT_PREFIX = 'wenc1:';
/** First byte of a sealed packed entry (plain ones start with 0 or 1, see packed-entry.ts). */
const SEALED_BYTE = 0xe1;

/**
 * The key from its text: 64 hex digits, or base64 (standard or url-safe) of 32 bytes. Throws
 * ENCRYPTION_KEY_INVALID naming what is wrong (never echoing the key).
 */
export function parseEncryptionKey(text: string): Buffer {
  const value = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(value)) key = Buffer.from(value, 'hex');
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) key = Buffer.from(value, 'base64');
  if (key === undefined || key.length !== KEY_BYTES) {
    throw new EncryptionError(
      'ENCRYPTION_KEY_INVALID',
      `the encryption key must be ${KEY_BYTES} bytes, written as 64 hex digits or base64 (got ${value.length} characters${key === undefined ? ' of neither form' : `, ${key.length} bytes`}); generate one with: openssl rand -base64 32`,
    );
  }
  return key;
}

/** How stored values are sealed and opened; the identity when encryption is off. */
export interface FieldCodec {
  /** Whether values are sealed (a key is configured). */
  readonly encrypted: boolean;
  /** Fingerprint of the key (HMAC-SHA256 of a fixed label, 16 hex digits); null without a key. */
  readonly keyId: string | null;
  sealText(text: string): string;
  openText(stored: string): string;
  sealBytes(bytes: Uint8Array): Uint8Array;
  openBytes(stored: Uint8Array): Uint8Array;
  /** `openText` for nullable columns. */
  openNullable(stored: string | null): string | null;
}

export const isSealedText = (stored: string): boolean => stored.startsWith(TEXT_PREFIX);

export const isSealedBytes = (stored: Uint8Array): boolean => stored[0] === SEALED_BYTE;

export const keyIdOf = (key: Uint8Array): string =>
  createHmac('sha256', key).update('weft encryption key id v1').digest('hex').slice(0, 16);

const missing = (): EncryptionError =>
  new EncryptionError(
    'ENCRYPTION_KEY_MISSING',
    'this database holds encrypted data and no encryption key is configured: set WEFT_ENCRYPTION_KEY to the key it was written with',
  );

const mismatch = (): EncryptionError =>
  new EncryptionError(
    'ENCRYPTION_KEY_MISMATCH',
    'stored data does not decrypt with the configured encryption key (AES-256-GCM authentication failed): WEFT_ENCRYPTION_KEY is not the key this database was written with, or the stored bytes were altered',
  );

/** The codec for `key`, or the identity codec (which refuses sealed values) without one. */
export function createFieldCodec(key?: Uint8Array | null): FieldCodec {
  if (key === undefined || key === null) return PLAIN_CODEC;
  if (key.length !== KEY_BYTES) {
    throw new EncryptionError(
      'ENCRYPTION_KEY_INVALID',
      `the encryption key must be ${KEY_BYTES} bytes`,
    );
  }
  const secret = Buffer.from(key);
  const seal = (plain: Buffer): Buffer => {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', secret, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]);
  };
  const open = (sealed: Buffer): Buffer => {
    if (sealed.length < IV_BYTES + TAG_BYTES) throw mismatch();
    const decipher = createDecipheriv('aes-256-gcm', secret, sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw mismatch();
    }
  };
  const openText = (stored: string) =>
    isSealedText(stored)
      ? open(Buffer.from(stored.slice(TEXT_PREFIX.length), 'base64')).toString('utf8')
      : stored;
  return {
    encrypted: true,
    keyId: keyIdOf(secret),
    sealText: (text) => TEXT_PREFIX + seal(Buffer.from(text, 'utf8')).toString('base64'),
    openText,
    sealBytes: (bytes) =>
      Buffer.concat([
        Buffer.of(SEALED_BYTE),
        seal(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
      ]),
    openBytes: (stored) =>
      isSealedBytes(stored)
        ? open(Buffer.from(stored.buffer, stored.byteOffset + 1, stored.byteLength - 1))
        : stored,
    openNullable: (stored) => (stored === null ? null : openText(stored)),
  };
}

/** No key: values are stored as they are; a sealed value read back is ENCRYPTION_KEY_MISSING. */
export const PLAIN_CODEC: FieldCodec = {
  encrypted: false,
  keyId: null,
  sealText: (text) => text,
  openText: (stored) => {
    if (isSealedText(stored)) throw missing();
    return stored;
  },
  sealBytes: (bytes) => bytes,
  openBytes: (stored) => {
    if (isSealedBytes(stored)) throw missing();
    return stored;
  },
  openNullable: (stored) => {
    if (stored !== null && isSealedText(stored)) throw missing();
    return stored;
  },
};

/**
 * Checks the database's marker against the codec, given the stored key id (null: unmarked).
 * Returns whether the marker must be written (a keyed codec on an unmarked database).
 */
export function checkKeyMarker(codec: FieldCodec, storedKeyId: string | null): boolean {
  if (storedKeyId === null) return codec.keyId !== null;
  if (codec.keyId === null) throw missing();
  if (codec.keyId !== storedKeyId) {
    throw new EncryptionError(
      'ENCRYPTION_KEY_MISMATCH',
      `this database was encrypted with another key (key id ${storedKeyId}; the configured WEFT_ENCRYPTION_KEY has id ${codec.keyId}): set the key it was written with`,
    );
  }
  return false;
}
