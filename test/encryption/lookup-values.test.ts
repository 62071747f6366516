/**
 * The codec's seals for values that are looked up (src/store/crypto): the deterministic seal
 * gives equal stored values for equal texts under one label and only then, opens to the exact
 * text, and refuses another label, key or altered bytes; the keyed digest is stable per label;
 * lookups match the plain form too; without a key all of it is the identity.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createFieldCodec, EncryptionError, PLAIN_CODEC } from '../../src/store/crypto/index.js';

const KEY = randomBytes(32);
const codec = createFieldCodec(KEY);
const TEXTS = ['', 'a', 'semantic:memory:tone', 'é ✓ 𝄞 mixed', 'x'.repeat(5000), 'wdet1:looks'];

describe('deterministic seal', () => {
  it('is stable per label, distinct across labels and texts, and opens to the exact text', () => {
    for (const text of TEXTS) {
      const sealed = codec.sealEqual('node.resource_key', text);
      expect(sealed.startsWith('wdet1:')).toBe(true);
      expect(sealed).toBe(codec.sealEqual('node.resource_key', text));
      // A fresh codec on the same key (another process) agrees.
      expect(createFieldCodec(KEY).sealEqual('node.resource_key', text)).toBe(sealed);
      expect(codec.sealEqual('run_spend.key', text)).not.toBe(sealed);
      expect(codec.openEqual('node.resource_key', sealed)).toBe(text);
      if (text.length > 8) expect(sealed).not.toContain(text);
    }
    const all = TEXTS.map((t) => codec.sealEqual('node.resource_key', t));
    expect(new Set(all).size).toBe(TEXTS.length);
    expect(codec.sealEqual('node.resource_key', 'a')).not.toBe(
      createFieldCodec(randomBytes(32)).sealEqual('node.resource_key', 'a'),
    );
  });

  it('refuses another label, another key and altered bytes with ENCRYPTION_KEY_MISMATCH', () => {
    const sealed = codec.sealEqual('resource_head.semantic_key', 'tone');
    const failures = [
      () => codec.openEqual('resource_head.semantic_type', sealed),
      () => createFieldCodec(randomBytes(32)).openEqual('resource_head.semantic_key', sealed),
      () => codec.openEqual('resource_head.semantic_key', `${sealed.slice(0, -4)}AAA=`),
      () => codec.openEqual('resource_head.semantic_key', 'wdet1:AAAA'),
    ];
    for (const fail of failures) {
      let error: unknown;
      try {
        fail();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(EncryptionError);
      expect((error as EncryptionError).code).toBe('ENCRYPTION_KEY_MISMATCH');
    }
  });

  it('reads plain values as they are and looks for both forms', () => {
    expect(codec.openEqual('node.resource_key', 'file:///a')).toBe('file:///a');
    expect(codec.equalForms('node.resource_key', 'file:///a')).toEqual([
      codec.sealEqual('node.resource_key', 'file:///a'),
      'file:///a',
    ]);
    // A text that looks sealed was never stored plain (it could not be read back as such).
    expect(codec.equalForms('node.resource_key', 'wdet1:looks')).toEqual([
      codec.sealEqual('node.resource_key', 'wdet1:looks'),
    ]);
  });
});

describe('lookup digest', () => {
  it('is a stable keyed hash per label and matches the plain form too', () => {
    const digest = codec.digest('idempotency_record.key', 'retry-1');
    expect(digest).toMatch(/^whmac1:[A-Za-z0-9_-]{43}$/);
    expect(createFieldCodec(KEY).digest('idempotency_record.key', 'retry-1')).toBe(digest);
    expect(codec.digest('idempotency_record.key', 'retry-2')).not.toBe(digest);
    expect(codec.digest('other.column', 'retry-1')).not.toBe(digest);
    expect(createFieldCodec(randomBytes(32)).digest('idempotency_record.key', 'retry-1')).not.toBe(
      digest,
    );
    expect(codec.digestForms('idempotency_record.key', 'retry-1')).toEqual([digest, 'retry-1']);
  });
});

describe('without a key', () => {
  it('stores and reads every value as it is, even one that looks sealed', () => {
    for (const text of [...TEXTS, 'wenc1:abc', 'whmac1:abc']) {
      expect(PLAIN_CODEC.sealEqual('node.resource_key', text)).toBe(text);
      expect(PLAIN_CODEC.openEqual('node.resource_key', text)).toBe(text);
      expect(PLAIN_CODEC.equalForms('node.resource_key', text)).toEqual([text]);
      expect(PLAIN_CODEC.digest('idempotency_record.key', text)).toBe(text);
      expect(PLAIN_CODEC.digestForms('idempotency_record.key', text)).toEqual([text]);
    }
  });
});
