/**
 * Per-thread data keys (crypto-shredding): each thread created under a key gets a random 32-byte
 * data key, stored only wrapped — sealed with AES-256-GCM under a subkey of the key, bound to the
 * thread's storage key — in `thread_key`. The thread's free values (log entries, node payloads,
 * taint and usage, snapshots, run goals and states, approvals, thread metadata and node types)
 * are sealed under that data key: `wenc2:` + base64(iv ‖ tag ‖ ciphertext), or
 * THREAD_SEALED_BYTE + the same bytes for a packed entry, with the thread's storage key as
 * associated data (a value moved to another thread's row does not open). When the last row a
 * data key seals is removed, its `thread_key` row goes in the same transaction, and every copy
 * of those values left anywhere (freed pages, WAL, dead tuples, a lagging replica, a shipped
 * log) no longer opens with the key alone.
 *
 * Values looked up by equality within the thread (resource keys, memory types and keys, spend
 * keys) are sealed deterministically under subkeys of the data key (`wdet2:`). Digests
 * (idempotency keys) and everything not owned by one thread stay under the key's own subkeys.
 * `wenc1:` and plain values keep reading: a thread codec opens them with the key's codec.
 */
import { createHmac, randomBytes } from 'node:crypto';
import {
  deterministicSeal,
  type FieldCodec,
  gcmOpen,
  gcmSeal,
  isSealedEqual,
  subkey,
  THREAD_EQUAL_PREFIX,
  THREAD_SEALED_BYTE,
  THREAD_TEXT_PREFIX,
  threadSealed,
} from './index.js';

const DATA_KEY_BYTES = 32;
const WRAP_PREFIX = 'wkey1:';

const seal = (key: Uint8Array, aad: Buffer, plain: Buffer): Buffer => gcmSeal(key, plain, aad);
const open = (key: Uint8Array, aad: Buffer, sealed: Buffer): Buffer =>
  gcmOpen(key, sealed, threadSealed, aad);

const wrapAad = (threadId: string) => Buffer.from(`weft thread key v1\0${threadId}`, 'utf8');
const valueAad = (threadId: string) => Buffer.from(`weft thread value v1\0${threadId}`, 'utf8');

/** Wraps and unwraps thread data keys under a subkey of the encryption key. */
export interface KeyWrap {
  /** A fresh random data key. */
  newDataKey(): Buffer;
  wrap(threadId: string, dataKey: Uint8Array): string;
  /** Throws ENCRYPTION_KEY_MISMATCH for a wrapped key of another key or thread, or altered. */
  unwrap(threadId: string, wrapped: string): Buffer;
}

export function createKeyWrap(key: Uint8Array): KeyWrap {
  // A subkey of its own: the key's random-IV seal never shares a key with the wrapping.
  const wrapKey = createHmac('sha256', key).update('weft subkey v1: thread key wrap').digest();
  return {
    newDataKey: () => randomBytes(DATA_KEY_BYTES),
    wrap: (threadId, dataKey) =>
      WRAP_PREFIX + seal(wrapKey, wrapAad(threadId), Buffer.from(dataKey)).toString('base64'),
    unwrap(threadId, wrapped) {
      if (!wrapped.startsWith(WRAP_PREFIX)) throw threadSealed();
      const dataKey = open(
        wrapKey,
        wrapAad(threadId),
        Buffer.from(wrapped.slice(WRAP_PREFIX.length), 'base64'),
      );
      if (dataKey.length !== DATA_KEY_BYTES) throw threadSealed();
      return dataKey;
    },
  };
}

/**
 * The codec of one thread's rows: free values sealed under its data key (`wenc2:`), every other
 * form opened by `base` (the key's codec), lookups and digests left to `base`. Without a data
 * key (`null`: the thread has none, as threads created before per-thread keys) it seals with
 * `base` and refuses `wenc2:` values (ENCRYPTION_KEY_MISMATCH: their key is gone).
 */
export function threadCodec(
  base: FieldCodec,
  threadId: string,
  dataKey: Uint8Array | null,
): FieldCodec {
  if (!base.encrypted || dataKey === null) return base;
  const aad = valueAad(threadId);
  const openText = (stored: string): string => {
    if (!stored.startsWith(THREAD_TEXT_PREFIX)) return base.openText(stored);
    return open(
      dataKey,
      aad,
      Buffer.from(stored.slice(THREAD_TEXT_PREFIX.length), 'base64'),
    ).toString('utf8');
  };
  // Lookups within the thread (resource keys, memory types and keys, spend keys) under subkeys of
  // the data key, so they are shredded with it; the thread's storage key in the label keeps
  // them from opening in another thread's row.
  const equal = deterministicSeal(
    subkey(dataKey, `deterministic encryption\0${threadId}`),
    subkey(dataKey, `synthetic iv\0${threadId}`),
    THREAD_EQUAL_PREFIX,
    threadSealed,
  );
  const sealEqual = equal.sealEqual;
  return {
    ...base,
    sealEqual,
    openEqual: (label, stored) =>
      stored.startsWith(THREAD_EQUAL_PREFIX)
        ? equal.openEqual(label, stored)
        : base.openEqual(label, stored),
    // Every row of a thread with a data key was written with it: no `wdet1:` form to look for
    // (and two forms keep a chunk of 400 keys under SQLite's 999 bound values).
    equalForms: (label, text) =>
      isSealedEqual(text) ? [sealEqual(label, text)] : [sealEqual(label, text), text],
    sealText: (text) =>
      THREAD_TEXT_PREFIX + seal(dataKey, aad, Buffer.from(text, 'utf8')).toString('base64'),
    openText,
    openNullable: (stored) => (stored === null ? null : openText(stored)),
    sealBytes: (bytes) =>
      Buffer.concat([
        Buffer.of(THREAD_SEALED_BYTE),
        seal(dataKey, aad, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)),
      ]),
    openBytes: (stored) =>
      stored[0] === THREAD_SEALED_BYTE
        ? open(
            dataKey,
            aad,
            Buffer.from(stored.buffer, stored.byteOffset + 1, stored.byteLength - 1),
          )
        : base.openBytes(stored),
  };
}
