/**
 * Encryption at rest (optional): every column that holds a value a client supplied is sealed
 * under one 32-byte key from the environment, in one of three ways:
 *
 * - free values (payloads, memory content, log entry bodies, snapshots, run goals and states,
 *   thread metadata and node types, node taint and usage, stored idempotency responses and
 *   request hashes, API key names) with AES-256-GCM under a random IV: `wenc1:` + base64(iv ‖
 *   tag ‖ ciphertext), or SEALED_BYTE + the same bytes for a packed entry;
 * - values looked up by equality and read back (resource keys, memory types and keys, the model
 *   and workflow node names of run_spend) with a deterministic seal, `sealEqual`: the IV is
 *   HMAC(subkey, label ‖ 0 ‖ text) cut to 12 bytes, so equal texts under one label give equal
 *   stored values and a lookup seals its argument and compares. See sealEqual for why this and
 *   not an HMAC column beside a sealed copy;
 * - values only compared, never read back (idempotency keys) as a keyed hash, `digest`:
 *   `whmac1:` + base64url(HMAC-SHA256(subkey, label ‖ 0 ‖ text)).
 *
 * Per-thread data keys (thread-keys.ts) seal a thread's own values the same two ways (`wenc2:`,
 * `wdet2:`), so that deleting its key shreds them.
 *
 * Labels name the column, so equal texts in two columns are unrelated. Subkeys are derived from
 * the key with HMAC-SHA256 under fixed labels; the random-IV seal uses the key itself, as before.
 * Hashes and content ids stay over the plaintext: encryption is a property of the stored bytes,
 * never of the canonical texts (readers get the exact text back).
 *
 * Values written before encryption was turned on (or before a column was covered) stay readable:
 * canonical JSON never starts with `w`, a stored value without a prefix is read as it is, and a
 * lookup matches both forms (`equalForms`, `digestForms`). A database that has held sealed data
 * is marked (the `weft_setting` row `encryption_key_id`, a fingerprint of the key — not the key):
 * opening it without the key, or with another one, fails at once.
 *
 * Without a key every function is the identity (a plain value is never inspected): nothing
 * changes and nothing is spent when encryption is off.
 *
 * Decryption is authenticated: a wrong key or altered bytes never yield garbage, only
 * ENCRYPTION_KEY_MISMATCH.
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
const EQUAL_PREFIX = 'wdet1:';
const DIGEST_PREFIX = 'whmac1:';
/** First byte of a sealed packed entry (plain ones start with 0 or 1, see packed-entry.ts). */
const SEALED_BYTE = 0xe1;
/** The prefix and first byte of values sealed under a thread's data key (thread-keys.ts). */
export const THREAD_TEXT_PREFIX = 'wenc2:';
export const THREAD_SEALED_BYTE = 0xe2;
export const THREAD_EQUAL_PREFIX = 'wdet2:';

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
  /**
   * The deterministic seal of a value that is looked up by equality (`label`: its column):
   * equal texts give equal stored values. The identity without a key.
   */
  sealEqual(label: string, text: string): string;
  /** Opens `sealEqual`'s value (a value without its prefix is returned as is). */
  openEqual(label: string, stored: string): string;
  /**
   * The stored values a lookup of `text` must match: its seal and, for rows written before the
   * column was sealed, the text itself (unless it looks sealed: no plain value can, see
   * openEqual). `[text]` without a key.
   */
  equalForms(label: string, text: string): string[];
  /** Keyed hash of a value that is compared and never read back. The identity without a key. */
  digest(label: string, text: string): string;
  /** The stored values a lookup of `text` must match: its digest and the text itself. */
  digestForms(label: string, text: string): string[];
  /**
   * The per-thread data keys of a store's codec (thread-keys.ts): thread-owned rows are opened
   * with `threads.forThread(row's thread)` after `threads.load`. Absent on a bare codec.
   */
  readonly threads?: ThreadKeyring | undefined;
}

/** Where the codecs of threads' rows come from (see thread-keys.ts). */
export interface ThreadKeyring {
  /** Makes the data keys of these threads available to `forThread` (a query for those not cached). */
  load(threadIds: Iterable<string>): Promise<void>;
  /** The codec of rows stored under this thread's storage key; `load` it first. */
  forThread(threadId: string): FieldCodec;
}

/** The codec's keyring; for a codec without per-thread keys, one that always gives the codec. */
export const keyringOf = (codec: FieldCodec): ThreadKeyring =>
  codec.threads ?? { load: async () => undefined, forThread: () => codec };

/** Sealed under the key itself (`wenc1:`) or under a thread's data key (`wenc2:`, thread-keys.ts). */
export const isSealedText = (stored: string): boolean =>
  stored.startsWith(TEXT_PREFIX) || stored.startsWith(THREAD_TEXT_PREFIX);

export const isSealedBytes = (stored: Uint8Array): boolean =>
  stored[0] === SEALED_BYTE || stored[0] === THREAD_SEALED_BYTE;

/** Sealed deterministically under the key (`wdet1:`) or a thread's data key (`wdet2:`). */
export const isSealedEqual = (stored: string): boolean =>
  stored.startsWith(EQUAL_PREFIX) || stored.startsWith(THREAD_EQUAL_PREFIX);

export const keyIdOf = (key: Uint8Array): string =>
  createHmac('sha256', key).update('weft encryption key id v1').digest('hex').slice(0, 16);

/** A subkey of `key` for one purpose (HMAC-SHA256 under a fixed label: HKDF-Expand, one block). */
export const subkey = (key: Uint8Array, purpose: string): Buffer =>
  createHmac('sha256', key).update(`weft subkey v1: ${purpose}`).digest();

/** `label ‖ 0 ‖ text`: labels never contain NUL, so no two (label, text) pairs share it. */
const labelled = (label: string, text: string): Buffer =>
  Buffer.concat([Buffer.from(label, 'utf8'), Buffer.of(0), Buffer.from(text, 'utf8')]);

/**
 * The deterministic seal under `equalKey` (see createFieldCodec), written with `prefix`; a value
 * with another prefix is returned as it is by `open`. `fail`: the error of a value that does
 * not open.
 */
export function deterministicSeal(
  equalKey: Uint8Array,
  ivKey: Uint8Array,
  prefix: string,
  fail: () => EncryptionError,
) {
  const sealEqual = (label: string, text: string): string => {
    const plain = Buffer.from(text, 'utf8');
    const iv = createHmac('sha256', ivKey)
      .update(labelled(label, text))
      .digest()
      .subarray(0, IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', equalKey, iv);
    cipher.setAAD(Buffer.from(label, 'utf8'));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return prefix + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  };
  const openEqual = (label: string, stored: string): string => {
    if (!stored.startsWith(prefix)) return stored;
    const sealed = Buffer.from(stored.slice(prefix.length), 'base64');
    if (sealed.length < IV_BYTES + TAG_BYTES) throw fail();
    const decipher = createDecipheriv('aes-256-gcm', equalKey, sealed.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(label, 'utf8'));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw fail();
    }
  };
  return { sealEqual, openEqual };
}

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

/** A value sealed under a thread's data key, read without it (thread-keys.ts). */
export const threadSealed = (): EncryptionError =>
  new EncryptionError(
    'ENCRYPTION_KEY_MISMATCH',
    "stored data is sealed under a thread's data key, which is not available: the thread was deleted (its key destroyed) or the value was read outside its thread",
  );

/** AES-256-GCM under a random IV: iv ‖ tag ‖ ciphertext (`aad`: associated data, if any). */
export function gcmSeal(key: Uint8Array, plain: Buffer, aad?: Buffer): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== undefined) cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** Opens what gcmSeal sealed; `fail()` is thrown for anything that does not authenticate. */
export function gcmOpen(key: Uint8Array, sealed: Buffer, fail: () => Error, aad?: Buffer): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw fail();
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  if (aad !== undefined) decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    throw fail();
  }
}

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
  const seal = (plain: Buffer): Buffer => gcmSeal(secret, plain);
  const open = (sealed: Buffer): Buffer => gcmOpen(secret, sealed, mismatch);
  const openText = (stored: string) => {
    if (stored.startsWith(TEXT_PREFIX)) {
      return open(Buffer.from(stored.slice(TEXT_PREFIX.length), 'base64')).toString('utf8');
    }
    if (stored.startsWith(THREAD_TEXT_PREFIX)) throw threadSealed();
    return stored;
  };

  // Deterministic seal (SIV-style: the IV is a MAC of the plaintext). Chosen over an HMAC
  // column beside a random-IV copy because it leaks the same thing — which stored values are
  // equal — while keeping one column: keys stay primary keys and unique constraints as they
  // are (no migration, no second index, no copy to keep in step), and a lookup is one sealed
  // argument. Its own subkeys keep these IVs apart from the random ones under the main key, and
  // the label is the GCM associated data, so a value moved to another column does not open.
  // Two distinct texts get the same IV only on a 96-bit HMAC collision (about 2^48 values of
  // one label before that is likely).
  const { sealEqual, openEqual } = deterministicSeal(
    subkey(secret, 'deterministic encryption'),
    subkey(secret, 'synthetic iv'),
    EQUAL_PREFIX,
    mismatch,
  );
  const digestKey = subkey(secret, 'lookup digest');
  const digest = (label: string, text: string): string =>
    DIGEST_PREFIX +
    createHmac('sha256', digestKey).update(labelled(label, text)).digest('base64url');
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
    openBytes: (stored) => {
      if (stored[0] === THREAD_SEALED_BYTE) throw threadSealed();
      return stored[0] === SEALED_BYTE
        ? open(Buffer.from(stored.buffer, stored.byteOffset + 1, stored.byteLength - 1))
        : stored;
    },
    openNullable: (stored) => (stored === null ? null : openText(stored)),
    sealEqual,
    openEqual: (label, stored) => {
      if (stored.startsWith(THREAD_EQUAL_PREFIX)) throw threadSealed();
      return openEqual(label, stored);
    },
    // A plain value that looks sealed would not read back (openEqual would try to open it), so
    // it is not looked for either.
    equalForms: (label, text) =>
      isSealedEqual(text) ? [sealEqual(label, text)] : [sealEqual(label, text), text],
    digest,
    digestForms: (label, text) => [digest(label, text), text],
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
  // Keys and names are any text (one may start with `wdet1:`), so they are never inspected here:
  // the database's marker (checkKeyMarker) is what refuses a sealed database without its key.
  sealEqual: (_label, text) => text,
  openEqual: (_label, stored) => stored,
  equalForms: (_label, text) => [text],
  digest: (_label, text) => text,
  digestForms: (_label, text) => [text],
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
