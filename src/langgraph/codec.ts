/**
 * How channel values, metadata and writes are kept in a checkpoint entry: each value as the
 * saver's serializer typed it, JSON text kept as text (so a value reads back byte for byte) and
 * anything else as base64, addressed by a hash of that content.
 */
import { createHash } from 'node:crypto';
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { fastLoad, isDefaultSerializer, NEEDS_SERIALIZER } from './revive.js';

/** A serialized value: `s` for text (the serializer's `json`), `b` for base64 bytes otherwise. */
export type Encoded = { t: string; s: string } | { t: string; b: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function encode(serde: SerializerProtocol, value: unknown): Promise<Encoded> {
  const [type, bytes] = await serde.dumpsTyped(value);
  if (type === 'json') {
    try {
      return { t: type, s: typeof bytes === 'string' ? bytes : utf8.decode(bytes) };
    } catch {
      // Not valid UTF-8 after all: kept as bytes below.
    }
  }
  return { t: type, b: Buffer.from(bytes).toString('base64') };
}

export function decode(serde: SerializerProtocol, encoded: Encoded): Promise<unknown> {
  if ('s' in encoded && encoded.t === 'json' && isDefaultSerializer(serde)) {
    const value = fastLoad(encoded.s);
    if (value !== NEEDS_SERIALIZER) return Promise.resolve(value);
  }
  return 's' in encoded
    ? serde.loadsTyped(encoded.t, encoded.s)
    : serde.loadsTyped(encoded.t, new Uint8Array(Buffer.from(encoded.b, 'base64')));
}

/** The content address of an encoded value (type and content; 24 hex digits, like node ids). */
export function contentHash(encoded: Encoded): string {
  const body = 's' in encoded ? `s${encoded.s}` : `b${encoded.b}`;
  return createHash('sha256').update(`${encoded.t}\n${body}`).digest('hex').slice(0, 24);
}

export function isEncoded(value: unknown): value is Encoded {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.t === 'string' && (typeof v.s === 'string' || typeof v.b === 'string');
}
