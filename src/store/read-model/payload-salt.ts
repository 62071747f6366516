/**
 * A salted thread's secret (thread.payload_salt; src/engine/payload-salts.ts), sealed like the
 * thread's metadata under its data key. Kept off the thread views: only the engine reads it.
 */
import { type FieldCodec, keyringOf } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import { thread } from '../tables/index.js';
import { selectRows } from './select.js';

/** The live thread's secret (hex), opened; null when it has none; undefined for an unknown or deleted thread. */
export async function readPayloadSalt(
  weft: WeftPrisma,
  codec: FieldCodec,
  threadId: string,
): Promise<string | null | undefined> {
  const [row] = await selectRows(
    weft,
    thread,
    `${thread.c.id} = ? AND ${thread.c.deletedAt} IS NULL`,
    [threadId],
    '',
    ['payloadSalt'],
  );
  const stored = row?.payloadSalt as string | null | undefined;
  if (stored == null || !codec.encrypted) return stored;
  const keys = keyringOf(codec);
  await keys.load([threadId]);
  return keys.forThread(threadId).openText(stored);
}
